package nodeagent

import "testing"

func TestFabricIP(t *testing.T) {
	for _, c := range []struct {
		subnet string
		host   int
		want   string
	}{
		{"10.78.0.0/24", 1, "10.78.0.1"},
		{"10.78.0.0/24", 254, "10.78.0.254"},
		{"10.78.4.0/22", 254, "10.78.4.254"},
		{"192.168.0.128/25", 3, "192.168.0.131"},
	} {
		if got, err := fabricIP(c.subnet, c.host); err != nil || got != c.want {
			t.Errorf("%s host %d: %q %v, want %s", c.subnet, c.host, got, err, c.want)
		}
	}
	for _, c := range []struct {
		subnet string
		host   int
	}{{"10.78.0.0/25", 200}, {"2001:db8::/64", 1}, {"x", 1}} {
		if got, err := fabricIP(c.subnet, c.host); err == nil {
			t.Errorf("%s host %d: %q, want an error", c.subnet, c.host, got)
		}
	}
}

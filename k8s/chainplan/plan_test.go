package chainplan

import (
	"strings"
	"testing"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

// Two nodes: a monitor on node 1, a forwarder on both, a DPI on node 2;
// a client pod on node 1's port znapp0 (id 3), a server on node 2's
// znapp1 (id 4); port 2 is each node's fabric.
func world() *World {
	ports := map[string]int{"in": 0, "out": 1, "fabric": 2, "znapp0": 3, "znapp1": 4}
	return &World{
		Nodes: map[string]*Node{
			"n1": {Name: "n1", HostID: 1, Ports: ports, Pods: map[string]string{"apps/cli": "znapp0"}},
			"n2": {Name: "n2", HostID: 2, Ports: ports, Pods: map[string]string{"apps/srv": "znapp1"}},
		},
		NFs: map[string]*NF{
			"apps/mon": {ServiceID: 10, Nodes: map[string]bool{"n1": true}},
			"apps/fwd": {ServiceID: 11, Nodes: map[string]bool{"n1": true, "n2": true}},
			"apps/dpi": {ServiceID: 12, Nodes: map[string]bool{"n2": true}},
			"apps/off": {ServiceID: 13, Nodes: map[string]bool{}},
		},
	}
}

func nfs(names ...string) []zv1.Hop {
	var hs []zv1.Hop
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "pod/"):
			hs = append(hs, zv1.Hop{Pod: n[4:]})
		case strings.HasPrefix(n, "port/"):
			hs = append(hs, zv1.Hop{Port: zv1.PortName(n[5:])})
		case n == "drop":
			hs = append(hs, zv1.Hop{Drop: true})
		default:
			hs = append(hs, zv1.Hop{NetworkFunction: n})
		}
	}
	return hs
}

func chain(name string, pathID int, spec zv1.ServiceChainSpec) Chain {
	return Chain{Namespace: "apps", Name: name, Generation: 1, PathID: pathID, Spec: spec}
}

func TestAChainAcrossNodesBothWays(t *testing.T) {
	w := world()
	w.Chains = []Chain{
		chain("c2s", 1, zv1.ServiceChainSpec{FromPod: "cli", Hops: nfs("mon", "fwd", "dpi", "pod/srv")}),
		chain("s2c", 2, zv1.ServiceChainSpec{FromPod: "srv", Hops: nfs("dpi", "fwd", "mon", "pod/cli")}),
	}
	p1, p2 := Make(w, "n1"), Make(w, "n2")
	// c2s enters on n1 (path 1*256+1), s2c on n2 (2*256+2); each node
	// has both paths as it sees them
	want1 := "default []; port 3 [svc:10 svc:11 svc:12@2 port:4@2]; " +
		"path 257 [svc:10 svc:11 svc:12@2 port:4@2]; path 514 [svc:12@2 svc:11@2 svc:10 port:3];"
	want2 := "default []; port 4 [svc:12 svc:11 svc:10@1 port:3@1]; " +
		"path 257 [svc:10@1 svc:11@1 svc:12 port:4]; path 514 [svc:12 svc:11 svc:10@1 port:3@1];"
	if p1.String() != want1 {
		t.Errorf("n1:\n got %s\nwant %s", p1, want1)
	}
	if p2.String() != want2 {
		t.Errorf("n2:\n got %s\nwant %s", p2, want2)
	}
	for _, p := range []*Plan{p1, p2} {
		if p.Errors["apps/c2s"] != "" || p.Errors["apps/s2c"] != "" {
			t.Errorf("errors: %v", p.Errors)
		}
	}
}

func TestLocalChainsNeedNoPath(t *testing.T) {
	w := world()
	w.Chains = []Chain{
		chain("in", 0, zv1.ServiceChainSpec{From: "in", Hops: nfs("fwd", "port/out")}),
		chain("def", 0, zv1.ServiceChainSpec{Hops: nfs("fwd", "drop")}),
	}
	if got, want := Make(w, "n2").String(), "default [svc:11 drop]; port 0 [svc:11 port:1];"; got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}

func TestWhatCannotBeIsSaid(t *testing.T) {
	w := world()
	w.Chains = []Chain{
		chain("a", 0, zv1.ServiceChainSpec{From: "in", Hops: nfs("fwd")}),
		chain("b", 0, zv1.ServiceChainSpec{From: "in", Hops: nfs("fwd", "drop")}),
		chain("c", 0, zv1.ServiceChainSpec{FromPod: "cli", Hops: nfs("dpi")}),
		chain("d", 0, zv1.ServiceChainSpec{FromPod: "nobody", Hops: nfs("dpi")}),
		chain("e", 0, zv1.ServiceChainSpec{From: "in", Hops: nfs("nosuch")}),
		chain("f", 0, zv1.ServiceChainSpec{From: "nosuch", Hops: nfs("fwd")}),
		chain("g", 0, zv1.ServiceChainSpec{Hops: nfs("off", "port/nosuch")}),
	}
	p := Make(w, "n1")
	want := map[string]string{
		"apps/a": "",
		"apps/b": "port 0's chain is ServiceChain apps/a's",
		"apps/c": "crosses nodes: waiting for its path id (the operator's)",
		"apps/d": `pod "nobody" is on no ZeroNF port`,
		"apps/e": `hop 0: no NetworkFunction "nosuch"`,
		"apps/f": `no node has port "nosuch"`,
		"apps/g": `hop 1: node n1 has no port "nosuch"`,
	}
	for k, v := range want {
		if p.Errors[k] != v {
			t.Errorf("%s: %q, want %q", k, p.Errors[k], v)
		}
	}
	// an NF with no pod yet stays on the node (its packets count as
	// no_instance there until one runs)
	w.Chains = []Chain{chain("h", 0, zv1.ServiceChainSpec{From: "in", Hops: nfs("off", "port/out")})}
	if got := Make(w, "n1").PortChains[0]; strings.Join(got, " ") != "svc:13 port:1" {
		t.Fatalf("%v", got)
	}
}

func TestRulesOnEveryNode(t *testing.T) {
	w := world()
	w.Chains = []Chain{chain("web", 3, zv1.ServiceChainSpec{Hops: nfs("dpi", "port/out"),
		Rules: []zv1.Rule{{Match: zv1.Match{Proto: "tcp", Dport: "80", Dst: "10.0.0.0/8"}, Priority: 10}}})}
	p1, p2 := Make(w, "n1"), Make(w, "n2")
	if len(p1.Rules) != 1 || strings.Join(p1.Rules[0].Hops, " ") != "svc:12@2 port:1@2" ||
		p1.Rules[0].Match["dport"] != 80 || p1.Rules[0].Match["proto"] != "tcp" {
		t.Fatalf("n1: %s", p1)
	}
	if len(p2.Rules) != 1 || strings.Join(p2.Rules[0].Hops, " ") != "svc:12 port:1" {
		t.Fatalf("n2: %s", p2)
	}
	// n1's packets cross to n2 on path 3*256+1: n2 has it too
	if strings.Join(p2.Paths[769], " ") != "svc:12 port:1" || p1.Default != nil {
		t.Fatalf("n2: %s", p2)
	}
}

// An active reaction's NetworkFunction is a hop right after its After's
// (or first; one whose After is no hop is left out), and it crosses
// nodes as any hop: dpi (n2 only) put after mon takes the packet to n2,
// where fwd, the next hop, then runs too.
func TestActiveReactionsAreHops(t *testing.T) {
	w := world()
	spec := zv1.ServiceChainSpec{From: "in", Hops: nfs("mon", "fwd", "port/out"),
		Reactions: []zv1.Reaction{
			{Name: "deep", Insert: zv1.ReactionInsert{NetworkFunction: "dpi", After: "mon"}},
			{Name: "first", Insert: zv1.ReactionInsert{NetworkFunction: "fwd"}},
			{Name: "lost", Insert: zv1.ReactionInsert{NetworkFunction: "dpi", After: "nothere"}},
		}}
	c := chain("r", 3, spec)
	w.Chains = []Chain{c}
	if got, want := Make(w, "n1").String(), "default []; port 0 [svc:10 svc:11 port:1]; "+
		"path 770 [svc:10 svc:11 port:1];"; got != want {
		t.Fatalf("none active:\n got %s\nwant %s", got, want)
	}
	c.Active = []string{"deep", "first", "lost"}
	w.Chains = []Chain{c}
	if got, want := fmtHops(c.Hops()), "fwd mon dpi fwd port/out"; got != want {
		t.Fatalf("hops %s, want %s", got, want)
	}
	want := "default []; port 0 [svc:11 svc:10 svc:12@2 svc:11@2 port:1@2]; " +
		"path 769 [svc:11 svc:10 svc:12@2 svc:11@2 port:1@2]; " +
		"path 770 [svc:11@2 svc:10 svc:12@2 svc:11@2 port:1@2];"
	if got := Make(w, "n1").String(); got != want {
		t.Fatalf("active:\n got %s\nwant %s", got, want)
	}
	if c.Spec.Hops[0].NetworkFunction != "mon" || len(c.Spec.Hops) != 3 {
		t.Fatalf("the spec's hops changed: %v", c.Spec.Hops)
	}
}

func fmtHops(hs []zv1.Hop) string {
	var out []string
	for _, h := range hs {
		switch {
		case h.NetworkFunction != "":
			out = append(out, h.NetworkFunction)
		case h.Port != "":
			out = append(out, "port/"+string(h.Port))
		default:
			out = append(out, "?")
		}
	}
	return strings.Join(out, " ")
}

// A ServiceChain of a tenant's namespace is the tenant's chain on each
// node whose hops are all there; elsewhere, and in any other form, it is
// refused saying why.
func TestTenantChains(t *testing.T) {
	w := world()
	w.Tenants = map[string]bool{"red": true}
	w.NFs["red/rfw"] = &NF{ServiceID: 40, Nodes: map[string]bool{"n1": true, "n2": true}}
	w.NFs["red/rmon"] = &NF{ServiceID: 41, Nodes: map[string]bool{"n1": true}}
	red := func(name string, spec zv1.ServiceChainSpec) Chain {
		c := chain(name, 0, spec)
		c.Namespace = "red"
		return c
	}
	w.Chains = []Chain{
		red("main", zv1.ServiceChainSpec{Hops: nfs("rfw", "port/znapp1")}),
		red("second", zv1.ServiceChainSpec{Hops: nfs("rfw")}),
		red("ported", zv1.ServiceChainSpec{From: "in", Hops: nfs("rfw")}),
		chain("def", 0, zv1.ServiceChainSpec{Hops: nfs("fwd")}),
	}
	p1 := Make(w, "n1")
	if got, want := p1.String(), "default [svc:11]; tenant red [svc:40 port:4];"; got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	for k, want := range map[string]string{
		"red/main":   "",
		"red/second": "tenant red's chain is ServiceChain red/main's",
		"red/ported": "a tenant's ServiceChain is its chain (what its slices receive): leave from, fromPod and rules out",
		"apps/def":   "",
	} {
		if p1.Errors[k] != want {
			t.Errorf("%s: %q, want %q", k, p1.Errors[k], want)
		}
	}
	w.Chains = []Chain{red("mon", zv1.ServiceChainSpec{Hops: nfs("rfw", "rmon")})}
	if got := Make(w, "n1").String(); got != "default []; tenant red [svc:40 svc:41];" {
		t.Fatalf("n1: %s", got)
	}
	p2 := Make(w, "n2")
	if len(p2.TenantChains) != 0 || len(p2.Paths) != 0 ||
		p2.Errors["red/mon"] != "hop 1: NetworkFunction rmon has no pod on this node (a tenant's chain stays on its node)" {
		t.Fatalf("n2: %s %v", p2, p2.Errors)
	}
}

package cni

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/vishvananda/netlink"
)

// The plugin as a runtime runs it: its binary, by libcni (what containerd
// calls), in real network namespaces: a node's, with the pool, and pods'.
// Debian's static IPAM plugin (containernetworking-plugins) gives the
// addresses.

const ipamDir = "/usr/lib/cni"

type rig struct {
	t     *testing.T
	node  ns.NetNS
	state string
	cni   *libcni.CNIConfig
	podNS string // the pods' namespace (K8S_POD_NAMESPACE)
}

func newRig(t *testing.T, pairs int) *rig {
	return newOwnedRig(t, pairs, nil)
}

// newOwnedRig: a pool of pairs, some given to one namespace (owners).
func newOwnedRig(t *testing.T, pairs int, owners map[string]string) *rig {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root (make test runs as root)")
	}
	if _, err := os.Stat(filepath.Join(ipamDir, "static")); err != nil {
		t.Fatalf("%s/static: %v (scripts/setup.sh installs containernetworking-plugins)", ipamDir, err)
	}
	bin := t.TempDir()
	b, err := exec.Command("go", "build", "-o", filepath.Join(bin, "zeronf"),
		"zeronf.dev/k8s/cmd/zeronf-cni").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	node := newNS(t)
	r := &rig{t: t, node: node, state: t.TempDir(), podNS: "apps",
		cni: libcni.NewCNIConfigWithCacheDir([]string{bin, ipamDir}, t.TempDir(), nil)}
	r.in(func() error { return EnsurePool("zt", pairs, 1500, r.state, owners) })
	return r
}

func newNS(t *testing.T) ns.NetNS {
	n, err := testutils.NewNS()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close(); _ = testutils.UnmountNS(n) })
	return n
}

// in runs f in the node's namespace (where the runtime runs plugins).
func (r *rig) in(f func() error) {
	r.t.Helper()
	if err := r.node.Do(func(ns.NetNS) error { return f() }); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) conf(addr string) *libcni.NetworkConfigList {
	r.t.Helper()
	c := fmt.Sprintf(`{"cniVersion": "1.0.0", "name": "zeronf", "plugins": [
	  {"type": "zeronf", "pool": "zt", "stateDir": %q,
	   "ipam": {"type": "static", "addresses": [{"address": %q}]}}]}`, r.state, addr)
	l, err := libcni.ConfListFromBytes([]byte(c))
	if err != nil {
		r.t.Fatal(err)
	}
	return l
}

func (r *rig) rt(id string, pod ns.NetNS) *libcni.RuntimeConf {
	return &libcni.RuntimeConf{ContainerID: id, NetNS: pod.Path(), IfName: "net1",
		Args: [][2]string{{"IgnoreUnknown", "1"}, {"K8S_POD_NAMESPACE", r.podNS}, {"K8S_POD_NAME", "pod-" + id}}}
}

func (r *rig) add(id string, pod ns.NetNS, addr string) (*current.Result, error) {
	var res *current.Result
	err := r.node.Do(func(ns.NetNS) error {
		x, err := r.cni.AddNetworkList(context.Background(), r.conf(addr), r.rt(id, pod))
		if err != nil {
			return err
		}
		res, err = current.NewResultFromResult(x)
		return err
	})
	return res, err
}

func (r *rig) del(id string, pod ns.NetNS, addr string) error {
	return r.node.Do(func(ns.NetNS) error {
		return r.cni.DelNetworkList(context.Background(), r.conf(addr), r.rt(id, pod))
	})
}

func (r *rig) check(id string, pod ns.NetNS, addr string) error {
	return r.node.Do(func(ns.NetNS) error {
		return r.cni.CheckNetworkList(context.Background(), r.conf(addr), r.rt(id, pod))
	})
}

// links: the names of n's links.
func links(t *testing.T, n ns.NetNS) map[string]netlink.Link {
	t.Helper()
	out := map[string]netlink.Link{}
	if err := n.Do(func(ns.NetNS) error {
		ls, err := netlinksafe.LinkList()
		for _, l := range ls {
			out[l.Attrs().Name] = l
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAddCheckDel(t *testing.T) {
	r := newRig(t, 2)
	pod := newNS(t)
	res, err := r.add("c1", pod, "10.9.0.2/24")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interfaces) != 1 || res.Interfaces[0].Name != "net1" ||
		res.Interfaces[0].Sandbox != pod.Path() || len(res.IPs) != 1 ||
		res.IPs[0].Address.String() != "10.9.0.2/24" || *res.IPs[0].Interface != 0 {
		t.Fatalf("result: %+v", res)
	}
	l := links(t, pod)["net1"]
	if l == nil || l.Attrs().Alias != "zt0-pod" || l.Attrs().Flags&net.FlagUp == 0 ||
		l.Attrs().HardwareAddr.String() != res.Interfaces[0].Mac {
		t.Fatalf("net1 in the pod: %+v", l)
	}
	if err := pod.Do(func(ns.NetNS) error {
		a, err := netlinksafe.AddrList(l, netlink.FAMILY_V4)
		if err == nil && (len(a) != 1 || a[0].IPNet.String() != "10.9.0.2/24") {
			err = fmt.Errorf("addresses %v", a)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	nl := links(t, r.node)
	if nl["zt0-pod"] != nil || nl["zt1-pod"] == nil || nl["zt0"] == nil {
		t.Fatalf("node's links: %v", keys(nl))
	}
	recs, _ := Attachments(r.state)
	if len(recs) != 1 || recs[0].Port != "zt0" || recs[0].Pod != "pod-c1" ||
		recs[0].Namespace != "apps" || recs[0].IPs[0] != "10.9.0.2/24" {
		t.Fatalf("records: %+v", recs)
	}

	// the pod's packets reach the manager's end
	before := links(t, r.node)["zt0"].Attrs().Statistics.RxPackets
	_ = pod.Do(func(ns.NetNS) error {
		c, err := net.DialTimeout("udp", "10.9.0.9:9", 0)
		if err == nil {
			_, _ = c.Write([]byte("x")) // an ARP request leaves first
			c.Close()
		}
		return nil
	})
	if after := links(t, r.node)["zt0"].Attrs().Statistics.RxPackets; after <= before {
		t.Fatalf("the manager's end received nothing (%d -> %d)", before, after)
	}

	// its checksums made by the pod's kernel (the manager's port passes
	// packets on as they are)
	if err := pod.Do(func(ns.NetNS) error {
		on, err := txChecksum("net1")
		if err == nil && on {
			err = fmt.Errorf("net1 offloads TX checksums")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.check("c1", pod, "10.9.0.2/24"); err != nil {
		t.Fatalf("CHECK: %v", err)
	}
	_ = pod.Do(func(ns.NetNS) error { return netlink.LinkSetDown(l) })
	if err := r.check("c1", pod, "10.9.0.2/24"); err == nil ||
		!strings.Contains(err.Error(), "net1 is down") {
		t.Fatalf("CHECK of a downed net1: %v", err)
	}

	if err := r.del("c1", pod, "10.9.0.2/24"); err != nil {
		t.Fatal(err)
	}
	if pl := links(t, pod); pl["net1"] != nil {
		t.Fatalf("net1 still in the pod")
	}
	back := links(t, r.node)["zt0-pod"]
	if back == nil || back.Attrs().Flags&net.FlagUp != 0 {
		t.Fatalf("zt0-pod not back, down: %+v", back)
	}
	if err := r.node.Do(func(ns.NetNS) error {
		a, _ := netlinksafe.AddrList(back, netlink.FAMILY_ALL)
		if len(a) != 0 {
			return fmt.Errorf("addresses left on zt0-pod: %v", a)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if recs, _ := Attachments(r.state); len(recs) != 0 {
		t.Fatalf("records left: %+v", recs)
	}
	if err := r.del("c1", pod, "10.9.0.2/24"); err != nil {
		t.Fatalf("a second DEL: %v", err)
	}
}

func TestPoolExhaustedAndRemoved(t *testing.T) {
	r := newRig(t, 2)
	p1, p2, p3 := newNS(t), newNS(t), newNS(t)
	if _, err := r.add("a", p1, "10.9.0.2/24"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.add("b", p2, "10.9.0.3/24"); err != nil {
		t.Fatal(err)
	}
	_, err := r.add("c", p3, "10.9.0.4/24")
	if err == nil || !strings.Contains(err.Error(), `every pair of pool "zt" that namespace "apps" may have is in a pod`) {
		t.Fatalf("a third pod on a pool of 2: %v", err)
	}
	if links(t, p3)["net1"] != nil {
		t.Fatal("the refused pod has net1")
	}
	// the node agent leaves: free pairs go now, the pods' at their DEL
	var inPods int
	r.in(func() (err error) { inPods, err = RemovePool("zt", r.state); return err })
	if inPods != 2 {
		t.Fatalf("in pods: %d", inPods)
	}
	if err := r.del("a", p1, "10.9.0.2/24"); err != nil {
		t.Fatal(err)
	}
	// b's namespace goes before its DEL: the pair dies with it
	p2.Close()
	_ = testutils.UnmountNS(p2)
	if err := r.del("b", p2, "10.9.0.3/24"); err != nil {
		t.Fatalf("DEL after the namespace went: %v", err)
	}
	for name := range links(t, r.node) {
		if strings.HasPrefix(name, "zt") {
			t.Errorf("left on the node: %s", name)
		}
	}
	if recs, _ := Attachments(r.state); len(recs) != 0 {
		t.Fatalf("records left: %+v", recs)
	}
	_, err = r.add("d", p3, "10.9.0.4/24")
	if err == nil || !strings.Contains(err.Error(), `no pool "zt" on this node`) {
		t.Fatalf("ADD with the pool gone: %v", err)
	}
}

// A tenant's app ports (owners): its namespace's pods get them and no
// other pair; no other namespace's pod gets them, even with every other
// pair taken.
func TestOwnedPairsForTheirNamespaceOnly(t *testing.T) {
	r := newOwnedRig(t, 3, map[string]string{"zt1": "red"})
	port := func(id string) string {
		recs, _ := Attachments(r.state)
		for _, a := range recs {
			if a.ContainerID == id {
				return a.Port + "/" + a.Namespace
			}
		}
		return ""
	}
	pods := []ns.NetNS{newNS(t), newNS(t), newNS(t), newNS(t), newNS(t)}
	for i, want := range []string{"zt0/apps", "zt2/apps", ""} {
		id := fmt.Sprintf("a%d", i)
		_, err := r.add(id, pods[i], fmt.Sprintf("10.9.0.%d/24", i+2))
		if got := port(id); got != want {
			t.Fatalf("apps pod %d: port %q, want %q (%v)", i, got, want, err)
		}
		if want == "" && (err == nil || !strings.Contains(err.Error(),
			`every pair of pool "zt" that namespace "apps" may have is in a pod`)) {
			t.Fatalf("a third apps pod: %v", err)
		}
	}
	r.podNS = "red"
	if _, err := r.add("r0", pods[3], "10.9.1.2/24"); err != nil || port("r0") != "zt1/red" {
		t.Fatalf("red's pod: %q %v", port("r0"), err)
	}
	if _, err := r.add("r1", pods[4], "10.9.1.3/24"); err == nil {
		t.Fatalf("a second red pod got %q", port("r1"))
	}
}

func TestVersionAndBadConfig(t *testing.T) {
	r := newRig(t, 1)
	var info []string
	r.in(func() error {
		v, err := r.cni.GetVersionInfo(context.Background(), "zeronf")
		if err == nil {
			info = v.SupportedVersions()
		}
		return err
	})
	if !strings.Contains(strings.Join(info, " "), "1.0.0") {
		t.Fatalf("VERSION: %v", info)
	}
	pod := newNS(t)
	for _, c := range []struct{ conf, want string }{
		{`{"cniVersion":"1.0.0","name":"z","type":"zeronf","pool":"Bad!"}`, `pool prefix "Bad!"`},
		{`{"cniVersion":"1.0.0","name":"z","type":"zeronf","mtu":-1}`, "mtu -1"},
		{`{"cniVersion":"1.0.0","name":"z","type":"zeronf","runtimeConfig":{"mac":"zz"}}`, "runtimeConfig mac"},
	} {
		nc, err := libcni.ConfFromBytes([]byte(c.conf))
		if err != nil {
			t.Fatal(err)
		}
		err = r.node.Do(func(ns.NetNS) error {
			_, err := r.cni.AddNetwork(context.Background(), nc, r.rt("x", pod))
			return err
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.conf, err, c.want)
		}
	}
	if links(t, pod)["net1"] != nil {
		t.Fatal("a refused ADD left net1")
	}
}

func keys(m map[string]netlink.Link) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	b, _ := json.Marshal(out)
	return []string{string(b)}
}

// Package cni is ZeroNF's CNI plugin (spec 1.0, docs/kubernetes.md "The
// CNI plugin"): it attaches a pod to one of its node's ZeroNF ports, so
// that the pod's kernel traffic enters the manager's chains.
//
// The manager opens its ports when it starts (it has no port hot-plug), so
// a node has a pool of veth pairs made before its manager starts (the node
// agent, zeronf-node pool): PREFIXi is the manager's end (its
// net_af_packet port, named PREFIXi too), PREFIXi-pod the pod's end. ADD
// moves a free pod end into the pod's network namespace under the name
// the runtime asks for (its pool name kept in the link's alias), DEL moves
// it back. Which pod has which pair is written in the node's state
// directory (one file a pair), where the node agent reads it.
package cni

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// PodSuffix ends a pair's pod end's name.
const PodSuffix = "-pod"

// DefaultPrefix names a node's pairs when the config names none.
const DefaultPrefix = "znapp"

// DefaultStateDir is where attachments are recorded on a node.
const DefaultStateDir = "/var/lib/cni/zeronf"

var prefixRe = regexp.MustCompile(`^[a-z][a-z0-9]{0,7}$`)

// CheckPrefix: a pool's prefix leaves room for the index and the suffix
// in a link name (15 bytes).
func CheckPrefix(p string) error {
	if !prefixRe.MatchString(p) {
		return fmt.Errorf("pool prefix %q: 1-8 of a-z0-9, a letter first", p)
	}
	return nil
}

// MgrEnd and PodEnd name pair i of a pool.
func MgrEnd(prefix string, i int) string { return prefix + strconv.Itoa(i) }
func PodEnd(prefix string, i int) string { return MgrEnd(prefix, i) + PodSuffix }

// pairIndex: i if name is pair i's pod end of prefix's pool.
func pairIndex(prefix, name string) (int, bool) {
	s, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, PodSuffix)
	if !ok || s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil && i >= 0
}

// EnsurePool makes pairs 0..n-1 of prefix's pool in this network
// namespace where they are missing (a pod end in a pod is not missing:
// its manager end is here), the manager's ends up, with IPv6 off on them
// (the kernel would send its own packets into the manager's port).
// It also marks the pool live in stateDir (DEL gives pairs back to it),
// with the pairs given to one namespace's pods only (owners: the manager's
// end's name -> namespace; a tenant's app ports, docs/kubernetes.md
// "Tenants"), written first: a live pool's owners are known.
func EnsurePool(prefix string, n, mtu int, stateDir string, owners map[string]string) error {
	if err := CheckPrefix(prefix); err != nil {
		return err
	}
	if n < 1 || n > 99 {
		return fmt.Errorf("pool of %d pairs: 1-99", n)
	}
	for i := 0; i < n; i++ {
		mgr := MgrEnd(prefix, i)
		l, err := netlinksafe.LinkByName(mgr)
		if err != nil {
			va := netlink.NewLinkAttrs()
			va.Name = mgr
			va.MTU = mtu
			va.Alias = "zeronf pool " + prefix
			v := &netlink.Veth{LinkAttrs: va, PeerName: PodEnd(prefix, i)}
			if err := netlink.LinkAdd(v); err != nil {
				return fmt.Errorf("%s: %w", mgr, err)
			}
			if l, err = netlinksafe.LinkByName(mgr); err != nil {
				return fmt.Errorf("%s: %w", mgr, err)
			}
			if p, err := netlinksafe.LinkByName(PodEnd(prefix, i)); err == nil {
				_ = netlink.LinkSetAlias(p, "zeronf pool "+prefix)
			}
		}
		if _, ok := l.(*netlink.Veth); !ok {
			return fmt.Errorf("%s: a %s, not a veth of ZeroNF's pool", mgr, l.Type())
		}
		_ = os.WriteFile(filepath.Join("/proc/sys/net/ipv6/conf", mgr, "disable_ipv6"),
			[]byte("1"), 0o644)
		if err := netlink.LinkSetUp(l); err != nil {
			return fmt.Errorf("%s up: %w", mgr, err)
		}
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(owners)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(stateDir, ownersFile(prefix)), b); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(stateDir, poolFile(prefix)),
		[]byte(strconv.Itoa(n)+"\n"), 0o600)
}

func poolFile(prefix string) string   { return "pool-" + prefix }
func ownersFile(prefix string) string { return "owners-" + prefix + ".json" }

// readOwners: the pool's pairs given to one namespace only (none: an
// older pool's, or none written).
func readOwners(stateDir, prefix string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, ownersFile(prefix)))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	owners := map[string]string{}
	if err := json.Unmarshal(b, &owners); err != nil {
		return nil, fmt.Errorf("%s: %w", ownersFile(prefix), err)
	}
	return owners, nil
}

// forNamespace: of the free pod ends, those a pod of namespace ns may
// have: its namespace's if it owns any pair, else those nobody owns.
func forNamespace(free []string, owners map[string]string, ns string) []string {
	want := "" // nobody's
	for _, o := range owners {
		if o == ns {
			want = ns
		}
	}
	var out []string
	for _, e := range free {
		if owners[strings.TrimSuffix(e, PodSuffix)] == want {
			out = append(out, e)
		}
	}
	return out
}

// poolLive: the node agent runs the pool (DEL gives a pair back rather
// than deleting it).
func poolLive(stateDir, prefix string) bool {
	_, err := os.Stat(filepath.Join(stateDir, poolFile(prefix)))
	return err == nil
}

// RemovePool deletes the pool's pairs that no pod has (a pod's goes when
// its DEL finds the pool gone) and marks it gone. It says how many pairs
// are still in pods.
func RemovePool(prefix, stateDir string) (inPods int, err error) {
	if err := CheckPrefix(prefix); err != nil {
		return 0, err
	}
	unlock, err := lockState(stateDir)
	if err != nil {
		return 0, err
	}
	defer unlock()
	if err := os.Remove(filepath.Join(stateDir, poolFile(prefix))); err != nil &&
		!errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	_ = os.Remove(filepath.Join(stateDir, ownersFile(prefix)))
	links, err := netlinksafe.LinkList()
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, l := range links {
		name := l.Attrs().Name
		if _, ok := pairIndex(prefix, name); ok {
			// deleting one end deletes the pair
			if err := netlink.LinkDel(l); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
		}
	}
	recs, _ := Attachments(stateDir)
	for _, r := range recs {
		if r.Prefix == prefix {
			inPods++
		}
	}
	return inPods, errors.Join(errs...)
}

// freePodEnds: the pool's pod ends in this namespace, lowest first.
func freePodEnds(prefix string) ([]string, error) {
	links, err := netlinksafe.LinkList()
	if err != nil {
		return nil, err
	}
	type e struct {
		i    int
		name string
	}
	var es []e
	for _, l := range links {
		if i, ok := pairIndex(prefix, l.Attrs().Name); ok {
			es = append(es, e{i, l.Attrs().Name})
		}
	}
	sort.Slice(es, func(a, b int) bool { return es[a].i < es[b].i })
	out := make([]string, len(es))
	for k, x := range es {
		out[k] = x.name
	}
	return out, nil
}

// Attachment is one pod's pair, as the state directory records it.
type Attachment struct {
	ContainerID string `json:"containerId"`
	IfName      string `json:"ifName"`
	Netns       string `json:"netns"`
	Namespace   string `json:"podNamespace,omitempty"`
	Pod         string `json:"podName,omitempty"`
	Prefix      string `json:"prefix"`
	// Port is the manager's end: its port's name on the node's manager.
	Port string   `json:"port"`
	Mac  string   `json:"mac,omitempty"`
	IPs  []string `json:"ips,omitempty"`
}

func recordFile(stateDir, port string) string {
	return filepath.Join(stateDir, "port-"+port+".json")
}

func writeRecord(stateDir string, a *Attachment) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return writeFile(recordFile(stateDir, a.Port), b)
}

// writeFile: b as f, atomically.
func writeFile(f string, b []byte) error {
	tmp := f + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, f)
}

// Attachments: the pairs pods have on this node now.
func Attachments(stateDir string) ([]Attachment, error) {
	fs, err := filepath.Glob(filepath.Join(stateDir, "port-*.json"))
	if err != nil {
		return nil, err
	}
	var out []Attachment
	for _, f := range fs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var a Attachment
		if json.Unmarshal(b, &a) == nil {
			out = append(out, a)
		}
	}
	return out, nil
}

func findRecord(stateDir, containerID, ifName string) (*Attachment, error) {
	recs, err := Attachments(stateDir)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		if recs[i].ContainerID == containerID && recs[i].IfName == ifName {
			return &recs[i], nil
		}
	}
	return nil, nil
}

// lockState serialises the node's plugin runs and the pool's removal
// (flock: gone with the process, whatever kills it).
func lockState(stateDir string) (func(), error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(stateDir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

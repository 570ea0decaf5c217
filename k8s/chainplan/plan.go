// Package chainplan turns the cluster's ServiceChains into what one
// node's manager must have (docs/kubernetes.md "Chains on the cluster"):
// its port chains, default chain, rules, and the NSH service paths of the
// chains that cross it (docs/multihost.md). The node agent applies its
// node's plan; the same function run for every node gives the cluster's.
//
// Where a hop runs: a NetworkFunction's service on the node the packet is
// on if one of its pods runs there, else on the node of lowest host id
// that has one (then the chain crosses the fabric); a port on the node the
// packet is on; a pod's port on the pod's node. A chain that starts on
// node H and crosses nodes is NSH service path PathID*256 + H.
package chainplan

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

// Node is a node's ZeroNF as the plan needs it.
type Node struct {
	Name   string
	HostID int
	// Ports: its manager's ports, name -> id.
	Ports map[string]int
	// Pods: the pods on its ZeroNF ports, "namespace/pod" -> port name.
	Pods map[string]string
}

// NF is a NetworkFunction: its service and the nodes its pods run on.
type NF struct {
	ServiceID int
	Nodes     map[string]bool
}

// Chain is a ServiceChain.
type Chain struct {
	Namespace, Name string
	Generation      int64
	PathID          int
	Spec            zv1.ServiceChainSpec
	// Active: its reactions in force (the operator's status), sorted.
	Active []string
}

// Hops: the chain's hops with its active reactions' NetworkFunctions put
// in, in the order of Spec.Reactions: right after the first hop of their
// After's NetworkFunction, or first; one whose After is not a hop is
// left out (the operator's status says why).
func (c *Chain) Hops() []zv1.Hop {
	hops := slices.Clone(c.Spec.Hops)
	for _, r := range c.Spec.Reactions {
		if !slices.Contains(c.Active, r.Name) {
			continue
		}
		at := 0
		if r.Insert.After != "" {
			at = slices.IndexFunc(hops, func(h zv1.Hop) bool {
				return h.NetworkFunction == r.Insert.After
			}) + 1
			if at == 0 {
				continue
			}
		}
		hops = slices.Insert(hops, at, zv1.Hop{NetworkFunction: r.Insert.NetworkFunction})
	}
	return hops
}

// Key names a chain in a plan's results.
func (c *Chain) Key() string { return c.Namespace + "/" + c.Name }

// World is what the plan is made from. Chains: oldest first (where two
// want the same port, the older has it).
type World struct {
	Nodes  map[string]*Node
	NFs    map[string]*NF // "namespace/name"
	Chains []Chain
	// Tenants: the namespaces that are tenants (of the same name): a
	// ServiceChain there is the tenant's chain.
	Tenants map[string]bool
}

// Rule is one of a node's wildcard rules (rule.add).
type Rule struct {
	Match    map[string]any
	Priority int
	Hops     []string
	Chain    string // its chain's Key
}

// Plan is a node's part.
type Plan struct {
	// Default: the default chain's hops; nil: none of a ServiceChain.
	Default []string
	// TenantChains: tenant -> its chain's hops (chain.set with tenant).
	TenantChains map[string][]string
	// PortChains: port id -> hops.
	PortChains map[int][]string
	Rules      []Rule
	// Paths: SPI -> hops as this node writes them (path.set).
	Paths map[int][]string
	// Errors: chain key -> why it is not in force here ("" : it is).
	Errors map[string]string
	// Whose each thing is (a chain's key): what the manager refuses is
	// that chain's error.
	DefaultOwner string
	PortOwner    map[int]string
	PathOwner    map[int]string
	TenantOwner  map[string]string
}

// step is a hop placed on a node.
type step struct {
	kind string // svc, port, drop
	id   int
	node string
}

func (s step) on(self string, w *World) string {
	if s.kind == "drop" {
		return "drop"
	}
	t := s.kind + ":" + strconv.Itoa(s.id)
	if s.node != self {
		t += "@" + strconv.Itoa(w.Nodes[s.node].HostID)
	}
	return t
}

// place puts c's hops on nodes for a packet that enters on start.
func place(w *World, c *Chain, start string) ([]step, error) {
	cur := start
	var out []step
	for i, h := range c.Hops() {
		switch {
		case h.Drop:
			out = append(out, step{kind: "drop", node: cur})
		case h.NetworkFunction != "":
			nf := w.NFs[c.Namespace+"/"+h.NetworkFunction]
			if nf == nil {
				return nil, fmt.Errorf("hop %d: no NetworkFunction %q", i, h.NetworkFunction)
			}
			if !nf.Nodes[cur] {
				if n := lowest(w, nf.Nodes); n != "" {
					cur = n
				}
			}
			out = append(out, step{kind: "svc", id: nf.ServiceID, node: cur})
		case h.Port != "":
			id, ok := w.Nodes[cur].Ports[string(h.Port)]
			if !ok {
				return nil, fmt.Errorf("hop %d: node %s has no port %q", i, cur, h.Port)
			}
			out = append(out, step{kind: "port", id: id, node: cur})
		case h.Pod != "":
			n, port := podPort(w, c.Namespace+"/"+h.Pod)
			if n == "" {
				return nil, fmt.Errorf("hop %d: pod %q is on no ZeroNF port", i, h.Pod)
			}
			cur = n
			out = append(out, step{kind: "port", id: w.Nodes[n].Ports[port], node: n})
		}
	}
	return out, nil
}

// lowest: of nodes, the one of lowest host id that is a ZeroNF node.
func lowest(w *World, nodes map[string]bool) string {
	best, bid := "", 0
	for n, ok := range nodes {
		if node := w.Nodes[n]; ok && node != nil && (best == "" || node.HostID < bid) {
			best, bid = n, node.HostID
		}
	}
	return best
}

func podPort(w *World, pod string) (string, string) {
	for _, n := range sortedNodes(w) {
		if p, ok := w.Nodes[n].Pods[pod]; ok {
			if _, known := w.Nodes[n].Ports[p]; known {
				return n, p
			}
		}
	}
	return "", ""
}

func sortedNodes(w *World) []string {
	ns := make([]string, 0, len(w.Nodes))
	for n := range w.Nodes {
		ns = append(ns, n)
	}
	sort.Slice(ns, func(a, b int) bool { return w.Nodes[ns[a]].HostID < w.Nodes[ns[b]].HostID })
	return ns
}

// starts: the nodes where c's packets enter, and the port there (-1: the
// default chain, or rules).
func starts(w *World, c *Chain) (map[string]int, error) {
	out := map[string]int{}
	switch {
	case c.Spec.FromPod != "":
		n, p := podPort(w, c.Namespace+"/"+c.Spec.FromPod)
		if n == "" {
			return nil, fmt.Errorf("pod %q is on no ZeroNF port", c.Spec.FromPod)
		}
		out[n] = w.Nodes[n].Ports[p]
	case c.Spec.From != "":
		for name, node := range w.Nodes {
			if id, ok := node.Ports[string(c.Spec.From)]; ok {
				out[name] = id
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("no node has port %q", c.Spec.From)
		}
	default:
		for name := range w.Nodes {
			out[name] = -1
		}
	}
	return out, nil
}

// Make is self's plan.
func Make(w *World, self string) *Plan {
	p := &Plan{PortChains: map[int][]string{}, Paths: map[int][]string{},
		Errors: map[string]string{}, PortOwner: map[int]string{}, PathOwner: map[int]string{},
		TenantChains: map[string][]string{}, TenantOwner: map[string]string{}}
	if w.Nodes[self] == nil {
		return p
	}
	for i := range w.Chains {
		c := &w.Chains[i]
		key := c.Key()
		p.Errors[key] = ""
		fail := func(format string, a ...any) { p.Errors[key] = fmt.Sprintf(format, a...) }
		if w.Tenants[c.Namespace] {
			p.tenantChain(w, c, self, fail)
			continue
		}
		st, err := starts(w, c)
		if err != nil {
			fail("%v", err)
			continue
		}
		for _, start := range sortedNodes(w) {
			port, ok := st[start]
			if !ok {
				continue
			}
			steps, err := place(w, c, start)
			if err != nil {
				if start == self {
					fail("%v", err)
				}
				continue
			}
			involved := map[string]bool{start: true}
			for _, s := range steps {
				involved[s.node] = true
			}
			if !involved[self] {
				continue
			}
			hops := make([]string, len(steps))
			for k, s := range steps {
				hops[k] = s.on(self, w)
			}
			if len(involved) > 1 {
				if c.PathID <= 0 {
					fail("crosses nodes: waiting for its path id (the operator's)")
					continue
				}
				spi := c.PathID*256 + w.Nodes[start].HostID
				p.Paths[spi] = hops
				p.PathOwner[spi] = key
			}
			if start != self {
				continue
			}
			switch {
			case len(c.Spec.Rules) > 0:
				for _, r := range c.Spec.Rules {
					p.Rules = append(p.Rules, Rule{Match: match(r.Match),
						Priority: int(r.Priority), Hops: hops, Chain: key})
				}
			case port >= 0:
				if o, taken := p.PortOwner[port]; taken {
					fail("port %d's chain is ServiceChain %s's", port, o)
					continue
				}
				p.PortOwner[port] = key
				p.PortChains[port] = hops
			default:
				if p.DefaultOwner != "" {
					fail("the default chain is ServiceChain %s's", p.DefaultOwner)
					continue
				}
				p.DefaultOwner = key
				p.Default = hops
			}
		}
	}
	return p
}

// tenantChain: c, of a tenant's namespace, as that tenant's chain on self:
// what its slices receive here, its hops all here (the managers keep a
// tenant's packets on the tenant's NFs and ports, and a service path
// belongs to no tenant).
func (p *Plan) tenantChain(w *World, c *Chain, self string, fail func(string, ...any)) {
	if c.Spec.From != "" || c.Spec.FromPod != "" || len(c.Spec.Rules) > 0 {
		fail("a tenant's ServiceChain is its chain (what its slices receive): leave from, fromPod and rules out")
		return
	}
	steps, err := place(w, c, self)
	if err != nil {
		fail("%v", err)
		return
	}
	hops := make([]string, len(steps))
	for k, s := range steps {
		if s.node != self {
			h := c.Hops()[k]
			what := "NetworkFunction " + h.NetworkFunction
			if h.Pod != "" {
				what = "pod " + h.Pod
			}
			fail("hop %d: %s has no pod on this node (a tenant's chain stays on its node)", k, what)
			return
		}
		hops[k] = s.on(self, w)
	}
	if o, taken := p.TenantOwner[c.Namespace]; taken {
		fail("tenant %s's chain is ServiceChain %s's", c.Namespace, o)
		return
	}
	p.TenantOwner[c.Namespace] = c.Key()
	p.TenantChains[c.Namespace] = hops
}

// match: a Match as rule.add takes it.
func match(m zv1.Match) map[string]any {
	out := map[string]any{}
	if m.IP != 0 {
		out["ip"] = int(m.IP)
	}
	if m.Proto != "" {
		if n, err := strconv.Atoi(m.Proto); err == nil {
			out["proto"] = n
		} else {
			out["proto"] = m.Proto
		}
	}
	if m.Src != "" {
		out["src"] = m.Src
	}
	if m.Dst != "" {
		out["dst"] = m.Dst
	}
	for k, v := range map[string]string{"sport": m.Sport, "dport": m.Dport} {
		if v == "" {
			continue
		}
		if n, err := strconv.Atoi(v); err == nil {
			out[k] = n
		} else {
			out[k] = v
		}
	}
	return out
}

// String: a plan, for logs and tests.
func (p *Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "default %v;", p.Default)
	for _, id := range slices.Sorted(maps.Keys(p.PortChains)) {
		fmt.Fprintf(&b, " port %d %v;", id, p.PortChains[id])
	}
	for _, s := range slices.Sorted(maps.Keys(p.Paths)) {
		fmt.Fprintf(&b, " path %d %v;", s, p.Paths[s])
	}
	for _, r := range p.Rules {
		fmt.Fprintf(&b, " rule %v/%d %v;", r.Match, r.Priority, r.Hops)
	}
	for _, t := range slices.Sorted(maps.Keys(p.TenantChains)) {
		fmt.Fprintf(&b, " tenant %s %v;", t, p.TenantChains[t])
	}
	return b.String()
}

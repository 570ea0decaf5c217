// Package nodeagent keeps a node's ZeroNF manager in step with the
// cluster (docs/kubernetes.md "Chains on the cluster"): from the
// ServiceChains, NetworkFunctions, their pods and the other nodes'
// ZeroNFNodes it makes the node's plan (k8s/chainplan) and applies it
// through the manager's control socket: the fabric and its peers, the
// service paths, the port and default chains, the rules. It owns them:
// what the plan does not have is taken away. It reports the node in its
// ZeroNFNode's status: the manager's ports and services with their
// counters, the pods on its ports, each chain in force or why not.
package nodeagent

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
	"zeronf.dev/k8s/chainplan"
	"zeronf.dev/k8s/cni"
	"zeronf.dev/k8s/internal/ctl"
	"zeronf.dev/k8s/internal/instance"
)

// LabelNF: the operator's label on a NetworkFunction's pods.
const LabelNF = "zeronf.dev/networkfunction"

// Resync: how often counters are sampled and reported when nothing else
// changes (the operator's autoscaling and reactions see the load this
// often).
const Resync = 2 * time.Second

// StaleAfter: how long a manager runs before its node's older NF pods are
// replaced: by then kubelet has the device plugin's slots healthy again
// and its node status says so (every 10 s); a pod made before would be
// refused at admission (UnexpectedAdmissionError).
const StaleAfter = 15 * time.Second

// Agent is the node's reconciler.
type Agent struct {
	client.Client
	Node     string
	Inst     instance.Instance
	CNIState string

	// what the manager was given, while it is the same manager (pid)
	mgrPid     int64
	fabric     string
	peers      map[int]string
	paths      map[int]string
	portChains map[int]string
	defChain   string
	tenants    map[string]string // tenant -> its chain's key
	rules      map[string]int64  // rule's key -> id
	rates      sampler
}

type ctlPort struct {
	Port  int              `json:"port"`
	Name  string           `json:"name"`
	Rx    int64            `json:"rx"`
	Tx    int64            `json:"tx"`
	Drops map[string]int64 `json:"drops"`
	HW    struct {
		Imissed int64 `json:"imissed"`
	} `json:"hw"`
}

// ingressDrops: packets lost at p's ingress: the chain's first hop full
// or stalled, or missed by the port itself (backpressure pushes there).
func (p *ctlPort) ingressDrops() int64 {
	return p.Drops["ingress_full"] + p.Drops["stalled"] + p.HW.Imissed
}

type ctlNF struct {
	Service  int              `json:"service"`
	Rx       int64            `json:"rx"`
	Tx       int64            `json:"tx"`
	Drops    map[string]int64 `json:"drops"`
	Counters map[string]int64 `json:"counters"`
	// InputFill: the fullest of its RX ring and the links into it
	InputFill float64 `json:"input_fill"`
}

// world: the cluster as the plan sees it, and the ZeroNF.
func (a *Agent) world(ctx context.Context, z *zv1.ZeroNF, local []cni.Attachment) (*chainplan.World, error) {
	w := &chainplan.World{Nodes: map[string]*chainplan.Node{}, NFs: map[string]*chainplan.NF{},
		Tenants: map[string]bool{}}
	for _, t := range z.Spec.Tenants {
		w.Tenants[t.Name] = true
	}
	ports := z.Spec.PortIDs()
	var nodes zv1.ZeroNFNodeList
	if err := a.List(ctx, &nodes); err != nil {
		return nil, err
	}
	for _, n := range nodes.Items {
		pods := map[string]string{}
		if n.Name == a.Node {
			for _, at := range local {
				if at.Pod != "" {
					pods[at.Namespace+"/"+at.Pod] = at.Port
				}
			}
		} else {
			for _, at := range n.Status.Attachments {
				pods[at.Namespace+"/"+at.Pod] = at.Port
			}
		}
		w.Nodes[n.Name] = &chainplan.Node{Name: n.Name, HostID: int(n.Spec.HostID),
			Ports: ports, Pods: pods}
	}
	var nfs zv1.NetworkFunctionList
	if err := a.List(ctx, &nfs); err != nil {
		return nil, err
	}
	for _, nf := range nfs.Items {
		w.NFs[nf.Namespace+"/"+nf.Name] = &chainplan.NF{ServiceID: int(nf.Spec.ServiceID),
			Nodes: map[string]bool{}}
	}
	var pods corev1.PodList
	if err := a.List(ctx, &pods, client.HasLabels{LabelNF}); err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		nf := w.NFs[p.Namespace+"/"+p.Labels[LabelNF]]
		if nf != nil && p.Spec.NodeName != "" && p.DeletionTimestamp == nil &&
			p.Status.Phase == corev1.PodRunning {
			nf.Nodes[p.Spec.NodeName] = true
		}
	}
	var chains zv1.ServiceChainList
	if err := a.List(ctx, &chains); err != nil {
		return nil, err
	}
	items := chains.Items
	sort.Slice(items, func(i, j int) bool {
		ti, tj := items[i].CreationTimestamp, items[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return items[i].Namespace+"/"+items[i].Name < items[j].Namespace+"/"+items[j].Name
	})
	for _, c := range items {
		w.Chains = append(w.Chains, chainplan.Chain{Namespace: c.Namespace, Name: c.Name,
			Generation: c.Generation, PathID: int(c.Status.PathID), Spec: c.Spec,
			Active: c.ActiveReactions()})
	}
	return w, nil
}

// fabricIP: host id h's address on the fabric's subnet.
func fabricIP(subnet string, h int) (string, error) {
	_, n, err := net.ParseCIDR(subnet)
	if err != nil || n.IP.To4() == nil {
		return "", fmt.Errorf("fabric subnet %q", subnet)
	}
	ip := n.IP.To4()
	v := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 | uint32(ip[3])
	v += uint32(h)
	out := net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).To4()
	if !n.Contains(out) {
		return "", fmt.Errorf("host %d is past fabric subnet %s", h, subnet)
	}
	return out.String(), nil
}

func key(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// +kubebuilder:rbac:groups=zeronf.dev,resources=zeronfs;zeronfnodes;servicechains;networkfunctions,verbs=get;list;watch
// +kubebuilder:rbac:groups=zeronf.dev,resources=zeronfnodes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete

// Reconcile applies the node's plan and reports the node; it runs again
// every Resync for the counters.
func (a *Agent) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	again := ctrl.Result{RequeueAfter: Resync}
	var z zv1.ZeroNF
	if err := a.Get(ctx, types.NamespacedName{Name: "default"}, &z); err != nil {
		return again, client.IgnoreNotFound(err)
	}
	var me zv1.ZeroNFNode
	if err := a.Get(ctx, types.NamespacedName{Name: a.Node}, &me); err != nil {
		// the operator makes it
		return again, client.IgnoreNotFound(err)
	}
	st := zv1.ZeroNFNodeStatus{}
	local, _ := cni.Attachments(a.CNIState)
	for _, at := range local {
		st.Attachments = append(st.Attachments, zv1.NodeAttachment{Namespace: at.Namespace,
			Pod: at.Pod, Interface: at.IfName, Port: at.Port, IPs: at.IPs})
	}
	w, err := a.world(ctx, &z, local)
	if err != nil {
		log.Error(err, "reading the cluster")
		return again, nil
	}
	plan := chainplan.Make(w, a.Node)
	c, err := ctl.Dial(a.Inst.Path(instance.CtlSock), 5*time.Second)
	if err != nil {
		st.Message = fmt.Sprintf("manager: %v", err)
		a.mgrPid = 0
		return again, a.report(ctx, &me, st, w, plan)
	}
	defer c.Close()
	var status struct {
		Pid      int64 `json:"pid"`
		Ready    bool  `json:"ready"`
		UptimeMs int64 `json:"uptime_ms"`
	}
	if err := c.Call("status", nil, &status); err != nil || !status.Ready {
		st.Message = fmt.Sprintf("manager not ready (%v)", err)
		return again, a.report(ctx, &me, st, w, plan)
	}
	if up := time.Duration(status.UptimeMs) * time.Millisecond; up >= StaleAfter {
		a.replaceStale(ctx, time.Now().Add(-up))
	}
	var pl struct {
		Ports []ctlPort `json:"ports"`
	}
	portsOK := c.Call("port.list", nil, &pl) == nil
	if portsOK {
		for _, p := range pl.Ports {
			st.Ports = append(st.Ports, zv1.NodePort{Name: p.Name, ID: int32(p.Port), Rx: p.Rx, Tx: p.Tx})
		}
	}
	if status.Pid != a.mgrPid {
		// a new manager, or this agent new: what the manager has is
		// not known; apply sets each thing again (a deleted chain's
		// leftovers go)
		a.mgrPid = status.Pid
		if err := a.forget(c, pl.Ports); err != nil {
			log.Error(err, "reading the manager's rules, paths and peers")
		}
	}
	errs := a.apply(c, &z, &me, w, plan, pl.Ports)
	for k, v := range errs {
		plan.Errors[k] = v
	}
	var nl struct {
		NFs []ctlNF `json:"nfs"`
	}
	nfsOK := c.Call("nf.list", nil, &nl) == nil
	if nfsOK {
		st.Services = services(nl.NFs)
	}
	// the rates: of the ports' ingress drops and the services' counters
	// (a sample only of both: a missing part would read as a fall)
	counters := map[string]int64{}
	for _, p := range pl.Ports {
		counters["ingress"] += p.ingressDrops()
	}
	for _, nf := range nl.NFs {
		for k, v := range nf.Counters {
			counters[fmt.Sprintf("%d/%s", nf.Service, k)] += v
		}
	}
	rates := a.rates.rates
	if portsOK && nfsOK {
		rates = a.rates.sample(status.Pid, time.Now(), counters)
	}
	st.IngressDropsPerSecond = rates["ingress"]
	for i := range st.Services {
		s := &st.Services[i]
		pre := fmt.Sprintf("%d/", s.ID)
		for k, v := range rates {
			if name, ok := strings.CutPrefix(k, pre); ok {
				if s.CounterRates == nil {
					s.CounterRates = map[string]int64{}
				}
				s.CounterRates[name] = v
			}
		}
	}
	st.Ready = errs[""] == ""
	st.Message = errs[""]
	if z.Spec.Fabric != nil {
		st.FabricIP, _ = fabricIP(z.Spec.Fabric.Subnet, int(me.Spec.HostID))
	}
	return again, a.report(ctx, &me, st, w, plan)
}

// services: the manager's NFs summed by service, their inputs' mean fill
// too (each NF's RX ring or a link into it, the fullest).
func services(nfs []ctlNF) []zv1.NodeService {
	svc := map[int]*zv1.NodeService{}
	fill := map[int]float64{}
	for _, nf := range nfs {
		s := svc[nf.Service]
		if s == nil {
			s = &zv1.NodeService{ID: int32(nf.Service)}
			svc[nf.Service] = s
		}
		s.NFs++
		s.Rx += nf.Rx
		s.Tx += nf.Tx
		for _, d := range nf.Drops {
			s.Drops += d
		}
		fill[nf.Service] += min(max(nf.InputFill, 0), 1)
	}
	out := make([]zv1.NodeService, 0, len(svc))
	for id, s := range svc {
		s.RingOccupancyPercent = int32(math.Round(100 * fill[id] / float64(s.NFs)))
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// replaceStale deletes the node's NF pods (the operator's) that started
// before its manager: kubelet would restart their containers with the
// mounts of their first Allocate, the files of a manager that is gone;
// their Deployment makes new pods, which the device plugin gives the
// files of this one.
func (a *Agent) replaceStale(ctx context.Context, mgrStart time.Time) {
	var pods corev1.PodList
	if err := a.List(ctx, &pods, client.HasLabels{LabelNF}); err != nil {
		return
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != a.Node || p.DeletionTimestamp != nil {
			continue
		}
		// refused at admission while the manager was away: its ReplicaSet
		// made another already; the failed pod would stay
		if p.Status.Phase == corev1.PodFailed && p.Status.Reason == "UnexpectedAdmissionError" {
			_ = a.Delete(ctx, p, client.Preconditions{UID: &p.UID})
			continue
		}
		// a second of slack: the manager's uptime is read after it started
		if p.Status.StartTime == nil || !p.Status.StartTime.Time.Before(mgrStart.Add(-time.Second)) {
			continue
		}
		err := a.Delete(ctx, p, client.Preconditions{UID: &p.UID})
		logf.FromContext(ctx).Info("NF pod older than its manager: replaced",
			"pod", p.Namespace+"/"+p.Name, "error", err)
	}
}

// unknown: what the manager has of a thing the agent did not set (apply
// sets it, or takes it away).
const unknown = "?"

// forget starts over with a manager whose state this agent did not make:
// every port chain, path, peer and the fabric unknown (apply sets what the
// plan has and takes the rest away, without a moment of none for what
// stays), every rule taken away now (rules have no name to keep them by).
func (a *Agent) forget(c *ctl.Client, ports []ctlPort) error {
	a.fabric, a.defChain = unknown, unknown
	a.peers, a.paths, a.portChains, a.rules = map[int]string{}, map[int]string{},
		map[int]string{}, map[string]int64{}
	a.tenants = map[string]string{}
	for _, p := range ports {
		a.portChains[p.Port] = unknown
	}
	var rl struct {
		Rules []struct {
			ID int64 `json:"id"`
		} `json:"rules"`
	}
	if err := c.Call("rule.list", nil, &rl); err != nil {
		return err
	}
	for _, r := range rl.Rules {
		_ = c.Call("rule.del", map[string]any{"id": r.ID}, nil)
	}
	var pl struct {
		Paths []struct {
			SPI int `json:"spi"`
		} `json:"paths"`
	}
	if err := c.Call("path.list", nil, &pl); err != nil {
		return err
	}
	for _, p := range pl.Paths {
		a.paths[p.SPI] = unknown
	}
	var fs struct {
		Peers []struct {
			Host int `json:"host"`
		} `json:"peers"`
	}
	if err := c.Call("fabric.show", nil, &fs); err != nil {
		return err
	}
	for _, p := range fs.Peers {
		a.peers[p.Host] = unknown
	}
	return nil
}

// apply gives the manager what the plan says, in the order it takes
// them: the fabric and peers (a path names them), paths (a chain of
// theirs carries their SPI), chains, rules; then takes away what is no
// longer. It says what the manager refused, by chain ("" : the node's).
func (a *Agent) apply(c *ctl.Client, z *zv1.ZeroNF, me *zv1.ZeroNFNode, w *chainplan.World,
	p *chainplan.Plan, ports []ctlPort) map[string]string {
	errs := map[string]string{}
	fail := func(owner, what string, err error) {
		if errs[owner] == "" {
			errs[owner] = fmt.Sprintf("%s: %v", what, err)
		}
	}
	// the fabric and its peers: every other ZeroNF node
	wantPeers := map[int]map[string]any{}
	if f := z.Spec.Fabric; f != nil {
		ip, err := fabricIP(f.Subnet, int(me.Spec.HostID))
		port, ok := z.Spec.PortIDs()[string(f.Port)]
		switch {
		case err != nil:
			fail("", "fabric", err)
		case !ok:
			fail("", "fabric", fmt.Errorf("no port %q", f.Port))
		default:
			want := map[string]any{"port": port, "host": me.Spec.HostID, "ip": ip}
			if k := key(want); k != a.fabric {
				if err := c.Call("fabric.set", want, nil); err != nil {
					fail("", "fabric.set", err)
				} else {
					a.fabric = k
				}
			}
			for name, n := range w.Nodes {
				if name == a.Node {
					continue
				}
				pip, err := fabricIP(f.Subnet, n.HostID)
				if err != nil {
					continue
				}
				wantPeers[n.HostID] = map[string]any{"host": n.HostID, "ip": pip,
					"encap": f.Encap, "mtu": f.MTU, "name": name}
			}
		}
	} else if a.fabric != "" {
		if err := c.Call("fabric.set", map[string]any{"off": true}, nil); err == nil {
			a.fabric = ""
		}
	}
	for h, want := range wantPeers {
		if k := key(want); a.peers[h] != k {
			if err := c.Call("fabric.peer.set", want, nil); err != nil {
				fail("", fmt.Sprintf("peer %d", h), err)
				continue
			}
			a.peers[h] = k
		}
	}
	// paths
	for spi, hops := range p.Paths {
		if k := key(hops); a.paths[spi] != k {
			if err := c.Call("path.set", map[string]any{"spi": spi, "hops": hops}, nil); err != nil {
				fail(p.PathOwner[spi], fmt.Sprintf("path %d", spi), err)
				continue
			}
			a.paths[spi] = k
		}
	}
	// chains: the default chain is the ZeroNF's when no ServiceChain's
	def := p.Default
	if def == nil {
		def, _ = z.Spec.DefaultChainHops()
		if len(def) == 0 {
			def = []string{"drop"}
		}
	}
	// setChain: one of the manager's chains (params say which) as hops,
	// unless *have says it has them; what it refuses is owner's error
	setChain := func(params map[string]any, hops []string, have *string, owner, what string) {
		if hops == nil {
			hops = []string{}
		}
		k := key(hops)
		if *have == k {
			return
		}
		params["hops"] = hops
		if err := c.Call("chain.set", params, nil); err != nil {
			fail(owner, what, err)
			return
		}
		*have = k
	}
	setChain(map[string]any{}, def, &a.defChain, p.DefaultOwner, "default chain")
	sliced := z.Spec.SlicedPorts()
	for _, port := range ports {
		hops := p.PortChains[port.Port]
		if _, ok := sliced[port.Port]; ok && hops == nil {
			continue // a tenant's: no port chain (the manager refuses one)
		}
		have := a.portChains[port.Port]
		setChain(map[string]any{"port": port.Port}, hops, &have, p.PortOwner[port.Port],
			fmt.Sprintf("port %d's chain", port.Port))
		a.portChains[port.Port] = have
	}
	for _, t := range z.Spec.Tenants {
		have := a.tenants[t.Name]
		setChain(map[string]any{"tenant": t.Name}, p.TenantChains[t.Name], &have,
			p.TenantOwner[t.Name], fmt.Sprintf("tenant %s's chain", t.Name))
		a.tenants[t.Name] = have
	}
	// rules
	want := map[string]chainplan.Rule{}
	for _, r := range p.Rules {
		want[key([]any{r.Match, r.Priority, r.Hops})] = r
	}
	for k, id := range a.rules {
		if _, ok := want[k]; !ok {
			if err := c.Call("rule.del", map[string]any{"id": id}, nil); err == nil {
				delete(a.rules, k)
			}
		}
	}
	for k, r := range want {
		if _, ok := a.rules[k]; ok {
			continue
		}
		var out struct {
			ID int64 `json:"id"`
		}
		if err := c.Call("rule.add", map[string]any{"match": r.Match, "priority": r.Priority,
			"chain": r.Hops}, &out); err != nil {
			fail(r.Chain, "rule", err)
			continue
		}
		a.rules[k] = out.ID
	}
	// paths no longer, then peers no longer
	for spi := range a.paths {
		if _, ok := p.Paths[spi]; !ok {
			if err := c.Call("path.del", map[string]any{"spi": spi}, nil); err == nil {
				delete(a.paths, spi)
			}
		}
	}
	for h := range a.peers {
		if _, ok := wantPeers[h]; !ok {
			if err := c.Call("fabric.peer.del", map[string]any{"host": h}, nil); err == nil {
				delete(a.peers, h)
			}
		}
	}
	return errs
}

// report writes the node's status when it changed (or its counters, at
// most every Resync).
func (a *Agent) report(ctx context.Context, me *zv1.ZeroNFNode, st zv1.ZeroNFNodeStatus,
	w *chainplan.World, p *chainplan.Plan) error {
	for _, c := range w.Chains {
		nc := zv1.NodeChain{Namespace: c.Namespace, Name: c.Name,
			Generation: c.Generation, Error: p.Errors[c.Key()]}
		if nc.Error == "" {
			nc.Reactions = slices.Clone(c.Active)
		}
		st.Chains = append(st.Chains, nc)
	}
	old := me.DeepCopy()
	st.UpdateTime = old.Status.UpdateTime
	if key(st) == key(old.Status) {
		return nil
	}
	st.UpdateTime = metav1.Now()
	me.Status = st
	// a patch, not an update: the agent is the status' one writer, and an
	// update from a cache a write behind would conflict (and a failed
	// reconcile waits longer each time, not Resync)
	if err := a.Status().Patch(ctx, me, client.MergeFrom(old)); client.IgnoreNotFound(err) != nil {
		logf.FromContext(ctx).Error(err, "reporting the node")
	}
	return nil
}

// SetupWithManager: one reconcile of the node for any change of what its
// plan is made from.
func (a *Agent) SetupWithManager(mgr ctrl.Manager) error {
	self := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: a.Node}}}
	})
	// another node's status matters for the pods on its ports only
	mine := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*zv1.ZeroNFNode), e.ObjectNew.(*zv1.ZeroNFNode)
		return n.Name == a.Node || o.Spec != n.Spec ||
			key(o.Status.Attachments) != key(n.Status.Attachments)
	}}
	return ctrl.NewControllerManagedBy(mgr).Named("zeronf-node").
		For(&zv1.ZeroNFNode{}, builder.WithPredicates(mine)).
		Watches(&zv1.ZeroNF{}, self).
		Watches(&zv1.ServiceChain{}, self).
		Watches(&zv1.NetworkFunction{}, self).
		Watches(&corev1.Pod{}, self).
		Complete(reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
			return a.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: a.Node}})
		}))
}

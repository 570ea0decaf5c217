package operator

// The operator against a real API server and etcd (controller-runtime's
// envtest: the binaries scripts/k8s-build.sh builds, .deps/k8s/bin, or
// $KUBEBUILDER_ASSETS): no kubelet, no scheduler, no controller manager, so
// what those would do (a DaemonSet's status, garbage collection) is not
// asked; the node agents' reports are written by the tests. make test sets
// ZERONF_ENVTEST=1: then missing binaries fail the tests rather than skip
// them.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

var kc client.Client // nil: no API server here

func TestMain(m *testing.M) {
	os.Exit(runEnvtest(m))
}

func runEnvtest(m *testing.M) int {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets, _ = filepath.Abs("../../.deps/k8s/bin")
	}
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); err != nil {
		if os.Getenv("ZERONF_ENVTEST") == "1" {
			fmt.Fprintf(os.Stderr, "envtest: no kube-apiserver in %s (scripts/k8s-build.sh apiserver)\n", assets)
			return 1
		}
		return m.Run() // the envtest tests skip
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	env := &envtest.Environment{BinaryAssetsDirectory: assets,
		CRDDirectoryPaths: []string{"../config/crd"}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		// what started before the failure (etcd, the API server) goes too
		_ = env.Stop()
		fmt.Fprintf(os.Stderr, "envtest: %v\n", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = zv1.AddToScheme(scheme)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme,
		Client:  ClientOptions(),
		Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest: %v\n", err)
		return 1
	}
	rec := mgr.GetEventRecorderFor("zeronf-operator")
	for _, r := range []interface{ SetupWithManager(ctrl.Manager) error }{
		&ZeroNFReconciler{Client: mgr.GetClient(), Scheme: scheme, Recorder: rec,
			Namespace: "zeronf-system", Image: "zeronf:test", DashboardImage: "dashboard:test"},
		&NetworkFunctionReconciler{Client: mgr.GetClient(), Scheme: scheme, Recorder: rec,
			Image: "zeronf:test"},
		&ServiceChainReconciler{Client: mgr.GetClient(), Recorder: rec,
			APIReader: mgr.GetAPIReader()},
	} {
		if err := r.SetupWithManager(mgr); err != nil {
			fmt.Fprintf(os.Stderr, "envtest: %v\n", err)
			return 1
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()
	kc, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest: %v\n", err)
		return 1
	}
	for _, ns := range []string{"zeronf-system", "t"} {
		_ = kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	return m.Run()
}

// zapLevel: the operator's log, errors only unless ZERONF_ENVTEST_LOG.
func zapLevel() zapcore.Level {
	if os.Getenv("ZERONF_ENVTEST_LOG") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

func needAPI(t *testing.T) context.Context {
	t.Helper()
	if kc == nil {
		t.Skip("no kube-apiserver (scripts/k8s-build.sh apiserver; make test builds it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventually: f true within 30 s.
func eventually(t *testing.T, what string, f func() (bool, string)) {
	t.Helper()
	last := ""
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var ok bool
		if ok, last = f(); ok {
			return
		}
	}
	t.Fatalf("%s: not after 30 s (last: %s)", what, last)
}

func node(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if err := kc.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"zeronf": "yes"}}}); err != nil {
		t.Fatal(err)
	}
}

func hostIDs(ctx context.Context) map[string]int32 {
	var l zv1.ZeroNFNodeList
	_ = kc.List(ctx, &l)
	out := map[string]int32{}
	for _, n := range l.Items {
		out[n.Name] = n.Spec.HostID
	}
	return out
}

func TestEnvZeroNFMakesTheNodeAgentsAndHostIDs(t *testing.T) {
	ctx := needAPI(t)
	for _, n := range []string{"a1", "a2", "a3"} {
		node(t, ctx, n)
	}
	z := &zv1.ZeroNF{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: zv1.ZeroNFSpec{
		NodeSelector: map[string]string{"zeronf": "yes"}, AppPorts: 2, NFSlots: 64,
		Ports:        []zv1.Port{{Name: "wan", Device: "net_null0"}},
		DefaultChain: []string{"port:wan"}, MetricsPort: 9479}}
	if err := kc.Create(ctx, z); err != nil {
		t.Fatal(err)
	}
	// the API server's defaults, and the DaemonSet from them
	var ds appsv1.DaemonSet
	eventually(t, "the node agents' DaemonSet", func() (bool, string) {
		err := kc.Get(ctx, types.NamespacedName{Namespace: "zeronf-system", Name: NodeAgentName}, &ds)
		return err == nil, fmt.Sprint(err)
	})
	m := ds.Spec.Template.Spec.Containers[0]
	if m.Image != "zeronf:test" || m.Command[len(m.Command)-1] != "port:0" {
		t.Fatalf("manager: %s %v", m.Image, m.Command)
	}
	if q := m.Resources.Limits["hugepages-2Mi"]; q.Value() != 256<<20 {
		t.Fatalf("hugepages (hugepagesMi's default 256): %v", q.String())
	}
	if ds.OwnerReferences[0].Name != "default" || len(ds.Spec.Template.Spec.InitContainers) != 1 {
		t.Fatalf("%+v", ds.ObjectMeta)
	}
	eventually(t, "a host id a node", func() (bool, string) {
		h := hostIDs(ctx)
		return fmt.Sprint(h) == "map[a1:1 a2:2 a3:3]", fmt.Sprint(h)
	})
	// a node gone frees its id; the next node takes the lowest free
	if err := kc.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a2"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a2's host id freed", func() (bool, string) {
		h := hostIDs(ctx)
		return fmt.Sprint(h) == "map[a1:1 a3:3]", fmt.Sprint(h)
	})
	node(t, ctx, "a4")
	eventually(t, "a4 takes host 2", func() (bool, string) {
		h := hostIDs(ctx)
		return fmt.Sprint(h) == "map[a1:1 a3:3 a4:2]", fmt.Sprint(h)
	})
	// a dashboard: its token's Secret (random, kept), its Service; gone
	// with it
	eventually(t, "a dashboard asked for", func() (bool, string) {
		_ = kc.Get(ctx, types.NamespacedName{Name: "default"}, z)
		z.Spec.Dashboard = &zv1.Dashboard{}
		err := kc.Update(ctx, z)
		return err == nil, fmt.Sprint(err)
	})
	dash := types.NamespacedName{Namespace: "zeronf-system", Name: DashboardName}
	var sec corev1.Secret
	var svc corev1.Service
	eventually(t, "the dashboard's Secret, Service and container", func() (bool, string) {
		e1, e2 := kc.Get(ctx, dash, &sec), kc.Get(ctx, dash, &svc)
		_ = kc.Get(ctx, types.NamespacedName{Namespace: "zeronf-system", Name: NodeAgentName}, &ds)
		return e1 == nil && e2 == nil && len(ds.Spec.Template.Spec.Containers) == 3,
			fmt.Sprint(e1, e2, len(ds.Spec.Template.Spec.Containers))
	})
	if len(sec.Data["token"]) != 48 || svc.Spec.Ports[0].Port != 8080 ||
		svc.Spec.Selector["app"] != NodeAgentName || svc.Spec.SessionAffinity != corev1.ServiceAffinityClientIP ||
		ds.Spec.Template.Spec.Containers[2].Image != "dashboard:test" {
		t.Fatalf("dashboard: %v %+v %s", sec.Data, svc.Spec, ds.Spec.Template.Spec.Containers[2].Image)
	}
	eventually(t, "the dashboard no more", func() (bool, string) {
		_ = kc.Get(ctx, types.NamespacedName{Name: "default"}, z)
		z.Spec.Dashboard = nil
		err := kc.Update(ctx, z)
		return err == nil, fmt.Sprint(err)
	})
	eventually(t, "the dashboard's Secret and Service gone", func() (bool, string) {
		e1, e2 := kc.Get(ctx, dash, &corev1.Secret{}), kc.Get(ctx, dash, &corev1.Service{})
		return apierrors.IsNotFound(e1) && apierrors.IsNotFound(e2), fmt.Sprint(e1, e2)
	})
	// a default chain naming no port: the reason in the status
	eventually(t, "the ZeroNF changed", func() (bool, string) {
		_ = kc.Get(ctx, types.NamespacedName{Name: "default"}, z)
		z.Spec.DefaultChain = []string{"port:nosuch"}
		err := kc.Update(ctx, z) // the operator writes its status too
		return err == nil, fmt.Sprint(err)
	})
	eventually(t, "the ZeroNF's status says why", func() (bool, string) {
		_ = kc.Get(ctx, types.NamespacedName{Name: "default"}, z)
		c := meta.FindStatusCondition(z.Status.Conditions, "Ready")
		return c != nil && c.Reason == "BadSpec" &&
			c.Message == `defaultChain[0]: no port "nosuch"`, fmt.Sprint(c)
	})
}

// report writes a node agent's report of node name.
func report(t *testing.T, ctx context.Context, name string, st zv1.ZeroNFNodeStatus) {
	t.Helper()
	var n zv1.ZeroNFNode
	eventually(t, "node "+name, func() (bool, string) {
		err := kc.Get(ctx, types.NamespacedName{Name: name}, &n)
		return err == nil, fmt.Sprint(err)
	})
	n.Status = st
	if err := kc.Status().Update(ctx, &n); err != nil {
		t.Fatal(err)
	}
}

func TestEnvChainsAndNetworkFunctionsFromTheNodesReports(t *testing.T) {
	ctx := needAPI(t)
	eventually(t, "nodes a1, a3, a4 (the test before)", func() (bool, string) {
		h := hostIDs(ctx)
		return len(h) == 3, fmt.Sprint(h)
	})
	mk := func(name string) *zv1.ServiceChain {
		c := &zv1.ServiceChain{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: name},
			Spec: zv1.ServiceChainSpec{FromPod: "cli", Hops: []zv1.Hop{{NetworkFunction: "fwd"}}}}
		if err := kc.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1, c2 := mk("c1"), mk("c2")
	ids := map[int32]bool{}
	for _, c := range []*zv1.ServiceChain{c1, c2} {
		eventually(t, c.Name+"'s path id", func() (bool, string) {
			_ = kc.Get(ctx, client.ObjectKeyFromObject(c), c)
			return c.Status.PathID > 0, fmt.Sprint(c.Status)
		})
		ids[c.Status.PathID] = true
	}
	if len(ids) != 2 {
		t.Fatalf("two chains, one path id: %v", ids)
	}
	fwd := &zv1.NetworkFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "fwd"},
		Spec: zv1.NetworkFunctionSpec{ServiceID: 7, Program: "zeronf-forward"}}
	if err := kc.Create(ctx, fwd); err != nil {
		t.Fatal(err)
	}
	// every node reports: c1 in force on all, c2 refused on a3
	for _, n := range []string{"a1", "a3", "a4"} {
		st := zv1.ZeroNFNodeStatus{Ready: true,
			Services: []zv1.NodeService{{ID: 7, NFs: 1, Rx: 100, Tx: 90, Drops: 10}},
			Chains: []zv1.NodeChain{{Namespace: "t", Name: "c1", Generation: c1.Generation},
				{Namespace: "t", Name: "c2", Generation: c2.Generation}}}
		if n == "a3" {
			st.Chains[1].Error = "port 3's chain is ServiceChain t/c1's"
		}
		report(t, ctx, n, st)
	}
	eventually(t, "c1 programmed on both", func() (bool, string) {
		_ = kc.Get(ctx, client.ObjectKeyFromObject(c1), c1)
		c := meta.FindStatusCondition(c1.Status.Conditions, "Ready")
		return c != nil && c.Status == metav1.ConditionTrue &&
			fmt.Sprint(c1.Status.Programmed) == "[a1 a3 a4]", fmt.Sprint(c1.Status)
	})
	eventually(t, "c2 not, saying why", func() (bool, string) {
		_ = kc.Get(ctx, client.ObjectKeyFromObject(c2), c2)
		c := meta.FindStatusCondition(c2.Status.Conditions, "Ready")
		return c != nil && c.Status == metav1.ConditionFalse &&
			c.Message == "a3: port 3's chain is ServiceChain t/c1's", fmt.Sprint(c2.Status)
	})
	eventually(t, "fwd's counts: the nodes' sums", func() (bool, string) {
		_ = kc.Get(ctx, client.ObjectKeyFromObject(fwd), fwd)
		s := fwd.Status
		return s.Registered == 3 && s.RxPackets == 300 && s.TxPackets == 270 &&
			s.DropPackets == 30, fmt.Sprint(s)
	})
	var dep appsv1.Deployment
	if err := kc.Get(ctx, types.NamespacedName{Namespace: "t", Name: "nf-fwd"}, &dep); err != nil {
		t.Fatal(err)
	}
	// a chain's path id is kept while it lives, and freed with it
	if err := kc.Delete(ctx, c1); err != nil {
		t.Fatal(err)
	}
	c3 := mk("c3")
	eventually(t, "c3 takes c1's path id", func() (bool, string) {
		_ = kc.Get(ctx, client.ObjectKeyFromObject(c3), c3)
		return c3.Status.PathID > 0, fmt.Sprint(c3.Status.PathID)
	})
	got := []int{int(c2.Status.PathID), int(c3.Status.PathID)}
	sort.Ints(got)
	if got[0] != 1 || got[1] != 2 {
		t.Fatalf("path ids %v, want the lowest free", got)
	}
}

// Autoscale and reactions decided from the load the node agents report:
// a NetworkFunction scaled out and back in, a reaction's NetworkFunction
// put into its chain and taken out, each with its event; a chain with an
// active reaction is programmed on a node only once the node has it.
func TestEnvPoliciesFromTheNodesReports(t *testing.T) {
	ctx := needAPI(t)
	fw := &zv1.NetworkFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "fw"},
		Spec: zv1.NetworkFunctionSpec{ServiceID: 20, Program: "zeronf-forward",
			Autoscale: &zv1.Autoscale{MaxReplicas: 2,
				ScaleOut: zv1.ScaleOut{RingOccupancyPercent: i32(50), ForSeconds: 1},
				ScaleIn:  zv1.ScaleIn{RingOccupancyPercentBelow: 5, ForSeconds: 1}}}}
	mon := &zv1.NetworkFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "mon"},
		Spec: zv1.NetworkFunctionSpec{ServiceID: 21, Program: "zeronf-monitor"}}
	filter := &zv1.NetworkFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "filter"},
		Spec: zv1.NetworkFunctionSpec{ServiceID: 22, Program: "zeronf-filter"}}
	ch := &zv1.ServiceChain{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "guarded"},
		Spec: zv1.ServiceChainSpec{From: "in", Hops: []zv1.Hop{{NetworkFunction: "mon"}, {NetworkFunction: "fw"}},
			Reactions: []zv1.Reaction{{Name: "syn",
				When:   zv1.ReactionWhen{NetworkFunction: "mon", Counter: "tcp_syn", Above: 100, ForSeconds: 1},
				Insert: zv1.ReactionInsert{NetworkFunction: "filter", After: "mon", RemoveAfterSeconds: 1}}}}}
	for _, o := range []client.Object{fw, mon, filter, ch} {
		if err := kc.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// the defaults the API server fills in
	if fw.Spec.Autoscale.MinReplicas == nil || *fw.Spec.Autoscale.MinReplicas != 1 ||
		ch.Spec.Reactions[0].Insert.After != "mon" {
		t.Fatalf("defaults: %+v %+v", fw.Spec.Autoscale, ch.Spec.Reactions)
	}
	load := func(fwNFs, occ int32, syn int64, chainReactions []string) {
		report(t, ctx, "a1", zv1.ZeroNFNodeStatus{Ready: true, IngressDropsPerSecond: 0,
			Services: []zv1.NodeService{
				{ID: 20, NFs: fwNFs, RingOccupancyPercent: occ},
				{ID: 21, NFs: 1, CounterRates: map[string]int64{"tcp_syn": syn}}},
			Chains: []zv1.NodeChain{{Namespace: "t", Name: "guarded", Generation: ch.Generation,
				Reactions: chainReactions}}})
	}
	replicas := func(n int32) func() (bool, string) {
		return func() (bool, string) {
			_ = kc.Get(ctx, client.ObjectKeyFromObject(fw), fw)
			return *fw.Spec.Replicas == n, fmt.Sprintf("%d %+v", *fw.Spec.Replicas, fw.Status.Autoscale)
		}
	}
	load(1, 80, 0, nil)
	eventually(t, "fw scaled out to 2", replicas(2))
	var dep appsv1.Deployment
	eventually(t, "its Deployment too", func() (bool, string) {
		_ = kc.Get(ctx, types.NamespacedName{Namespace: "t", Name: "nf-fw"}, &dep)
		return dep.Spec.Replicas != nil && *dep.Spec.Replicas == 2, fmt.Sprint(dep.Spec.Replicas)
	})
	eventually(t, "its autoscale status", func() (bool, string) {
		_ = kc.Get(ctx, client.ObjectKeyFromObject(fw), fw)
		a := fw.Status.Autoscale
		return a != nil && a.LastScaleTime != nil && a.RingOccupancyPercent == 80, fmt.Sprintf("%+v", a)
	})
	// at max, still loaded: stays; then idle: back to 1
	load(2, 90, 0, nil)
	time.Sleep(1500 * time.Millisecond)
	if ok, s := replicas(2)(); !ok {
		t.Fatalf("past max: %s", s)
	}
	load(2, 0, 0, nil)
	eventually(t, "fw scaled in to 1", replicas(1))
	eventually(t, "its events", func() (bool, string) {
		return hasEvent(ctx, "fw", "ScaledOut", "1 -> 2 replicas (RX rings 80% full, 0 ingress drops/s)") &&
			hasEvent(ctx, "fw", "ScaledIn", "2 -> 1 replicas"), ""
	})

	// the SYN counter of mon runs fast: filter in, after mon
	load(1, 0, 500, nil)
	eventually(t, "the reaction active", func() (bool, string) {
		_ = kc.Get(ctx, client.ObjectKeyFromObject(ch), ch)
		r := ch.Status.Reactions
		return len(r) == 1 && r[0].Active && r[0].Rate == 500, fmt.Sprintf("%+v", r)
	})
	programmed := func(want string) func() (bool, string) {
		return func() (bool, string) {
			_ = kc.Get(ctx, client.ObjectKeyFromObject(ch), ch)
			return fmt.Sprint(ch.Status.Programmed) == want, fmt.Sprint(ch.Status.Programmed)
		}
	}
	// a1 reports the chain without the reaction's hop: not programmed
	// there until it has it
	eventually(t, "a1 not programmed (no filter yet)", programmed("[]"))
	load(1, 0, 500, []string{"syn"})
	eventually(t, "a1 programmed with filter", programmed("[a1]"))
	load(1, 0, 0, []string{"syn"})
	eventually(t, "the reaction over", func() (bool, string) {
		_ = kc.Get(ctx, client.ObjectKeyFromObject(ch), ch)
		r := ch.Status.Reactions
		return len(r) == 1 && !r[0].Active && r[0].LastTransitionTime != nil, fmt.Sprintf("%+v", r)
	})
	eventually(t, "the reaction's events", func() (bool, string) {
		return hasEvent(ctx, "guarded", "ReactionInserted", "syn: filter put into the chain (mon tcp_syn at 500/s)") &&
			hasEvent(ctx, "guarded", "ReactionRemoved", "syn: filter taken out of the chain"), ""
	})
	// a reaction whose After is no hop stays out, saying why
	ch.Spec.Reactions[0].Insert.After = "nothere"
	if err := kc.Update(ctx, ch); err != nil {
		t.Fatal(err)
	}
	load(1, 0, 500, nil)
	eventually(t, "refused", func() (bool, string) {
		return hasEvent(ctx, "guarded", "ReactionFailed", `syn: no hop networkFunction "nothere" to put filter after`), ""
	})
	_ = kc.Get(ctx, client.ObjectKeyFromObject(ch), ch)
	if r := ch.Status.Reactions; len(r) != 1 || r[0].Active {
		t.Fatalf("reactions %+v", r)
	}
	for _, o := range []client.Object{fw, mon, filter, ch} {
		_ = kc.Delete(ctx, o)
	}
}

// hasEvent: an event of reason on the object named name of namespace t
// whose message starts with msg.
func hasEvent(ctx context.Context, name, reason, msg string) bool {
	var evs corev1.EventList
	_ = kc.List(ctx, &evs, client.InNamespace("t"))
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason && strings.HasPrefix(e.Message, msg) {
			return true
		}
	}
	return false
}

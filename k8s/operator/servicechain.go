package operator

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

// ServiceChainReconciler gives each ServiceChain its path id and its
// status from the nodes' reports: the node agents program the managers
// (k8s/nodeagent), each saying in its ZeroNFNode whether the chain is in
// force there.
type ServiceChainReconciler struct {
	client.Client
	Recorder record.EventRecorder
	// APIReader reads the chains' path ids from the API server itself:
	// the cache may not have the one this reconciler gave a moment ago
	// (two chains made together got the same id).
	APIReader client.Reader
}

// MaxPathID: a path crosses the fabric as NSH SPI PathID*256+host (24
// bits).
const MaxPathID = 65535

// +kubebuilder:rbac:groups=zeronf.dev,resources=servicechains,verbs=get;list;watch
// +kubebuilder:rbac:groups=zeronf.dev,resources=servicechains/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=zeronf.dev,resources=networkfunctions,verbs=get;list;watch

// Reconcile: the chain's path id (the lowest free, kept), the nodes that
// have it as it is now, and a Ready condition (or the first node's
// reason why not).
func (r *ServiceChainReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var c zv1.ServiceChain
	if err := r.Get(ctx, req.NamespacedName, &c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	st := c.Status.DeepCopy()
	if st.PathID == 0 {
		var all zv1.ServiceChainList
		if err := r.APIReader.List(ctx, &all); err != nil {
			return ctrl.Result{}, err
		}
		used := map[int32]bool{}
		for _, o := range all.Items {
			used[o.Status.PathID] = true
		}
		for id := int32(1); id <= MaxPathID; id++ {
			if !used[id] {
				st.PathID = id
				break
			}
		}
		if st.PathID == 0 {
			r.Recorder.Event(&c, corev1.EventTypeWarning, "NoPathID", "every path id is taken")
		}
	}
	var nodes zv1.ZeroNFNodeList
	if err := r.List(ctx, &nodes); err != nil {
		return ctrl.Result{}, err
	}
	recheck, err := r.react(ctx, &c, st, nodes.Items)
	if err != nil {
		return ctrl.Result{}, err
	}
	active := (&zv1.ServiceChain{Status: *st}).ActiveReactions()
	st.Programmed = nil
	var why []string
	reported := 0
	for _, n := range nodes.Items {
		for _, nc := range n.Status.Chains {
			if nc.Namespace != c.Namespace || nc.Name != c.Name || nc.Generation != c.Generation ||
				(nc.Error == "" && !slices.Equal(nc.Reactions, active)) {
				continue
			}
			reported++
			if nc.Error == "" {
				st.Programmed = append(st.Programmed, n.Name)
			} else {
				why = append(why, fmt.Sprintf("%s: %s", n.Name, nc.Error))
			}
		}
	}
	sort.Strings(st.Programmed)
	sort.Strings(why)
	cond := metav1.Condition{Type: "Ready", ObservedGeneration: c.Generation}
	switch {
	case len(why) > 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "NotProgrammed", why[0]
	case reported < len(nodes.Items) || len(nodes.Items) == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, "Programming"
		cond.Message = fmt.Sprintf("%d of %d nodes have it", reported, len(nodes.Items))
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, "Programmed"
		cond.Message = fmt.Sprintf("in force on %d nodes", reported)
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	st.ObservedGeneration = c.Generation
	if !slices.Equal(st.Programmed, c.Status.Programmed) || st.PathID != c.Status.PathID ||
		st.ObservedGeneration != c.Status.ObservedGeneration ||
		!equality.Semantic.DeepEqual(st.Reactions, c.Status.Reactions) ||
		!sameConditions(st.Conditions, c.Status.Conditions) {
		if cond.Status == metav1.ConditionFalse && len(why) > 0 {
			r.Recorder.Event(&c, corev1.EventTypeWarning, cond.Reason, cond.Message)
		}
		c.Status = *st
		if err := r.Status().Update(ctx, &c); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	if recheck {
		return ctrl.Result{RequeueAfter: PolicyRecheck}, nil
	}
	return ctrl.Result{}, nil
}

// react sets st.Reactions from c's reactions and the rates of their
// counters, an event for each that goes in or out (one whose
// NetworkFunction or After hop is missing stays out, and says so);
// recheck: one is holding.
func (r *ServiceChainReconciler) react(ctx context.Context, c *zv1.ServiceChain,
	st *zv1.ServiceChainStatus, nodes []zv1.ZeroNFNode) (recheck bool, err error) {
	var out []zv1.ReactionStatus
	now := time.Now()
	for i := range c.Spec.Reactions {
		re := &c.Spec.Reactions[i]
		var last *zv1.ReactionStatus
		for j := range c.Status.Reactions {
			if c.Status.Reactions[j].Name == re.Name {
				last = &c.Status.Reactions[j]
			}
		}
		var watched zv1.NetworkFunction
		rate := int64(0)
		err := r.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: re.When.NetworkFunction}, &watched)
		switch {
		case err == nil:
			rate = serviceLoad(nodes, watched.Spec.ServiceID, re.When.Counter).rate
		case !apierrors.IsNotFound(err):
			return false, err
		}
		rs, changed := reactionStep(re, last, rate, now)
		if changed && rs.Active {
			if why := r.cannotInsert(ctx, c, re); why != "" {
				r.Recorder.Eventf(c, corev1.EventTypeWarning, "ReactionFailed", "%s: %s", re.Name, why)
				rs = zv1.ReactionStatus{Name: re.Name, Rate: rate}
				changed = false
			}
		}
		if changed {
			verb, reason := "put into", "ReactionInserted"
			if !rs.Active {
				verb, reason = "taken out of", "ReactionRemoved"
			}
			r.Recorder.Eventf(c, corev1.EventTypeNormal, reason, "%s: %s %s the chain (%s %s at %d/s)",
				re.Name, re.Insert.NetworkFunction, verb, re.When.NetworkFunction, re.When.Counter, rate)
		}
		recheck = recheck || rs.Since != nil
		out = append(out, rs)
	}
	st.Reactions = out
	return recheck, nil
}

// cannotInsert: why re's NetworkFunction cannot go into c now ("": it
// can).
func (r *ServiceChainReconciler) cannotInsert(ctx context.Context, c *zv1.ServiceChain, re *zv1.Reaction) string {
	var nf zv1.NetworkFunction
	if err := r.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: re.Insert.NetworkFunction}, &nf); err != nil {
		return fmt.Sprintf("NetworkFunction %q: %v", re.Insert.NetworkFunction, err)
	}
	if re.Insert.After != "" && !slices.ContainsFunc(c.Spec.Hops, func(h zv1.Hop) bool {
		return h.NetworkFunction == re.Insert.After
	}) {
		return fmt.Sprintf("no hop networkFunction %q to put %s after", re.Insert.After, re.Insert.NetworkFunction)
	}
	return ""
}

// allOf: every object of list, as requests (a node's report concerns
// every chain).
func allOf(c client.Client, newList func() client.ObjectList) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := newList()
		if err := c.List(ctx, list); err != nil {
			return nil
		}
		var out []reconcile.Request
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			m := o.(client.Object)
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{
				Namespace: m.GetNamespace(), Name: m.GetName()}})
			return nil
		})
		return out
	})
}

// SetupWithManager watches the chains and the nodes' reports.
func (r *ServiceChainReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&zv1.ServiceChain{}).
		Watches(&zv1.ZeroNFNode{}, allOf(mgr.GetClient(), func() client.ObjectList { return &zv1.ServiceChainList{} })).
		Complete(r)
}

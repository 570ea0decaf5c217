package operator

import (
	"context"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
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
}

// MaxPathID: a path crosses the fabric as NSH SPI PathID*256+host (24
// bits).
const MaxPathID = 65535

// +kubebuilder:rbac:groups=zeronf.dev,resources=servicechains,verbs=get;list;watch
// +kubebuilder:rbac:groups=zeronf.dev,resources=servicechains/status,verbs=get;update;patch

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
		if err := r.List(ctx, &all); err != nil {
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
	st.Programmed = nil
	var why []string
	reported := 0
	for _, n := range nodes.Items {
		for _, nc := range n.Status.Chains {
			if nc.Namespace != c.Namespace || nc.Name != c.Name || nc.Generation != c.Generation {
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
		!sameConditions(st.Conditions, c.Status.Conditions) {
		if cond.Status == metav1.ConditionFalse && len(why) > 0 {
			r.Recorder.Event(&c, corev1.EventTypeWarning, cond.Reason, cond.Message)
		}
		c.Status = *st
		if err := r.Status().Update(ctx, &c); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	return ctrl.Result{}, nil
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

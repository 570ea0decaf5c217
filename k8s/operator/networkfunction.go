// Package operator reconciles ZeroNF's API (k8s/api/v1alpha1) into
// Kubernetes objects (docs/kubernetes.md): a NetworkFunction into a
// Deployment of NF pods, each asking its node's device plugin for one NF
// slot of its kind, the NetworkFunction's status from that Deployment's.
package operator

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

// LabelNF marks what a NetworkFunction made (its name).
const LabelNF = "zeronf.dev/networkfunction"

// NetworkFunctionReconciler makes and keeps each NetworkFunction's
// Deployment.
type NetworkFunctionReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder record.EventRecorder
	// Image is the NF pods' image when the NetworkFunction names none.
	Image string
}

// DeploymentName is the Deployment a NetworkFunction owns.
func DeploymentName(nf *zv1.NetworkFunction) string { return "nf-" + nf.Name }

// Resource is the device plugin's resource an NF of nf asks for.
func Resource(nf *zv1.NetworkFunction) corev1.ResourceName {
	if nf.Spec.TrustGroup != "" {
		return corev1.ResourceName("zeronf.dev/group-" + string(nf.Spec.TrustGroup))
	}
	return "zeronf.dev/nf"
}

// Command is an NF pod's command line: the program (a bare name is in
// the image's /usr/local/bin) with libzeronf's service and name, then the
// NF's own arguments. Instance, slot and trust group come from the
// device plugin's environment.
func Command(nf *zv1.NetworkFunction) []string {
	if len(nf.Spec.Command) > 0 {
		return append([]string(nil), nf.Spec.Command...)
	}
	prog := nf.Spec.Program
	if !path.IsAbs(prog) {
		prog = path.Join("/usr/local/bin", prog)
	}
	cmd := []string{prog, "-s", strconv.Itoa(int(nf.Spec.ServiceID)), "-n", nf.Name}
	if len(nf.Spec.Args) > 0 {
		cmd = append(cmd, "--")
		cmd = append(cmd, nf.Spec.Args...)
	}
	return cmd
}

// fill writes what the Deployment must be into dep (its other fields,
// the API server's defaults, are left as they are).
func (r *NetworkFunctionReconciler) fill(dep *appsv1.Deployment, nf *zv1.NetworkFunction) {
	labels := map[string]string{LabelNF: nf.Name}
	replicas := int32(1)
	if nf.Spec.Replicas != nil {
		replicas = *nf.Spec.Replicas
	}
	image := nf.Spec.Image
	if image == "" {
		image = r.Image
	}
	res := *nf.Spec.Resources.DeepCopy()
	if res.Limits == nil {
		res.Limits = corev1.ResourceList{}
	}
	res.Limits[Resource(nf)] = resource.MustParse("1")
	for _, p := range nf.Spec.TxPorts {
		res.Limits[corev1.ResourceName("zeronf.dev/txq-"+string(p))] = resource.MustParse("1")
	}
	no := false
	dep.Labels = labels
	dep.Spec.Replicas = &replicas
	dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	dep.Spec.Template.Labels = labels
	ps := &dep.Spec.Template.Spec
	ps.NodeSelector = nf.Spec.NodeSelector
	grace := int64(5)
	ps.TerminationGracePeriodSeconds = &grace
	c := corev1.Container{
		Name:            "nf",
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         Command(nf),
		Resources:       res,
		SecurityContext: &corev1.SecurityContext{
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			AllowPrivilegeEscalation: &no,
		},
	}
	ps.Volumes = nil
	for i, cm := range nf.Spec.ConfigMaps {
		name := fmt.Sprintf("config-%d", i)
		mode := int32(0o444) // set, not the API server's default: no endless updates
		ps.Volumes = append(ps.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{DefaultMode: &mode,
				LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name,
			MountPath: cm.MountPath, ReadOnly: true})
	}
	if len(ps.Containers) == 1 {
		// what the API server defaulted stays (no endless updates)
		old := ps.Containers[0]
		c.TerminationMessagePath = old.TerminationMessagePath
		c.TerminationMessagePolicy = old.TerminationMessagePolicy
		if image == old.Image && old.ImagePullPolicy != "" {
			c.ImagePullPolicy = old.ImagePullPolicy
		}
	}
	ps.Containers = []corev1.Container{c}
}

// +kubebuilder:rbac:groups=zeronf.dev,resources=networkfunctions,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=zeronf.dev,resources=networkfunctions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=zeronf.dev,resources=zeronfnodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes the NetworkFunction's Deployment what its spec says and
// its status what the Deployment's says. Deleting the NetworkFunction
// deletes the Deployment (its owner reference) and its pods.
func (r *NetworkFunctionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var nf zv1.NetworkFunction
	if err := r.Get(ctx, req.NamespacedName, &nf); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// the managers' count of its NFs and packets (the node agents'
	// reports)
	var nodes zv1.ZeroNFNodeList
	if err := r.List(ctx, &nodes); err != nil {
		return ctrl.Result{}, err
	}
	var scaled *zv1.AutoscaleStatus
	if nf.Spec.Autoscale != nil {
		var err error
		if scaled, err = r.autoscale(ctx, &nf, nodes.Items); err != nil {
			return ctrl.Result{}, err
		}
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
		Name: DeploymentName(&nf), Namespace: nf.Namespace}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		r.fill(dep, &nf)
		return controllerutil.SetControllerReference(&nf, dep, r.Scheme)
	})
	if err != nil {
		r.Recorder.Eventf(&nf, corev1.EventTypeWarning, "DeploymentFailed",
			"deployment %s: %v", dep.Name, err)
		return ctrl.Result{}, err
	}
	if op != controllerutil.OperationResultNone {
		r.Recorder.Eventf(&nf, corev1.EventTypeNormal, "Deployment",
			"deployment %s %s", dep.Name, op)
	}
	st := nf.Status.DeepCopy()
	st.Autoscale = scaled
	st.Registered, st.RxPackets, st.TxPackets, st.DropPackets = 0, 0, 0, 0
	for _, n := range nodes.Items {
		for _, s := range n.Status.Services {
			if s.ID == nf.Spec.ServiceID {
				st.Registered += s.NFs
				st.RxPackets += s.Rx
				st.TxPackets += s.Tx
				st.DropPackets += s.Drops
			}
		}
	}
	st.Replicas = dep.Status.Replicas
	st.Ready = dep.Status.ReadyReplicas
	st.ObservedGeneration = nf.Generation
	want := int32(1)
	if nf.Spec.Replicas != nil {
		want = *nf.Spec.Replicas
	}
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse,
		Reason: "Starting", ObservedGeneration: nf.Generation,
		Message: fmt.Sprintf("%d of %d NF pods ready", st.Ready, want)}
	if st.Ready == want && dep.Status.UpdatedReplicas == want {
		cond.Status, cond.Reason = metav1.ConditionTrue, "AllReady"
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	if !equalStatus(&nf.Status, st) {
		nf.Status = *st
		if err := r.Status().Update(ctx, &nf); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	if scaled != nil && scaled.Pressure != "" {
		return ctrl.Result{RequeueAfter: PolicyRecheck}, nil
	}
	return ctrl.Result{}, nil
}

// autoscale sets nf's replicas as its autoscale says (a patch of its
// spec, as a HorizontalPodAutoscaler writes a Deployment's, and an
// event) and answers its autoscale status.
func (r *NetworkFunctionReconciler) autoscale(ctx context.Context, nf *zv1.NetworkFunction,
	nodes []zv1.ZeroNFNode) (*zv1.AutoscaleStatus, error) {
	l := serviceLoad(nodes, nf.Spec.ServiceID, "")
	replicas := int32(1)
	if nf.Spec.Replicas != nil {
		replicas = *nf.Spec.Replicas
	}
	st, want, why := autoscaleStep(nf.Spec.Autoscale, nf.Status.Autoscale, l.occ, l.drops,
		replicas, l.nfs, time.Now())
	if want != replicas {
		old := nf.DeepCopy()
		nf.Spec.Replicas = &want
		if err := r.Patch(ctx, nf, client.MergeFrom(old)); err != nil {
			return nil, err
		}
		reason := "ScaledOut"
		if want < replicas {
			reason = "ScaledIn"
		}
		r.Recorder.Eventf(nf, corev1.EventTypeNormal, reason, "%d -> %d replicas (%s)",
			replicas, want, why)
	}
	return st, nil
}

func equalStatus(a, b *zv1.NetworkFunctionStatus) bool {
	return equality.Semantic.DeepEqual(a.Autoscale, b.Autoscale) && a.Replicas == b.Replicas && a.Ready == b.Ready && a.Registered == b.Registered &&
		a.RxPackets == b.RxPackets && a.TxPackets == b.TxPackets && a.DropPackets == b.DropPackets &&
		a.ObservedGeneration == b.ObservedGeneration && sameConditions(a.Conditions, b.Conditions)
}

// sameConditions: the same conditions but for their times (a status
// written again only when something else changed).
func sameConditions(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason ||
			x.Message != y.Message || x.ObservedGeneration != y.ObservedGeneration {
			return false
		}
	}
	return true
}

// SetupWithManager watches NetworkFunctions and the Deployments they own.
func (r *NetworkFunctionReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&zv1.NetworkFunction{}).
		Owns(&appsv1.Deployment{}).
		Watches(&zv1.ZeroNFNode{}, allOf(mgr.GetClient(), func() client.ObjectList {
			return &zv1.NetworkFunctionList{}
		})).
		Complete(r)
}

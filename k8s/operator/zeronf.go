package operator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

// NodeAgentName is the node agent's DaemonSet (and its pods' app label).
const NodeAgentName = "zeronf-node"

// Where the node agent finds the node's runtime directories, hugepages,
// kubelet's device plugins and the CNI directories (hostPath).
const (
	hostRunDir     = "/var/run/dpdk"
	hostHugeDir    = "/mnt/huge"
	hostPluginDir  = "/var/lib/kubelet/device-plugins"
	hostCNIBinDir  = "/opt/cni/bin"
	hostCNIState   = "/var/lib/cni/zeronf"
	agentCNIBinDir = "/host/opt/cni/bin"
)

// ZeroNFReconciler makes and keeps the node agents' DaemonSet of the
// cluster's ZeroNF (named default).
type ZeroNFReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder record.EventRecorder
	// Namespace: where the DaemonSet goes (the operator's).
	Namespace string
	// Image: when the ZeroNF names none.
	Image string
	// DashboardImage: when the ZeroNF's dashboard names none.
	DashboardImage string
}

// SlotRanges: the slots the device plugin gives each resource, as the
// ZeroNF's spec divides a manager's 96: the shared pool's from 0, then
// each trust group's in order.
func SlotRanges(z *zv1.ZeroNFSpec) (nf string, groups []string) {
	next := int32(0)
	span := func(n int32) string {
		s := fmt.Sprintf("%d-%d", next, next+n-1)
		next += n
		return s
	}
	if z.NFSlots > 0 {
		nf = span(z.NFSlots)
	}
	for _, g := range z.TrustGroups {
		groups = append(groups, string(g.Name)+"="+span(g.Slots))
	}
	return nf, groups
}

// ManagerCommand is the node's manager's command line: instance = the
// node's name, the ports in order, then the pool's pairs as
// net_af_packet ports named as they are.
func ManagerCommand(z *zv1.ZeroNFSpec) []string {
	cmd := []string{"/usr/local/bin/zeronf-mgr", "-i", "$(NODE_NAME)",
		"--huge-dir", hostHugeDir,
		"--mem", strconv.Itoa(int(z.HugepagesMi)),
		"--pool-size", strconv.Itoa(int(z.PoolSize))}
	for i, p := range z.Ports {
		cmd = append(cmd, "-p", p.Device, "--port-name", fmt.Sprintf("%d=%s", i, p.Name))
	}
	for i := 0; i < int(z.AppPorts); i++ {
		name := fmt.Sprintf("%s%d", z.AppPortPrefix, i)
		// a device name of its own (a port's device may be net_af_packet0)
		cmd = append(cmd, "-p", fmt.Sprintf("net_af_packet_%s,iface=%s", name, name),
			"--port-name", fmt.Sprintf("%d=%s", len(z.Ports)+i, name))
	}
	for _, g := range z.TrustGroups {
		cmd = append(cmd, "--trust-group", fmt.Sprintf("%s:%d", g.Name, g.Buffers))
	}
	ids := z.PortIDs()
	for _, t := range z.Tenants {
		cmd = append(cmd, "--tenant", fmt.Sprintf("%s=%s,services=%d-%d", t.Name, t.TrustGroup,
			t.ServiceIDs.First, t.ServiceIDs.Last))
		for _, sl := range t.Slices {
			arg := fmt.Sprintf("%s:%d", t.Name, ids[string(sl.Port)])
			switch {
			case sl.VLAN != 0:
				arg += fmt.Sprintf(":vlan=%d", sl.VLAN)
			case sl.MAC != "":
				arg += ":mac=" + sl.MAC
			case sl.Prefix != "":
				arg += ":prefix=" + sl.Prefix
			}
			cmd = append(cmd, "--slice", arg)
		}
	}
	// NFs get a port's TX queue only as their pods' resources say
	cmd = append(cmd, "--nf-tx-queues", strconv.Itoa(int(z.NFTxQueues)),
		"--nf-tx-queues-by-request")
	if len(z.DefaultChain) > 0 {
		hops, _ := z.DefaultChainHops()
		cmd = append(cmd, "-c", strings.Join(hops, ","))
	}
	return append(cmd, z.ManagerArgs...)
}

// AppPortOwners: the app ports that are a tenant's, as zeronf-node
// pool's -owner takes them (PORT=NAMESPACE: that namespace's pods only).
func AppPortOwners(z *zv1.ZeroNFSpec) []string {
	ids := z.PortIDs()
	var out []string
	for _, t := range z.Tenants {
		for _, sl := range t.Slices {
			if ids[string(sl.Port)] >= len(z.Ports) {
				out = append(out, string(sl.Port)+"="+t.Name)
			}
		}
	}
	return out
}

// HugepageLimit: the manager pod's hugepages: its --mem, and each trust
// group's file (a pool of its own, in 2 MiB pages: its buffers at 3 KiB
// each at most, its NFs' rings and slots within 32 MiB).
func HugepageLimit(z *zv1.ZeroNFSpec) int64 {
	b := int64(z.HugepagesMi) << 20
	for _, g := range z.TrustGroups {
		b += (int64(g.Buffers)*3072 + 32<<20 + 2<<20 - 1) &^ (2<<20 - 1)
	}
	return b
}

// fillAgent writes the node agent's DaemonSet into ds: per node a pod
// (host network and pids: the manager owns the node's ports; it takes an
// NF's pid from the kernel) of the manager and zeronf-node's device
// plugin, and, with app ports, an init container making the CNI pool.
func (r *ZeroNFReconciler) fillAgent(ds *appsv1.DaemonSet, z *zv1.ZeroNF) {
	spec := &z.Spec
	image := spec.Image
	if image == "" {
		image = r.Image
	}
	labels := map[string]string{"app": NodeAgentName}
	env := []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
	hp := func(name, path string, t corev1.HostPathType) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &t}}}
	}
	mount := func(name, path string) corev1.VolumeMount {
		return corev1.VolumeMount{Name: name, MountPath: path}
	}
	vols := []corev1.Volume{
		hp("run", hostRunDir, corev1.HostPathDirectoryOrCreate),
		hp("huge", hostHugeDir, corev1.HostPathDirectory),
		hp("plugins", hostPluginDir, corev1.HostPathDirectory),
	}
	yes, no := true, false
	res := *spec.Resources.DeepCopy()
	if res.Limits == nil {
		res.Limits = corev1.ResourceList{}
	}
	if _, ok := res.Limits[corev1.ResourceMemory]; !ok {
		res.Limits[corev1.ResourceMemory] = resource.MustParse("512Mi")
	}
	res.Limits["hugepages-2Mi"] = *resource.NewQuantity(HugepageLimit(spec), resource.BinarySI)
	if res.Requests != nil {
		delete(res.Requests, "hugepages-2Mi")
	}
	manager := corev1.Container{
		Name: "manager", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: ManagerCommand(spec), Env: env, Resources: res,
		SecurityContext: &corev1.SecurityContext{Privileged: &yes},
		VolumeMounts:    []corev1.VolumeMount{mount("run", hostRunDir), mount("huge", hostHugeDir)},
	}
	nfSlots, groups := SlotRanges(spec)
	agentCmd := []string{"/usr/local/bin/zeronf-node", "agent",
		"-instance", "$(NODE_NAME)", "-nf-slots", nfSlots}
	for _, g := range groups {
		agentCmd = append(agentCmd, "-group", g)
	}
	txq := spec.TxQueuePorts()
	for _, name := range slices.Sorted(maps.Keys(txq)) {
		agentCmd = append(agentCmd, "-tx-queues", fmt.Sprintf("%s=%d:%d", name, txq[name], spec.NFTxQueues))
	}
	agent := corev1.Container{
		Name: "agent", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
		Env: env,
		// ready: kubelet has the slots of a ready manager (an NF pod
		// before that is refused at admission)
		ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
			Exec: &corev1.ExecAction{Command: []string{"/usr/local/bin/zeronf-node", "ready"}}}},
		VolumeMounts: []corev1.VolumeMount{mount("run", hostRunDir),
			mount("huge", hostHugeDir), mount("plugins", hostPluginDir)},
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no,
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
	}
	if spec.MetricsPort > 0 {
		agentCmd = append(agentCmd, "-metrics-address", fmt.Sprintf(":%d", spec.MetricsPort))
		agent.Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: spec.MetricsPort,
			HostPort: spec.MetricsPort, Protocol: corev1.ProtocolTCP}}
	}
	var inits []corev1.Container
	if spec.AppPorts > 0 {
		vols = append(vols, hp("cni-bin", hostCNIBinDir, corev1.HostPathDirectory),
			hp("cni-state", hostCNIState, corev1.HostPathDirectoryOrCreate))
		poolCmd := []string{"/usr/local/bin/zeronf-node", "pool",
			"-prefix", spec.AppPortPrefix,
			"-count", strconv.Itoa(int(spec.AppPorts)),
			"-mtu", strconv.Itoa(int(spec.AppPortMTU)),
			"-cni-bin-dir", agentCNIBinDir}
		for _, o := range AppPortOwners(spec) {
			poolCmd = append(poolCmd, "-owner", o)
		}
		inits = append(inits, corev1.Container{
			Name: "pool", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: poolCmd,
			// links, and IPv6 off on the manager's ends (/proc/sys)
			SecurityContext: &corev1.SecurityContext{Privileged: &yes},
			VolumeMounts: []corev1.VolumeMount{mount("cni-state", hostCNIState),
				mount("cni-bin", agentCNIBinDir)},
		})
		agent.Command = append(agentCmd, "-pool", spec.AppPortPrefix)
		agent.VolumeMounts = append(agent.VolumeMounts, mount("cni-state", hostCNIState))
		// it removes the pool's free pairs as it leaves
		agent.SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
	} else {
		agent.Command = agentCmd
	}
	grace := int64(10)
	ds.Labels = labels
	ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	ds.Spec.Template.Labels = labels
	ps := &ds.Spec.Template.Spec
	ps.ServiceAccountName = NodeAgentName
	ps.HostNetwork = true
	ps.HostPID = true
	ps.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	ps.TerminationGracePeriodSeconds = &grace
	ps.NodeSelector = spec.NodeSelector
	ps.Volumes = vols
	containers := []corev1.Container{manager, agent}
	if spec.Dashboard != nil {
		c, v := r.dashboardContainer(spec.Dashboard, env)
		containers = append(containers, c)
		ps.Volumes = append(ps.Volumes, v)
	}
	keepDefaults(ps.InitContainers, inits)
	keepDefaults(ps.Containers, containers)
	ps.InitContainers = inits
	ps.Containers = containers
}

// keepDefaults: what the API server defaulted in the containers it has
// stays in the new ones of the same name (no endless updates).
func keepDefaults(old, c []corev1.Container) {
	for i := range c {
		for _, o := range old {
			if o.Name != c[i].Name {
				continue
			}
			c[i].TerminationMessagePath = o.TerminationMessagePath
			c[i].TerminationMessagePolicy = o.TerminationMessagePolicy
			if p := c[i].ReadinessProbe; p != nil && o.ReadinessProbe != nil {
				q := o.ReadinessProbe
				p.TimeoutSeconds, p.SuccessThreshold, p.FailureThreshold =
					q.TimeoutSeconds, q.SuccessThreshold, q.FailureThreshold
				if p.HTTPGet != nil && q.HTTPGet != nil {
					p.HTTPGet.Scheme = q.HTTPGet.Scheme
				}
			}
		}
	}
}

// +kubebuilder:rbac:groups=zeronf.dev,resources=zeronfs,verbs=get;list;watch
// +kubebuilder:rbac:groups=zeronf.dev,resources=zeronfs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=zeronf.dev,resources=zeronfnodes,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// Reconcile makes the node agents' DaemonSet what the ZeroNF says and
// the ZeroNF's status what the DaemonSet's says. Deleting the ZeroNF
// deletes the DaemonSet (its owner reference) and so every node agent.
func (r *ZeroNFReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var z zv1.ZeroNF
	if err := r.Get(ctx, req.NamespacedName, &z); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{
		Name: NodeAgentName, Namespace: r.Namespace}}
	if z.Spec.Image == "" && r.Image == "" {
		r.Recorder.Event(&z, corev1.EventTypeWarning, "NoImage",
			"spec.image is empty and the operator has no ZERONF_IMAGE")
		return ctrl.Result{}, nil
	}
	_, err := z.Spec.DefaultChainHops()
	if err == nil {
		err = z.Spec.TenantsError()
	}
	if err != nil {
		r.Recorder.Event(&z, corev1.EventTypeWarning, "BadSpec", err.Error())
		return ctrl.Result{}, r.setCondition(ctx, &z, metav1.ConditionFalse, "BadSpec", err.Error())
	}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, ds, func() error {
		r.fillAgent(ds, &z)
		return controllerutil.SetControllerReference(&z, ds, r.Scheme)
	})
	if err != nil {
		r.Recorder.Eventf(&z, corev1.EventTypeWarning, "DaemonSetFailed",
			"daemonset %s/%s: %v", r.Namespace, ds.Name, err)
		return ctrl.Result{}, err
	}
	if op != controllerutil.OperationResultNone {
		r.Recorder.Eventf(&z, corev1.EventTypeNormal, "DaemonSet",
			"daemonset %s/%s %s", r.Namespace, ds.Name, op)
	}
	if err := r.syncNodes(ctx, &z); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.syncDashboard(ctx, &z); err != nil {
		r.Recorder.Eventf(&z, corev1.EventTypeWarning, "DashboardFailed", "dashboard: %v", err)
		return ctrl.Result{}, err
	}
	st := z.Status.DeepCopy()
	st.Nodes = ds.Status.DesiredNumberScheduled
	st.Ready = ds.Status.NumberReady
	st.ObservedGeneration = z.Generation
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse,
		Reason: "Starting", ObservedGeneration: z.Generation,
		Message: fmt.Sprintf("%d of %d node agents ready", st.Ready, st.Nodes)}
	if st.Nodes > 0 && st.Ready == st.Nodes && ds.Status.UpdatedNumberScheduled == st.Nodes &&
		ds.Status.ObservedGeneration == ds.Generation {
		cond.Status, cond.Reason = metav1.ConditionTrue, "AllReady"
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	if st.Nodes != z.Status.Nodes || st.Ready != z.Status.Ready ||
		st.ObservedGeneration != z.Status.ObservedGeneration ||
		!sameConditions(st.Conditions, z.Status.Conditions) {
		z.Status = *st
		if err := r.Status().Update(ctx, &z); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	return ctrl.Result{}, nil
}

// syncNodes gives each node of the ZeroNF a ZeroNFNode (its host id:
// the lowest free, kept while it lives) and takes those of nodes gone.
func (r *ZeroNFReconciler) syncNodes(ctx context.Context, z *zv1.ZeroNF) error {
	var nodes corev1.NodeList
	if err := r.List(ctx, &nodes, client.MatchingLabels(z.Spec.NodeSelector)); err != nil {
		return err
	}
	// by name: nodes that come together get their ids in that order
	// (the cache lists them in no order)
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	var have zv1.ZeroNFNodeList
	if err := r.List(ctx, &have); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, n := range nodes.Items {
		want[n.Name] = true
	}
	used := map[int32]bool{}
	exists := map[string]bool{}
	for i := range have.Items {
		zn := &have.Items[i]
		if !want[zn.Name] {
			if err := r.Delete(ctx, zn); client.IgnoreNotFound(err) != nil {
				return err
			}
			r.Recorder.Eventf(z, corev1.EventTypeNormal, "NodeGone", "node %s: host %d free", zn.Name, zn.Spec.HostID)
			continue
		}
		used[zn.Spec.HostID] = true
		exists[zn.Name] = true
	}
	next := int32(1)
	for _, n := range nodes.Items {
		if exists[n.Name] {
			continue
		}
		for used[next] {
			next++
		}
		if next > 254 {
			r.Recorder.Eventf(z, corev1.EventTypeWarning, "NoHostID", "node %s: every host id 1-254 taken", n.Name)
			return nil
		}
		zn := &zv1.ZeroNFNode{ObjectMeta: metav1.ObjectMeta{Name: n.Name},
			Spec: zv1.ZeroNFNodeSpec{HostID: next}}
		if err := controllerutil.SetControllerReference(z, zn, r.Scheme); err != nil {
			return err
		}
		if err := r.Create(ctx, zn); err != nil {
			return err
		}
		used[next] = true
		r.Recorder.Eventf(z, corev1.EventTypeNormal, "Node", "node %s: host %d", n.Name, next)
	}
	return nil
}

// setCondition: the Ready condition alone changed.
func (r *ZeroNFReconciler) setCondition(ctx context.Context, z *zv1.ZeroNF,
	st metav1.ConditionStatus, reason, msg string) error {
	c := metav1.Condition{Type: "Ready", Status: st, Reason: reason, Message: msg,
		ObservedGeneration: z.Generation}
	if !meta.SetStatusCondition(&z.Status.Conditions, c) {
		return nil
	}
	return client.IgnoreNotFound(r.Status().Update(ctx, z))
}

// SetupWithManager watches the ZeroNF and the DaemonSet it owns.
func (r *ZeroNFReconciler) SetupWithManager(mgr ctrl.Manager) error {
	def := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "default"}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&zv1.ZeroNF{}).
		Owns(&appsv1.DaemonSet{}).
		Owns(&zv1.ZeroNFNode{}).
		Watches(&corev1.Node{}, def, builder.WithPredicates(predicate.Funcs{
			// nodes come, go and change labels; their status is not ours
			UpdateFunc: func(e event.UpdateEvent) bool {
				return !maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
			}})).
		Complete(r)
}

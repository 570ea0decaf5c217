package operator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

// DashboardName: the dashboard's Service and the Secret of its token.
const DashboardName = "zeronf-dashboard"

// dashboardTokenDir: where the dashboard container finds the token.
const dashboardTokenDir = "/etc/zeronf-dashboard"

// ClientOptions: what the operator reads of Secrets and Services (its
// dashboard's, in its namespace) it reads from the API server, so that it
// needs no cluster-wide watch on either.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{
		DisableFor: []client.Object{&corev1.Secret{}, &corev1.Service{}}}}
}

// DashboardCommand: zeronf api on the node's manager, on every address
// (the pod has the node's network) at port, with the Secret's token; the
// names a browser may reach it by: through kubectl port-forward
// (localhost) and the Service's.
func DashboardCommand(namespace string, port int32) []string {
	cmd := []string{"/usr/bin/python3", "-m", "zeronf", "-i", "$(NODE_NAME)", "api",
		"--listen", fmt.Sprintf("0.0.0.0:%d", port),
		"--token-file", dashboardTokenDir + "/token", "--allow-host", "localhost"}
	svc := DashboardName + "." + namespace
	for _, h := range []string{DashboardName, svc, svc + ".svc", svc + ".svc.cluster.local"} {
		cmd = append(cmd, "--allow-host", h)
	}
	return cmd
}

// dashboardContainer: the node agent pod's dashboard: no capability, a
// read-only root, the node's runtime directory (the manager's control
// socket) and the token.
func (r *ZeroNFReconciler) dashboardContainer(d *zv1.Dashboard, env []corev1.EnvVar) (corev1.Container, corev1.Volume) {
	image := d.Image
	if image == "" {
		image = r.DashboardImage
	}
	port := dashboardPort(d)
	no, yes := false, true
	mode := int32(0o400) // zeronf api refuses a token others can read
	vol := corev1.Volume{Name: "dashboard-token", VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: DashboardName, DefaultMode: &mode}}}
	c := corev1.Container{
		Name: "dashboard", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: DashboardCommand(r.Namespace, port), Env: env,
		Ports: []corev1.ContainerPort{{Name: "dashboard", ContainerPort: port,
			HostPort: port, Protocol: corev1.ProtocolTCP}},
		// the page itself needs no token
		ReadinessProbe: &corev1.Probe{PeriodSeconds: 2, ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(port)}}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "run", MountPath: hostRunDir, ReadOnly: true},
			{Name: vol.Name, MountPath: dashboardTokenDir, ReadOnly: true}},
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no,
			ReadOnlyRootFilesystem: &yes,
			Capabilities:           &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
	}
	return c, vol
}

// +kubebuilder:rbac:groups="",namespace=zeronf-system,resources=secrets,verbs=get;create;delete
// +kubebuilder:rbac:groups="",namespace=zeronf-system,resources=services,verbs=get;create;update;delete

// syncDashboard: with a dashboard, its token's Secret (made once, random)
// and its Service (the node agents' pods, a client kept on one node: each
// node's dashboard is its own manager's); without, neither. Both are the
// ZeroNF's (deleted with it).
func (r *ZeroNFReconciler) syncDashboard(ctx context.Context, z *zv1.ZeroNF) error {
	key := client.ObjectKey{Namespace: r.Namespace, Name: DashboardName}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: DashboardName, Namespace: r.Namespace}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: DashboardName, Namespace: r.Namespace}}
	if z.Spec.Dashboard == nil {
		for _, o := range []client.Object{sec, svc} {
			if err := r.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
		return nil
	}
	err := r.Get(ctx, key, sec)
	if apierrors.IsNotFound(err) {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		sec.Data = map[string][]byte{"token": []byte(hex.EncodeToString(b))}
		if err := controllerutil.SetControllerReference(z, sec, r.Scheme); err != nil {
			return err
		}
		err = r.Create(ctx, sec)
	}
	if err != nil {
		return err
	}
	port := dashboardPort(z.Spec.Dashboard)
	_, err = controllerutil.CreateOrUpdate(ctx, r.Client, svc, func() error {
		svc.Labels = map[string]string{"app": NodeAgentName}
		svc.Spec.Selector = map[string]string{"app": NodeAgentName}
		svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: port,
			TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}}
		return controllerutil.SetControllerReference(z, svc, r.Scheme)
	})
	return err
}

// dashboardPort: the API server defaults it; an object built in Go may not
// have it.
func dashboardPort(d *zv1.Dashboard) int32 {
	if d.Port == 0 {
		return 8080
	}
	return d.Port
}

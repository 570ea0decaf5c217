package operator

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

func nf(spec zv1.NetworkFunctionSpec) *zv1.NetworkFunction {
	x := &zv1.NetworkFunction{Spec: spec}
	x.Name = "fwd"
	return x
}

func TestCommand(t *testing.T) {
	cases := []struct {
		spec zv1.NetworkFunctionSpec
		want string
	}{
		{zv1.NetworkFunctionSpec{ServiceID: 3, Program: "zeronf-forward"},
			"[/usr/local/bin/zeronf-forward -s 3 -n fwd]"},
		{zv1.NetworkFunctionSpec{ServiceID: 7, Program: "/opt/nf", Args: []string{"-x", "1"}},
			"[/opt/nf -s 7 -n fwd -- -x 1]"},
		{zv1.NetworkFunctionSpec{ServiceID: 7, Program: "p", Command: []string{"/bin/nf", "-s", "9"}},
			"[/bin/nf -s 9]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(Command(nf(c.spec))); got != c.want {
			t.Errorf("%+v: %s, want %s", c.spec, got, c.want)
		}
	}
}

func TestPodAsksForItsKindOfSlot(t *testing.T) {
	r := &NetworkFunctionReconciler{Image: "zeronf:dev"}
	three := int32(3)
	x := nf(zv1.NetworkFunctionSpec{ServiceID: 1, Program: "zeronf-forward",
		Replicas: &three, TrustGroup: "red",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
			corev1.ResourceMemory: resource.MustParse("64Mi")}}})
	var dep appsv1.Deployment
	r.fill(&dep, x)
	c := dep.Spec.Template.Spec.Containers[0]
	if q := c.Resources.Limits["zeronf.dev/group-red"]; q.Value() != 1 {
		t.Fatalf("limits %v", c.Resources.Limits)
	}
	if q := c.Resources.Limits[corev1.ResourceMemory]; q.String() != "64Mi" {
		t.Fatalf("limits %v", c.Resources.Limits)
	}
	if _, ok := x.Spec.Resources.Limits["zeronf.dev/group-red"]; ok {
		t.Fatal("the NetworkFunction's own spec was changed")
	}
	if *dep.Spec.Replicas != 3 || c.Image != "zeronf:dev" ||
		*c.SecurityContext.AllowPrivilegeEscalation ||
		fmt.Sprint(c.SecurityContext.Capabilities.Drop) != "[ALL]" {
		t.Fatalf("deployment %+v", dep.Spec)
	}
	if dep.Spec.Selector.MatchLabels[LabelNF] != "fwd" ||
		dep.Spec.Template.Labels[LabelNF] != "fwd" {
		t.Fatal("labels")
	}
	// filled again over what the API server defaulted: the same
	dep.Spec.Template.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
	r.fill(&dep, x)
	if dep.Spec.Template.Spec.Containers[0].TerminationMessagePath != "/dev/termination-log" {
		t.Fatal("a default the API server set was undone (an update each reconcile)")
	}
}

// A ConfigMap of the spec is a read-only volume of the NF's container.
func TestConfigMapsAreMounted(t *testing.T) {
	r := &NetworkFunctionReconciler{Image: "zeronf:dev"}
	x := nf(zv1.NetworkFunctionSpec{ServiceID: 1, Program: "zeronf-router",
		Args:       []string{"--routes", "/etc/routes/table"},
		ConfigMaps: []zv1.ConfigMapMount{{Name: "table", MountPath: "/etc/routes"}}})
	var dep appsv1.Deployment
	r.fill(&dep, x)
	ps := dep.Spec.Template.Spec
	m := ps.Containers[0].VolumeMounts
	if len(ps.Volumes) != 1 || ps.Volumes[0].ConfigMap.Name != "table" ||
		*ps.Volumes[0].ConfigMap.DefaultMode != 0o444 ||
		len(m) != 1 || m[0].Name != ps.Volumes[0].Name || m[0].MountPath != "/etc/routes" || !m[0].ReadOnly {
		t.Fatalf("volumes %+v mounts %+v", ps.Volumes, m)
	}
	x.Spec.ConfigMaps = nil
	r.fill(&dep, x)
	if len(dep.Spec.Template.Spec.Volumes) != 0 || len(dep.Spec.Template.Spec.Containers[0].VolumeMounts) != 0 {
		t.Fatal("a ConfigMap taken out of the spec stays mounted")
	}
}

// txPorts: a queue of each port as the pod's resources (the device plugin
// tells the NF to ask the manager for it).
func TestTxPortsAreResources(t *testing.T) {
	r := &NetworkFunctionReconciler{Image: "zeronf:dev"}
	x := nf(zv1.NetworkFunctionSpec{ServiceID: 1, Program: "zeronf-forward",
		TxPorts: []zv1.PortName{"sink", "tap"}})
	var dep appsv1.Deployment
	r.fill(&dep, x)
	l := dep.Spec.Template.Spec.Containers[0].Resources.Limits
	for _, name := range []corev1.ResourceName{"zeronf.dev/nf", "zeronf.dev/txq-sink", "zeronf.dev/txq-tap"} {
		if q := l[name]; q.Value() != 1 {
			t.Fatalf("%s: %v", name, l)
		}
	}
}

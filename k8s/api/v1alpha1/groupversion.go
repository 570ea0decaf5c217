// Package v1alpha1 is ZeroNF's Kubernetes API (docs/kubernetes.md): the
// custom resources the operator reconciles into node agents, NF pods and
// the managers' chains and rules. The CRDs in k8s/config/crd are generated
// from these types (make crds: controller-gen), with their validation.
//
// +kubebuilder:object:generate=true
// +groupName=zeronf.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is zeronf.dev/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "zeronf.dev", Version: "v1alpha1"}
	// SchemeBuilder registers the types.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds them to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A name as the manager takes it: a trust group's, a port's (ZN_NAME_LEN).
// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]{1,31}$`
type ZeroNFName string

// A port's name: a ZeroNFName that is not a number (a chain's port:N is
// the port of that id).
// +kubebuilder:validation:MaxLength=31
// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]*[A-Za-z_-][A-Za-z0-9_-]*$`
type PortName string

// NetworkFunctionSpec is one service of NFs: its replicas are pods, each
// an NF in one of its node's slots (the device plugin's resources).
// +kubebuilder:validation:XValidation:rule="!has(self.command) || size(self.command) > 0",message="command: the NF's program and its arguments, or leave it out"
type NetworkFunctionSpec struct {
	// ServiceID is the service's id on every node's manager (a chain's
	// hop names it; lib/shm/zn_shm.h ZN_MAX_SERVICES).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=255
	ServiceID int32 `json:"serviceId"`

	// Image holds the NF's program; the ZeroNF image if left out.
	// +optional
	Image string `json:"image,omitempty"`

	// Program is the NF's binary in the image, by name in
	// /usr/local/bin (zeronf-forward, zeronf-monitor, zeronf-dpi ...) or
	// a path.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Program string `json:"program"`

	// Args are the NF's own arguments (after libzeronf's, which the
	// operator sets: instance, service, name).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Args []string `json:"args,omitempty"`

	// Command replaces the whole command line (Program and Args unused).
	// +optional
	Command []string `json:"command,omitempty"`

	// Replicas: NF pods of the service, over the cluster's nodes; one
	// node's manager takes 16 of a service (lib/shm/zn_shm.h
	// ZN_MAX_REPLICAS: a 17th NF is refused, ENOSPC, and its pod says so).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4096
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// TrustGroup puts its NFs in a trust group of the managers: each pod
	// then maps that group's packet memory only
	// (zeronf.dev/group-NAME).
	// +optional
	TrustGroup ZeroNFName `json:"trustGroup,omitempty"`

	// NodeSelector chooses the nodes its pods may run on.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Resources of each NF container (CPU, memory); the NF slot is
	// added by the operator.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// NetworkFunctionStatus is what the managers and Kubernetes say of it.
type NetworkFunctionStatus struct {
	// Replicas: its pods; Ready: those running; Registered: NFs the
	// nodes' managers have registered for its service.
	Replicas   int32 `json:"replicas"`
	Ready      int32 `json:"ready"`
	Registered int32 `json:"registered"`
	// Packets its NFs received, sent and dropped (the managers' counters).
	RxPackets   int64 `json:"rxPackets"`
	TxPackets   int64 `json:"txPackets"`
	DropPackets int64 `json:"dropPackets"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// NetworkFunction is a service of NFs run as pods.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
// +kubebuilder:resource:shortName=nf,categories=zeronf-all
// +kubebuilder:printcolumn:name="Service",type=integer,JSONPath=`.spec.serviceId`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Registered",type=integer,JSONPath=`.status.registered`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NetworkFunction struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NetworkFunctionSpec   `json:"spec"`
	Status NetworkFunctionStatus `json:"status,omitempty"`
}

// NetworkFunctionList is a list of them.
//
// +kubebuilder:object:root=true
type NetworkFunctionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NetworkFunction `json:"items"`
}

// Hop is one step of a chain: a NetworkFunction of the namespace (its
// service, wherever its replicas run: on another node the chain goes on
// over the fabric), a manager's port by name, a pod of the namespace on
// a ZeroNF port (the CNI plugin's: its node's port), or drop.
// +kubebuilder:validation:XValidation:rule="[has(self.networkFunction), has(self.port), has(self.pod), has(self.drop) && self.drop].filter(x, x).size() == 1",message="a hop is one of networkFunction, port, pod or drop: true"
type Hop struct {
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	NetworkFunction string `json:"networkFunction,omitempty"`
	// +optional
	Port PortName `json:"port,omitempty"`
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Pod string `json:"pod,omitempty"`
	// +optional
	Drop bool `json:"drop,omitempty"`
}

// Match is a wildcard rule's match (the manager's rule.add,
// docs/control-protocol.md): what is left out matches anything.
type Match struct {
	// IP version: 4 or 6 (left out with no address: both).
	// +optional
	// +kubebuilder:validation:Enum=4;6
	IP int32 `json:"ip,omitempty"`
	// Proto: icmp, tcp, udp, gre, esp, icmpv6, sctp, or a number.
	// +optional
	// +kubebuilder:validation:Pattern=`^(icmp|tcp|udp|gre|esp|icmpv6|sctp|[0-9]{1,3})$`
	Proto string `json:"proto,omitempty"`
	// Src, Dst: an address or a prefix (10.0.0.0/8, 2001:db8::/32).
	// +optional
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) || isIP(self)",message="an address or a prefix"
	Src string `json:"src,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) || isIP(self)",message="an address or a prefix"
	Dst string `json:"dst,omitempty"`
	// Sport, Dport: a port or LO-HI.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,5}(-[0-9]{1,5})?$`
	Sport string `json:"sport,omitempty"`
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,5}(-[0-9]{1,5})?$`
	Dport string `json:"dport,omitempty"`
}

// Rule sends what matches to the chain, ahead of its ingress's default.
type Rule struct {
	Match Match `json:"match"`
	// Priority: higher wins; equal: the older rule.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=8000
	Priority int32 `json:"priority,omitempty"`
}

// ServiceChainSpec: packets entering from a port (on every node whose
// manager has it), or from a pod's ZeroNF port, go through the hops in
// order.
// +kubebuilder:validation:XValidation:rule="!(has(self.from) && has(self.fromPod))",message="from or fromPod, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.rules) || !(has(self.from) || has(self.fromPod))",message="rules match what enters any port: leave from and fromPod out"
type ServiceChainSpec struct {
	// From is the port whose ingress the chain takes; with neither From
	// nor FromPod (nor Rules): the managers' default chain.
	// +optional
	From PortName `json:"from,omitempty"`
	// FromPod: the ingress of this pod's ZeroNF port (a pod of the
	// namespace, attached by the CNI plugin).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	FromPod string `json:"fromPod,omitempty"`
	// Hops, in order (include/zeronf/step.h ZN_MAX_CHAIN_STEPS).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Hops []Hop `json:"hops"`
	// Rules: only what they match takes the chain (left out: all of
	// From's ingress).
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Rules []Rule `json:"rules,omitempty"`
}

// ServiceChainStatus: where the chain is in force.
type ServiceChainStatus struct {
	// PathID: the operator's number for the chain; a path from node H
	// crosses the fabric as NSH service path PathID*256+H.
	// +optional
	PathID int32 `json:"pathId,omitempty"`
	// Nodes whose managers have the chain as it is now.
	// +optional
	Programmed []string `json:"programmed,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// ServiceChain is a chain of NetworkFunctions and ports.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=chain,categories=zeronf-all
// +kubebuilder:printcolumn:name="From",type=string,JSONPath=`.spec.from`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ServiceChain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ServiceChainSpec   `json:"spec"`
	Status ServiceChainStatus `json:"status,omitempty"`
}

// ServiceChainList is a list of them.
//
// +kubebuilder:object:root=true
type ServiceChainList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServiceChain `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NetworkFunction{}, &NetworkFunctionList{},
		&ServiceChain{}, &ServiceChainList{})
}

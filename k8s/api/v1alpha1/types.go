package v1alpha1

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A name as the manager takes it: a trust group's, a port's (ZN_NAME_LEN).
// +kubebuilder:validation:MaxLength=31
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
// +kubebuilder:validation:XValidation:rule="!has(self.txPorts) || !has(self.trustGroup)",message="an NF of a trust group has no TX queue of its own (the workers send its packets): leave txPorts out"
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

	// TxPorts: ports each NF transmits on itself, a queue of its own
	// (zeronf.dev/txq-PORT, ZeroNF nfTxQueues); not for an NF of a trust
	// group, whose packets the workers send.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	TxPorts []PortName `json:"txPorts,omitempty"`

	// ConfigMaps mounted read-only into each NF's container: files its
	// arguments name (a router's --routes, a DPI's protocols file).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	ConfigMaps []ConfigMapMount `json:"configMaps,omitempty"`

	// Autoscale: the operator sets Replicas from the managers' load (a
	// deployment file's autoscale; docs/kubernetes.md "Autoscaling").
	// +optional
	Autoscale *Autoscale `json:"autoscale,omitempty"`
}

// ConfigMapMount: a ConfigMap of the namespace, its keys files in
// MountPath.
type ConfigMapMount struct {
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9_./-]*$`
	// +kubebuilder:validation:XValidation:rule="!self.contains('..')",message="a path without .."
	MountPath string `json:"mountPath"`
}

// Autoscale scales a NetworkFunction out by one replica while its load
// holds above a threshold for ScaleOut.ForSeconds, and in by one while it
// holds below ScaleIn's for ScaleIn.ForSeconds, within MinReplicas and
// MaxReplicas. The load is what the node agents report: the mean fill of
// its NFs' RX rings, the packets lost at the ingress of the nodes it runs
// on.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas is more than maxReplicas"
// +kubebuilder:validation:XValidation:rule="has(self.scaleOut.ringOccupancyPercent) || has(self.scaleOut.ingressDropsPerSecond)",message="scaleOut: ringOccupancyPercent, ingressDropsPerSecond or both"
type Autoscale struct {
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4096
	// +kubebuilder:default=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	MaxReplicas int32    `json:"maxReplicas"`
	ScaleOut    ScaleOut `json:"scaleOut"`
	// +optional
	ScaleIn ScaleIn `json:"scaleIn,omitempty"`
}

// ScaleOut: when to add a replica (either threshold reached).
type ScaleOut struct {
	// RingOccupancyPercent: its NFs' RX rings at least this full, on
	// average.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	RingOccupancyPercent *int32 `json:"ringOccupancyPercent,omitempty"`
	// IngressDropsPerSecond: at least this many packets a second lost at
	// the ingress of the nodes its NFs run on (the first hop full or
	// stalled, the ports' own misses).
	// +optional
	// +kubebuilder:validation:Minimum=1
	IngressDropsPerSecond *int64 `json:"ingressDropsPerSecond,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=3
	ForSeconds int32 `json:"forSeconds,omitempty"`
}

// ScaleIn: when to take a replica away (no drops and the rings below).
type ScaleIn struct {
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	RingOccupancyPercentBelow int32 `json:"ringOccupancyPercentBelow,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=10
	ForSeconds int32 `json:"forSeconds,omitempty"`
}

// AutoscaleStatus: the load as the operator last saw it and what it
// asks for.
type AutoscaleStatus struct {
	RingOccupancyPercent  int32 `json:"ringOccupancyPercent"`
	IngressDropsPerSecond int64 `json:"ingressDropsPerSecond"`
	// Pressure: "Out", "In" or "" (neither), held since Since.
	// +optional
	Pressure string `json:"pressure,omitempty"`
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// +optional
	LastScaleTime *metav1.Time `json:"lastScaleTime,omitempty"`
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
	Autoscale *AutoscaleStatus `json:"autoscale,omitempty"`
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
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Rx",type=integer,JSONPath=`.status.rxPackets`
// +kubebuilder:printcolumn:name="Tx",type=integer,JSONPath=`.status.txPackets`
// +kubebuilder:printcolumn:name="Drops",type=integer,JSONPath=`.status.dropPackets`
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
	// Reactions put a NetworkFunction into the chain while another's
	// counter runs fast (a deployment file's reactions).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	Reactions []Reaction `json:"reactions,omitempty"`
}

// Reaction: while When.NetworkFunction's counter When.Counter (summed
// over its NFs on every node) rises faster than When.Above a second for
// When.ForSeconds, Insert.NetworkFunction is a hop of the chain, right
// after Insert.After's (or first); it leaves once the rate has been at
// or below When.Above for Insert.RemoveAfterSeconds.
type Reaction struct {
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`
	Name   string         `json:"name"`
	When   ReactionWhen   `json:"when"`
	Insert ReactionInsert `json:"insert"`
}

// ReactionWhen: the NF counter watched.
type ReactionWhen struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	NetworkFunction string `json:"networkFunction"`
	// Counter: one of its NFs' counters (nf.list's "counters": the
	// monitor's tcp_syn, udp ...).
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]{1,23}$`
	Counter string `json:"counter"`
	// Above: per second.
	// +kubebuilder:validation:Minimum=0
	Above int64 `json:"above"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=2
	ForSeconds int32 `json:"forSeconds,omitempty"`
}

// ReactionInsert: the NetworkFunction put in.
type ReactionInsert struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	NetworkFunction string `json:"networkFunction"`
	// After: the networkFunction hop it follows; left out: first.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	After string `json:"after,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +kubebuilder:default=10
	RemoveAfterSeconds int32 `json:"removeAfterSeconds,omitempty"`
}

// ReactionStatus: a reaction as the operator last saw it.
type ReactionStatus struct {
	Name string `json:"name"`
	// Active: its NetworkFunction is in the chain.
	Active bool `json:"active"`
	// Rate: the counter's, per second.
	Rate int64 `json:"rate"`
	// Since: when the rate last crossed Above (held that way since).
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ServiceChainStatus: where the chain is in force.
type ServiceChainStatus struct {
	// PathID: the operator's number for the chain; a path from node H
	// crosses the fabric as NSH service path PathID*256+H.
	// +optional
	PathID int32 `json:"pathId,omitempty"`
	// Nodes whose managers have the chain as it is now (its active
	// reactions' hops too).
	// +optional
	Programmed []string `json:"programmed,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	Reactions []ReactionStatus `json:"reactions,omitempty"`
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
// +kubebuilder:printcolumn:name="Path",type=integer,JSONPath=`.status.pathId`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.programmed`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ServiceChain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ServiceChainSpec   `json:"spec"`
	Status ServiceChainStatus `json:"status,omitempty"`
}

// ActiveReactions: the names of the chain's reactions in force (its
// status, the operator's), sorted.
func (c *ServiceChain) ActiveReactions() []string {
	var out []string
	for _, r := range c.Status.Reactions {
		if r.Active {
			out = append(out, r.Name)
		}
	}
	sort.Strings(out)
	return out
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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ZeroNFNodeSpec: what the operator gives a node's ZeroNF.
type ZeroNFNodeSpec struct {
	// HostID: the node's host id on the fabric (chains across nodes:
	// "svc:S@HOST"), unique in the cluster.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=254
	HostID int32 `json:"hostId"`
}

// NodePort is one of the node's manager's ports.
type NodePort struct {
	Name string `json:"name"`
	ID   int32  `json:"id"`
	Rx   int64  `json:"rx"`
	Tx   int64  `json:"tx"`
}

// NodeAttachment is a pod on one of the node's ports (the CNI plugin's).
type NodeAttachment struct {
	Namespace string   `json:"namespace"`
	Pod       string   `json:"pod"`
	Interface string   `json:"interface"`
	Port      string   `json:"port"`
	IPs       []string `json:"ips,omitempty"`
}

// NodeService is a service as the node's manager counts it.
type NodeService struct {
	ID int32 `json:"id"`
	// NFs registered for it on the node.
	NFs int32 `json:"nfs"`
	Rx  int64 `json:"rx"`
	Tx  int64 `json:"tx"`
	// Drops: its NFs' drops.
	Drops int64 `json:"drops"`
	// RingOccupancyPercent: its NFs' inputs' mean fill (each NF's RX
	// ring or a link into it from another NF, the fullest).
	// +optional
	RingOccupancyPercent int32 `json:"ringOccupancyPercent,omitempty"`
	// CounterRates: its NFs' counters (summed), per second over the
	// agent's last sampling interval.
	// +optional
	CounterRates map[string]int64 `json:"counterRates,omitempty"`
}

// NodeChain: a ServiceChain as the node's manager has it.
type NodeChain struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Generation of the ServiceChain in force on the node.
	Generation int64 `json:"generation"`
	// Error: why it is not (empty: it is).
	// +optional
	Error string `json:"error,omitempty"`
	// Reactions of the chain whose hops it has (the active ones).
	// +optional
	Reactions []string `json:"reactions,omitempty"`
}

// ZeroNFNodeStatus: the node agent's report.
type ZeroNFNodeStatus struct {
	// Ready: the manager serves and the agent has applied what it should.
	Ready bool `json:"ready"`
	// +optional
	Ports []NodePort `json:"ports,omitempty"`
	// +optional
	Attachments []NodeAttachment `json:"attachments,omitempty"`
	// +optional
	Services []NodeService `json:"services,omitempty"`
	// +optional
	Chains []NodeChain `json:"chains,omitempty"`
	// IngressDropsPerSecond: packets lost at the ingress of its ports
	// (the first hop full or stalled, the ports' own misses), per second
	// over the agent's last sampling interval.
	// +optional
	IngressDropsPerSecond int64 `json:"ingressDropsPerSecond,omitempty"`
	// FabricIP: the node's address on the fabric, if it has one.
	// +optional
	FabricIP string `json:"fabricIP,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	UpdateTime metav1.Time `json:"updateTime,omitempty"`
}

// ZeroNFNode is ZeroNF on one node: named as the node, made by the
// operator for each node of the ZeroNF, its status written by the node's
// agent.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=znode,categories=zeronf-all
// +kubebuilder:printcolumn:name="Host",type=integer,JSONPath=`.spec.hostId`
// +kubebuilder:printcolumn:name="Ready",type=boolean,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Fabric",type=string,JSONPath=`.status.fabricIP`
type ZeroNFNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ZeroNFNodeSpec   `json:"spec"`
	Status ZeroNFNodeStatus `json:"status,omitempty"`
}

// ZeroNFNodeList is a list of them.
//
// +kubebuilder:object:root=true
type ZeroNFNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ZeroNFNode `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ZeroNFNode{}, &ZeroNFNodeList{})
}

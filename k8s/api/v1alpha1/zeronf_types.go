package v1alpha1

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Port is one of a node's manager's ports.
type Port struct {
	// Name: chains and ServiceChains name it (port:NAME).
	Name PortName `json:"name"`
	// Device: DPDK's device arguments, as the manager's -p takes them: a
	// virtual device (net_null0, net_af_packet0,iface=eth1, net_tap0) or a
	// PCI address.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.:,=/-]+$`
	Device string `json:"device"`
}

// TrustGroup is a trust group of every node's manager: a packet pool of
// its own that only its NFs map (docs/security.md).
type TrustGroup struct {
	Name ZeroNFName `json:"name"`
	// Buffers of its pool.
	// +kubebuilder:validation:Minimum=63
	// +kubebuilder:validation:Maximum=1048575
	// +kubebuilder:default=1023
	// +optional
	Buffers int32 `json:"buffers,omitempty"`
	// Slots: its NFs at most on a node (zeronf.dev/group-NAME).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=95
	// +kubebuilder:default=8
	// +optional
	Slots int32 `json:"slots,omitempty"`
}

// Tenant is an isolated virtual router of every node's manager
// (docs/security.md "Tenants"): a trust group with its own slices of the
// ports, range of service ids and chain. On the cluster it is the
// namespace of its name: its NetworkFunctions (in its trust group, of its
// service ids: no other namespace's may be), its ServiceChain (the
// tenant's chain: what its slices receive), the pods given its app ports.
type Tenant struct {
	// Name: the tenant's on the managers, and its namespace.
	// +kubebuilder:validation:MaxLength=31
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// TrustGroup: one of TrustGroups, its NFs' and its packets' pool.
	TrustGroup ZeroNFName     `json:"trustGroup"`
	ServiceIDs ServiceIDRange `json:"serviceIds"`
	// Slices: what of the ports is its own: a whole port (an app port
	// so given is for its namespace's pods only), or a port's packets of
	// a VLAN, a destination MAC or a destination prefix.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Slices []Slice `json:"slices,omitempty"`
}

// ServiceIDRange: service ids First..Last.
// +kubebuilder:validation:XValidation:rule="self.first <= self.last",message="first is above last"
type ServiceIDRange struct {
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=255
	First int32 `json:"first"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=255
	Last int32 `json:"last"`
}

// Slice is what of a port is a tenant's (the manager's --slice).
// +kubebuilder:validation:XValidation:rule="[has(self.vlan), has(self.mac), has(self.prefix)].filter(x, x).size() <= 1",message="a slice is a whole port, or one of vlan, mac or prefix"
type Slice struct {
	Port PortName `json:"port"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	VLAN int32 `json:"vlan,omitempty"`
	// MAC: a destination MAC.
	// +optional
	// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$`
	MAC string `json:"mac,omitempty"`
	// Prefix: a destination IPv4 or IPv6 prefix.
	// +optional
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="a prefix (ADDRESS/LENGTH)"
	Prefix string `json:"prefix,omitempty"`
}

// ZeroNFSpec is ZeroNF on the cluster's nodes: on each, a node agent (the
// manager, owning the node's ports and hugepage pool, and zeronf-node
// beside it: the device plugin, the CNI plugin's pool).
// +kubebuilder:validation:XValidation:rule="self.nfSlots + (has(self.trustGroups) ? self.trustGroups.map(g, g.slots).sum() : 0) <= 96",message="nfSlots and the trust groups' slots: 96 at most (a manager's NFs)"
// +kubebuilder:validation:XValidation:rule="(has(self.ports) ? size(self.ports) : 0) + self.appPorts <= 32",message="ports and appPorts: 32 at most"
// +kubebuilder:validation:XValidation:rule="!has(self.tenants) || self.tenants.all(t, has(self.trustGroups) && self.trustGroups.exists(g, g.name == t.trustGroup))",message="a tenant's trustGroup is one of trustGroups"
type ZeroNFSpec struct {
	// Image holds the manager, zeronf-node and the NFs; the operator's
	// image if left out.
	// +optional
	Image string `json:"image,omitempty"`

	// NodeSelector: the nodes that run ZeroNF (all if left out).
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Ports of each node's manager, ids 0, 1, ... in this order.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Ports []Port `json:"ports,omitempty"`

	// AppPorts: veth pairs a node for the CNI plugin (type zeronf): the
	// manager's ports after Ports, named PREFIXi (AppPortPrefix).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +kubebuilder:default=0
	// +optional
	AppPorts int32 `json:"appPorts"`

	// AppPortPrefix names the pairs (and their ports).
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]{0,7}$`
	// +kubebuilder:default=znapp
	// +optional
	AppPortPrefix string `json:"appPortPrefix,omitempty"`

	// AppPortMTU: the pairs' MTU.
	// +kubebuilder:validation:Minimum=576
	// +kubebuilder:validation:Maximum=9000
	// +kubebuilder:default=1500
	// +optional
	AppPortMTU int32 `json:"appPortMTU,omitempty"`

	// HugepagesMi: the manager's hugepage memory (its --mem), counted
	// against its pod (hugepages-2Mi).
	// +kubebuilder:validation:Minimum=32
	// +kubebuilder:validation:Maximum=65536
	// +kubebuilder:default=256
	// +optional
	HugepagesMi int32 `json:"hugepagesMi,omitempty"`

	// PoolSize: buffers of the shared packet pool (--pool-size).
	// +kubebuilder:validation:Minimum=1023
	// +kubebuilder:validation:Maximum=4194303
	// +kubebuilder:default=8191
	// +optional
	PoolSize int32 `json:"poolSize,omitempty"`

	// NFSlots: NFs of the shared pool at most on a node (zeronf.dev/nf).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=96
	// +kubebuilder:default=64
	// +optional
	NFSlots int32 `json:"nfSlots"`

	// NFTxQueues: TX queues for NFs on each port whose driver lets an
	// NF transmit itself (net_null, net_tap: mgr/port/port_nftx.c),
	// zeronf.dev/txq-PORTNAME; the managers give one only to an NF whose
	// pod has it (NetworkFunction txPorts), the workers transmit for the
	// others.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=95
	// +kubebuilder:default=8
	// +optional
	NFTxQueues int32 `json:"nfTxQueues"`

	// TrustGroups of every node's manager.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	TrustGroups []TrustGroup `json:"trustGroups,omitempty"`

	// Tenants of every node's manager: isolated virtual routers, each a
	// namespace of the cluster (docs/kubernetes.md "Tenants").
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, b.trustGroup == a.trustGroup))",message="one tenant a trust group"
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.all(b, a.name == b.name || a.serviceIds.last < b.serviceIds.first || b.serviceIds.last < a.serviceIds.first))",message="the tenants' service ids overlap"
	Tenants []Tenant `json:"tenants,omitempty"`

	// DefaultChain: the managers' default chain while no ServiceChain
	// is (hops as the manager's -c takes them: svc:ID, port:NAME, drop).
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^(svc:[0-9]{1,3}|port:[A-Za-z0-9_-]{1,31}|drop)$`
	DefaultChain []string `json:"defaultChain,omitempty"`

	// Fabric: chains across nodes (docs/multihost.md): each node's
	// manager on it with an address of Subnet (the subnet's address plus
	// its host id), every other node a peer.
	// +optional
	Fabric *Fabric `json:"fabric,omitempty"`

	// MetricsPort: each node agent serves its manager's Prometheus
	// metrics on the node's address at this port (0: not).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=9479
	// +optional
	MetricsPort int32 `json:"metricsPort"`

	// Dashboard: each node's manager's dashboard and REST API
	// (docs/operations.md) in its node agent's pod, behind the Service
	// zeronf-dashboard, with a token from the Secret zeronf-dashboard.
	// +optional
	Dashboard *Dashboard `json:"dashboard,omitempty"`

	// ManagerArgs: more of the manager's options (docs/operations.md).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	ManagerArgs []string `json:"managerArgs,omitempty"`

	// Resources of the manager's container besides its hugepages
	// (default: 512Mi of memory at most).
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// Fabric is where the nodes' managers send each other a chain's packets.
type Fabric struct {
	// Port: the manager's port on the fabric network (one of Ports).
	Port PortName `json:"port"`
	// Subnet: the fabric's IPv4 subnet; node of host id H is its H-th
	// address.
	// +kubebuilder:validation:MaxLength=18
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self).ip().family() == 4 && cidr(self).prefixLength() <= 24",message="an IPv4 subnet of /24 or more addresses"
	Subnet string `json:"subnet"`
	// Encap between the nodes.
	// +kubebuilder:validation:Enum=vxlan-gpe;vxlan;ethernet
	// +kubebuilder:default=vxlan-gpe
	// +optional
	Encap string `json:"encap,omitempty"`
	// MTU: the fabric's IP MTU (a packet too large once encapsulated
	// is dropped and counted).
	// +kubebuilder:validation:Minimum=576
	// +kubebuilder:validation:Maximum=9216
	// +kubebuilder:default=1500
	// +optional
	MTU int32 `json:"mtu,omitempty"`
}

// Dashboard: zeronf api on each node (docs/kubernetes.md "Dashboard").
type Dashboard struct {
	// Port on each node's address, and the Service's.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=8080
	// +optional
	Port int32 `json:"port,omitempty"`
	// Image: the dashboard's (Python and ZeroNF's control plane;
	// default: the operator's ZERONF_DASHBOARD_IMAGE).
	// +optional
	Image string `json:"image,omitempty"`
}

// ZeroNFStatus: the node agents, as their DaemonSet says.
type ZeroNFStatus struct {
	// Nodes that should run a node agent, and those whose agent is ready
	// (its manager serving, its slots with kubelet).
	Nodes int32 `json:"nodes"`
	Ready int32 `json:"ready"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// ZeroNF is ZeroNF's configuration of the cluster: one, named default.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=zeronf-all
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'default'",message="one ZeroNF a cluster, named default"
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ZeroNF struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ZeroNFSpec   `json:"spec"`
	Status ZeroNFStatus `json:"status,omitempty"`
}

// ZeroNFList is a list of them.
//
// +kubebuilder:object:root=true
type ZeroNFList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ZeroNF `json:"items"`
}

// PortIDs: the managers' ports, name -> id (Ports, then the pool's).
func (z *ZeroNFSpec) PortIDs() map[string]int {
	ids := map[string]int{}
	for i, p := range z.Ports {
		ids[string(p.Name)] = i
	}
	for i := 0; i < int(z.AppPorts); i++ {
		ids[fmt.Sprintf("%s%d", z.AppPortPrefix, i)] = len(z.Ports) + i
	}
	return ids
}

// TxQueuePorts: the ports whose queues NFs may drive (by their device:
// mgr/port/port_nftx.c's drivers), id by name, if NFTxQueues > 0.
func (z *ZeroNFSpec) TxQueuePorts() map[string]int {
	out := map[string]int{}
	if z.NFTxQueues == 0 {
		return out
	}
	for i, p := range z.Ports {
		if strings.HasPrefix(p.Device, "net_null") || strings.HasPrefix(p.Device, "net_tap") {
			out[string(p.Name)] = i
		}
	}
	return out
}

// TenantOf: the tenant of namespace ns (its name), or nil.
func (z *ZeroNFSpec) TenantOf(ns string) *Tenant {
	for i := range z.Tenants {
		if z.Tenants[i].Name == ns {
			return &z.Tenants[i]
		}
	}
	return nil
}

// TenantsError: what of the tenants' slices the managers would refuse
// or the app ports cannot be (nil: nothing): a port that is none of the
// spec's; the same slice twice; an app port (given to one namespace's
// pods) that is not one tenant's whole. Checked by the operator, not by
// the schema: a rule over every pair of slices is past the API server's
// cost budget for CEL.
func (z *ZeroNFSpec) TenantsError() error {
	ids := z.PortIDs()
	seen := map[string]string{}
	for i := range z.Tenants {
		for j, sl := range z.Tenants[i].Slices {
			where := fmt.Sprintf("tenants[%d].slices[%d]", i, j)
			id, ok := ids[string(sl.Port)]
			if !ok {
				return fmt.Errorf("%s: no port %q", where, sl.Port)
			}
			k := fmt.Sprintf("%d/%d/%s/%s", id, sl.VLAN, sl.MAC, sl.Prefix)
			if o, dup := seen[k]; dup {
				return fmt.Errorf("%s: the same slice as %s", where, o)
			}
			seen[k] = where
			if id < len(z.Ports) {
				continue
			}
			// whole, it is one tenant's (two: the same slice, above)
			if sl.VLAN != 0 || sl.MAC != "" || sl.Prefix != "" {
				return fmt.Errorf("%s: app port %s: a tenant's whole (its namespace's pods get it)",
					where, sl.Port)
			}
		}
	}
	return nil
}

// SlicedPorts: the ports some tenant has a slice of, id -> the tenant's
// namespace (of an app port, one tenant's: the namespace whose pods get
// it; of another port, the last one's).
func (z *ZeroNFSpec) SlicedPorts() map[int]string {
	ids := z.PortIDs()
	out := map[int]string{}
	for _, t := range z.Tenants {
		for _, s := range t.Slices {
			if id, ok := ids[string(s.Port)]; ok {
				out[id] = t.Name
			}
		}
	}
	return out
}

// DefaultChainHops: the default chain with its ports by id (the
// manager's -c takes no names), or which port is none of the spec's.
func (z *ZeroNFSpec) DefaultChainHops() ([]string, error) {
	ids := z.PortIDs()
	out := make([]string, len(z.DefaultChain))
	for i, h := range z.DefaultChain {
		out[i] = h
		if name, ok := strings.CutPrefix(h, "port:"); ok {
			id, known := ids[name]
			if !known {
				return nil, fmt.Errorf("defaultChain[%d]: no port %q", i, name)
			}
			out[i] = fmt.Sprintf("port:%d", id)
		}
	}
	return out, nil
}

func init() {
	SchemeBuilder.Register(&ZeroNF{}, &ZeroNFList{})
}

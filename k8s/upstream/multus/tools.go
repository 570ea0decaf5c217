//go:build tools

// Multus CNI's thin plugin (scripts/k8s-build.sh builds its cmd/multus):
// the cluster's meta plugin, which gives a pod the extra networks its
// k8s.v1.cni.cncf.io/networks annotation names (NetworkAttachmentDefinitions),
// as a telco cluster has it. A module of its own: Multus v4.2 builds
// against its own Kubernetes libraries, not v1.36's.
package tools

import _ "gopkg.in/k8snetworkplumbingwg/multus-cni.v4/pkg/multus"

//go:build tools

// kwok (Kubernetes WithOut Kubelet, a Kubernetes SIG project):
// scripts/k8s-build.sh builds its cmd/kwok for make bench BENCH=k8s, which
// adds 100 simulated nodes to the test cluster (bench/k8s.py): kwok keeps
// their status and leases and plays their pods' lifecycle, so that the
// operator, scheduler and controllers meet a cluster that size. A module
// of its own: kwok builds against its own Kubernetes libraries.
package tools

import _ "sigs.k8s.io/kwok/pkg/kwok/cmd"

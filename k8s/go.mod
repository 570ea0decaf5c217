// ZeroNF's Kubernetes pieces (docs/kubernetes.md): the device plugin, the
// CNI plugin, the operator, and the tools the cluster tests run in pods.
module zeronf.dev/k8s

go 1.26.0

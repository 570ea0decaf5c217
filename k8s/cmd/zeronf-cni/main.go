// Command zeronf-cni is ZeroNF's CNI plugin (k8s/cni, docs/kubernetes.md):
// installed as "zeronf" in a node's CNI directory by the node agent, it
// attaches a pod to one of its node's ZeroNF ports.
package main

import (
	"github.com/containernetworking/cni/pkg/skel"

	"zeronf.dev/k8s/cni"
)

func main() {
	skel.PluginMainFuncs(cni.Funcs, cni.Supported, "ZeroNF CNI plugin: a pod on a ZeroNF port")
}

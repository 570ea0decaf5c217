package operator

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

// TargetsPath: where the operator serves Prometheus' HTTP service
// discovery (http_sd_configs, k8s/config/prometheus/scrape.yaml).
const TargetsPath = "/prometheus/targets"

// Targets serves Prometheus' HTTP service discovery of the node agents'
// metrics: one group a ZeroNF node, its address (the Node's InternalIP)
// and the ZeroNF's metricsPort, labelled node and host_id. Prometheus'
// own Kubernetes discovery would do as well, where it is built in (it is
// not in Debian's Prometheus, which the tests run).
type Targets struct {
	client.Reader
}

type targetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

func (t *Targets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	groups := []targetGroup{}
	var z zv1.ZeroNF
	err := t.Get(ctx, types.NamespacedName{Name: "default"}, &z)
	if client.IgnoreNotFound(err) != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if err == nil && z.Spec.MetricsPort > 0 {
		var nodes zv1.ZeroNFNodeList
		if err := t.List(ctx, &nodes); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		for _, zn := range nodes.Items {
			var n corev1.Node
			if t.Get(ctx, types.NamespacedName{Name: zn.Name}, &n) != nil {
				continue
			}
			for _, a := range n.Status.Addresses {
				if a.Type != corev1.NodeInternalIP {
					continue
				}
				groups = append(groups, targetGroup{
					Targets: []string{net.JoinHostPort(a.Address, strconv.Itoa(int(z.Spec.MetricsPort)))},
					Labels:  map[string]string{"node": zn.Name, "host_id": fmt.Sprint(zn.Spec.HostID)}})
				break
			}
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Labels["node"] < groups[j].Labels["node"] })
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(groups)
}

package nodeagent

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"zeronf.dev/k8s/internal/ctl"
	"zeronf.dev/k8s/internal/instance"
)

// Metrics is the node's manager as Prometheus metrics: one `stats` a
// scrape, in the families and names `zeronf api` serves
// (python/zeronf/api/metrics.py, docs/operations.md), so one dashboard
// reads both. Prometheus' own target labels say which node.
type Metrics struct {
	Inst instance.Instance
}

var (
	descUp       = prometheus.NewDesc("zeronf_up", "1 if the manager answered this scrape", []string{"zeronf_instance"}, nil)
	descDrops    = prometheus.NewDesc("zeronf_drops_total", "packets dropped, by reason, all sources", []string{"reason"}, nil)
	descPool     = prometheus.NewDesc("zeronf_pool_buffers", "packet buffers in the pool", nil, nil)
	descPoolUsed = prometheus.NewDesc("zeronf_pool_buffers_in_use", "packet buffers not in the pool", nil, nil)
	descPortRx   = prometheus.NewDesc("zeronf_port_rx_packets_total", "packets read from the port", []string{"port", "name"}, nil)
	descPortTx   = prometheus.NewDesc("zeronf_port_tx_packets_total", "packets sent out of the port", []string{"port", "name"}, nil)
	descPortDrop = prometheus.NewDesc("zeronf_port_drops_total", "packets from the port dropped before an NF, by reason", []string{"port", "name", "reason"}, nil)
	nfLabels     = []string{"instance_id", "name", "service"}
	descNFRx     = prometheus.NewDesc("zeronf_nf_rx_packets_total", "packets the NF received", nfLabels, nil)
	descNFTx     = prometheus.NewDesc("zeronf_nf_tx_packets_total", "packets the NF handed back", nfLabels, nil)
	descNFDrop   = prometheus.NewDesc("zeronf_nf_drops_total", "packets dropped at or by the NF, by reason", append(nfLabels, "reason"), nil)
	descNFUp     = prometheus.NewDesc("zeronf_nf_running", "1 while the NF runs its packet loop", nfLabels, nil)
	descSvc      = prometheus.NewDesc("zeronf_service_instances", "running instances of the service", []string{"service"}, nil)
)

type statsReply struct {
	Drops  map[string]int64 `json:"drops"`
	Status struct {
		Pool struct {
			Size  int64 `json:"size"`
			InUse int64 `json:"in_use"`
		} `json:"pool"`
	} `json:"status"`
	Ports []struct {
		ctlPort
		Drops map[string]int64 `json:"drops"`
	} `json:"ports"`
	NFs []struct {
		ctlNF
		Instance int    `json:"instance"`
		Name     string `json:"name"`
		State    string `json:"state"`
	} `json:"nfs"`
	Services []struct {
		Service   int   `json:"service"`
		Instances []any `json:"instances"`
	} `json:"services"`
}

// Describe: the families are fixed, their label values the manager's.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descDrops, descPool, descPoolUsed,
		descPortRx, descPortTx, descPortDrop, descNFRx, descNFTx, descNFDrop, descNFUp, descSvc} {
		ch <- d
	}
}

func drops(ch chan<- prometheus.Metric, d *prometheus.Desc, by map[string]int64, labels ...string) {
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(by[k]), append(labels, k)...)
	}
}

// Collect asks the manager once.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	var st statsReply
	c, err := ctl.Dial(m.Inst.Path(instance.CtlSock), 5*time.Second)
	if err == nil {
		err = c.Call("stats", nil, &st)
		c.Close()
	}
	if err != nil {
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 0, m.Inst.Name)
		return
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 1, m.Inst.Name)
	drops(ch, descDrops, st.Drops)
	ch <- prometheus.MustNewConstMetric(descPool, prometheus.GaugeValue, float64(st.Status.Pool.Size))
	ch <- prometheus.MustNewConstMetric(descPoolUsed, prometheus.GaugeValue, float64(st.Status.Pool.InUse))
	for _, p := range st.Ports {
		k := []string{strconv.Itoa(p.Port), p.Name}
		ch <- prometheus.MustNewConstMetric(descPortRx, prometheus.CounterValue, float64(p.Rx), k...)
		ch <- prometheus.MustNewConstMetric(descPortTx, prometheus.CounterValue, float64(p.Tx), k...)
		drops(ch, descPortDrop, p.Drops, k...)
	}
	for _, n := range st.NFs {
		k := []string{strconv.Itoa(n.Instance), n.Name, strconv.Itoa(n.Service)}
		ch <- prometheus.MustNewConstMetric(descNFRx, prometheus.CounterValue, float64(n.Rx), k...)
		ch <- prometheus.MustNewConstMetric(descNFTx, prometheus.CounterValue, float64(n.Tx), k...)
		drops(ch, descNFDrop, n.Drops, k...)
		up := 0.0
		if n.State == "running" {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(descNFUp, prometheus.GaugeValue, up, k...)
	}
	for _, s := range st.Services {
		ch <- prometheus.MustNewConstMetric(descSvc, prometheus.GaugeValue, float64(len(s.Instances)),
			strconv.Itoa(s.Service))
	}
}

// ServeMetrics serves /metrics on addr until ctx ends.
func ServeMetrics(ctx context.Context, addr string, m *Metrics) error {
	reg := prometheus.NewRegistry()
	if err := reg.Register(m); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

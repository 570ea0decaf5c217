"""Prometheus metrics of an instance: one `stats` and one `launch.list`
per scrape, turned into metric families (prometheus-client's custom
collector). Names follow Prometheus' conventions: the zeronf_ prefix,
counters end in _total, ratios are 0..1."""
from __future__ import annotations

from prometheus_client.core import (CounterMetricFamily,
                                    GaugeMetricFamily)
from prometheus_client.registry import Collector

from ..client import Client, ZeroNFError


def _drops(family, labels: list[str], d: dict) -> None:
    for reason, n in sorted(d.items()):
        family.add_metric([*labels, reason], n)


class InstanceCollector(Collector):
    def __init__(self, instance: str):
        self.instance = instance

    def collect(self):
        up = GaugeMetricFamily("zeronf_up", "1 if the manager answered "
                               "this scrape", labels=["zeronf_instance"])
        try:
            with Client(self.instance, timeout=5.0) as c:
                st = c.stats()
                launched = c.call("launch.list")["launched"]
        except ZeroNFError:
            up.add_metric([self.instance], 0)
            yield up
            return
        up.add_metric([self.instance], 1)
        yield up
        yield from self._ports(st["ports"])
        yield from self._nfs(st["nfs"])
        yield from self._services(st["services"])
        yield from self._launched(launched)
        drops = CounterMetricFamily(
            "zeronf_drops", "packets dropped, by reason, all sources",
            labels=["reason"])
        _drops(drops, [], st["drops"])
        yield drops
        pool = st["status"]["pool"]
        yield GaugeMetricFamily("zeronf_pool_buffers", "packet buffers in "
                                "the pool", value=pool["size"])
        yield GaugeMetricFamily("zeronf_pool_buffers_in_use", "packet "
                                "buffers not in the pool", value=pool["in_use"])
        f = st["fdir"]
        yield GaugeMetricFamily("zeronf_flow_rules", "exact flow rules",
                                value=f["flows"])
        yield GaugeMetricFamily("zeronf_wildcard_rules", "wildcard rules",
                                value=f["rules"])

    def _ports(self, ports):
        lab = ["port", "name"]
        rx = CounterMetricFamily("zeronf_port_rx_packets", "packets read "
                                 "from the port", labels=lab)
        tx = CounterMetricFamily("zeronf_port_tx_packets", "packets sent "
                                 "out of the port", labels=lab)
        dr = CounterMetricFamily("zeronf_port_drops", "packets from the "
                                 "port dropped before an NF, by reason",
                                 labels=lab + ["reason"])
        for p in ports:
            k = [str(p["port"]), p["name"]]
            rx.add_metric(k, p["rx"])
            tx.add_metric(k, p["tx"])
            _drops(dr, k, p["drops"])
        yield from (rx, tx, dr)

    def _nfs(self, nfs):
        lab = ["instance_id", "name", "service"]
        rx = CounterMetricFamily("zeronf_nf_rx_packets", "packets the NF "
                                 "received", labels=lab)
        tx = CounterMetricFamily("zeronf_nf_tx_packets", "packets the NF "
                                 "handed back", labels=lab)
        dr = CounterMetricFamily("zeronf_nf_drops", "packets dropped at or "
                                 "by the NF, by reason",
                                 labels=lab + ["reason"])
        occ = GaugeMetricFamily("zeronf_nf_rx_ring_occupancy", "RX ring "
                                "fill, 0..1", labels=lab)
        used = GaugeMetricFamily("zeronf_nf_rx_ring_packets", "packets "
                                 "waiting in the NF's RX ring", labels=lab)
        up = GaugeMetricFamily("zeronf_nf_running", "1 while the NF runs "
                               "its packet loop", labels=lab)
        for n in nfs:
            k = [str(n["instance"]), n["name"], str(n["service"])]
            rx.add_metric(k, n["rx"])
            tx.add_metric(k, n["tx"])
            _drops(dr, k, n["drops"])
            ring = n.get("rx_ring") or {"count": 0, "size": 1}
            occ.add_metric(k, ring["count"] / max(ring["size"], 1))
            used.add_metric(k, ring["count"])
            up.add_metric(k, 1 if n["state"] == "running" else 0)
        yield from (rx, tx, dr, occ, used, up)

    def _services(self, services):
        inst = GaugeMetricFamily("zeronf_service_instances", "running "
                                 "instances of the service",
                                 labels=["service"])
        for s in services:
            inst.add_metric([str(s["service"])], len(s["instances"]))
        yield inst

    def _launched(self, launched):
        lab = ["nf"]
        restarts = CounterMetricFamily("zeronf_nf_restarts", "restarts of a "
                                       "launched NF's replicas", labels=lab)
        failures = CounterMetricFamily("zeronf_nf_failures", "exits with a "
                                       "failure of a launched NF's "
                                       "replicas", labels=lab)
        replicas = GaugeMetricFamily("zeronf_nf_replicas", "replicas "
                                     "wanted", labels=lab)
        running = GaugeMetricFamily("zeronf_nf_replicas_running",
                                    "replicas running", labels=lab)
        for s in launched:
            restarts.add_metric([s["name"]], s["restarts"])
            failures.add_metric([s["name"]], s["failures"])
            replicas.add_metric([s["name"]], s["replicas"])
            running.add_metric([s["name"]], s["running"])
        yield from (restarts, failures, replicas, running)

"""The managers' metrics on the cluster (docs/kubernetes.md "Metrics"): a
real Prometheus (Debian's) with ZeroNF's scrape job
(k8s/config/prometheus/scrape.yaml, its discovery URL pointed at the
operator's pod: this Prometheus is outside the cluster, where a Service's
name does not resolve) finds every node agent through the operator and
scrapes each node's manager, labelled by node."""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request

import pytest
import yaml

from kube import REPO, kget, wait

SCRAPE = REPO / "k8s" / "config" / "prometheus" / "scrape.yaml"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def prometheus(zeronf, tmp_path):
    exe = shutil.which("prometheus")
    assert exe, "prometheus: scripts/setup.sh installs it"
    cfg = yaml.safe_load(SCRAPE.read_text())
    job = cfg["scrape_configs"][0]
    job["scrape_interval"] = "1s"
    op = [p for p in kget("pods", "-n", "zeronf-system", "-l",
                          "app=zeronf-operator")["items"]
          if p["status"].get("podIP")][0]
    for sd in job["http_sd_configs"]:
        assert sd["url"].startswith("http://zeronf-operator.zeronf-system.svc:8082/")
        sd["url"] = sd["url"].replace("zeronf-operator.zeronf-system.svc",
                                      op["status"]["podIP"])
        sd["refresh_interval"] = "1s"
    f = tmp_path / "prometheus.yml"
    f.write_text(yaml.safe_dump({"global": {"scrape_interval": "1s"}, **cfg}))
    port = free_port()
    p = subprocess.Popen([exe, f"--config.file={f}",
                          f"--storage.tsdb.path={tmp_path / 'data'}",
                          f"--web.listen-address=127.0.0.1:{port}"],
                         stdout=subprocess.DEVNULL,
                         stderr=open(tmp_path / "prometheus.log", "w"))
    yield f"http://127.0.0.1:{port}", tmp_path / "prometheus.log"
    p.terminate()
    p.wait(timeout=30)


def query(base: str, q: str) -> list[dict]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.load(r)["data"]["result"]
    except OSError:
        return []


def test_prometheus_scrapes_every_nodes_manager(prometheus):
    base, log = prometheus

    def both_up() -> bool:
        r = query(base, 'zeronf_up{job="zeronf"} == 1')
        return sorted(x["metric"].get("node", "") for x in r) == \
            ["znk-node1", "znk-node2"]
    wait(both_up, 90, f"both nodes' managers scraped (log: {log})")
    # the pool's ports, each node's, with their counters
    r = query(base, 'zeronf_port_rx_packets_total{name="znapp0"}')
    assert sorted(x["metric"]["node"] for x in r) == ["znk-node1", "znk-node2"], r
    r = query(base, "zeronf_pool_buffers")
    assert [int(x["value"][1]) for x in r] == [8191, 8191], r
    r = query(base, "zeronf_up")
    hosts = sorted(x["metric"]["host_id"] for x in r)
    assert hosts == ["1", "2"], r

"""The cluster itself (scripts/cluster.sh): upstream Kubernetes on this
machine, two nodes, pods on each reaching each other's over kernel TCP,
directly and through a Service (kube-proxy), and nothing left after
`down` (conftest.py checks at the end of the session)."""
from __future__ import annotations

import json

from kube import TCPCHECK, apply, kget, kubectl, tools_pod, wait

NODES = ["znk-node1", "znk-node2"]


def pod(name: str, node: str, command: list[str], labels=None) -> dict:
    return tools_pod(name, command, node, labels or {"app": name})


def phase(name: str) -> str:
    return kget("pod", name).get("status", {}).get("phase", "")


def test_two_nodes_ready_on_the_built_version(k8s):
    nodes = kget("nodes")["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == NODES
    for n in nodes:
        ready = [c for c in n["status"]["conditions"] if c["type"] == "Ready"]
        assert ready[0]["status"] == "True", n["status"]["conditions"]
        assert n["status"]["nodeInfo"]["kubeletVersion"].startswith("v1.36.")
        assert n["status"]["nodeInfo"]["containerRuntimeVersion"].startswith(
            "containerd://")
    v = kubectl("version", "-o", "json").stdout
    assert '"gitVersion": "v1.36.' in v


def test_pods_on_two_nodes_talk_tcp_directly_and_through_a_service(k8s):
    """Every byte of 4 connections of 8 MB each (zeronf-tcpcheck: counts
    and SHA-256 at both ends), node 1 to node 2, to the server pod's
    address and to its Service's cluster IP."""
    kubectl("delete", "pod", "srv", "cli", "cli2", "--ignore-not-found",
            "--wait=true")
    kubectl("delete", "service", "srv", "--ignore-not-found")
    apply(pod("srv", NODES[1], [TCPCHECK, "serve", "-listen", ":7000"]))
    apply({"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": "srv", "namespace": "default"},
           "spec": {"selector": {"app": "srv"},
                    "ports": [{"port": 7000, "targetPort": 7000}]}})
    wait(lambda: phase("srv") == "Running", 120, "server pod running")
    ip = kget("pod", "srv")["status"]["podIP"]
    assert ip.startswith("10.244.2."), ip
    svc = kget("service", "srv")["spec"]["clusterIP"]
    for name, to in (("cli", ip), ("cli2", svc)):
        apply(pod(name, NODES[0], [TCPCHECK, "send", "-to", f"{to}:7000",
                                   "-bytes", str(8 << 20), "-conns", "4"]))
        wait(lambda: phase(name) in ("Succeeded", "Failed"), 180,
             f"client {name} done")
        out = kubectl("logs", name).stdout
        assert phase(name) == "Succeeded", out
        assert json.loads(out.splitlines()[-1])["ok"] == 4, out
        assert kget("pod", name)["status"]["podIP"].startswith("10.244.1.")
    kubectl("delete", "pod", "srv", "cli", "cli2", "--wait=true")
    kubectl("delete", "service", "srv")

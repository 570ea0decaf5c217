"""A service chain across the cluster's two nodes, made of the operator's
API alone (docs/kubernetes.md "Chains on the cluster"): NetworkFunctions
monitor (node 1) -> forward (2 replicas) -> dpi (node 2), an application
pod on node 1 and a server pod on node 2 on ZeroNF ports (the CNI plugin),
and two ServiceChains, one each way. The node agents program their
managers (service paths over the fabric between the nodes, NSH in
VXLAN-GPE); every byte of real TCP connections arrives, the NFs' counters
agree but for what the fabric lost and counted, and deleting it all
leaves the managers with nothing of it."""
from __future__ import annotations

import json

import time

from kube import (TCPCHECK, app_pod, apply, kget, kubectl, mgr_call, nad,
                  wait)

N1, N2 = "znk-node1", "znk-node2"
SVC = {"mon": 10, "fwd": 11, "dpi": 12}


def nf(name: str, program: str, node: str | None, replicas: int = 1) -> dict:
    spec = {"serviceId": SVC[name], "program": program, "replicas": replicas}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"apiVersion": "zeronf.dev/v1alpha1", "kind": "NetworkFunction",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def chain(name: str, from_pod: str, hops: list[dict]) -> dict:
    return {"apiVersion": "zeronf.dev/v1alpha1", "kind": "ServiceChain",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"fromPod": from_pod, "hops": hops}}


def on(pod: str, node: str, ip: str, command: list[str]) -> dict:
    return app_pod(pod, ip, command, node)


def ready(kind: str, name: str) -> bool:
    st = kget(kind, name).get("status", {})
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in st.get("conditions", []))


def nf_status(name: str) -> dict:
    return kget("networkfunction", name).get("status", {})


def tcp(n: int, size: int) -> dict:
    r = kubectl("exec", "zcli", "--", TCPCHECK, "send", "-to",
                "10.200.2.2:7100", "-bytes", str(size), "-conns", str(n),
                timeout=240)
    return json.loads(r.stdout.splitlines()[-1])


def test_a_chain_across_two_nodes_carries_tcp_both_ways(zeronf):
    try:
        chain_across_two_nodes()
    finally:  # what a failure left: the next tests count the managers' NFs
        for kind, names in (("servicechain", ["c2s", "s2c"]),
                            ("pod", ["zcli", "zsrv"]),
                            ("networkfunction", list(SVC)),
                            ("network-attachment-definition", ["zeronf"])):
            kubectl("delete", kind, *names, "--ignore-not-found",
                    "--wait=true", timeout=180)


def chain_across_two_nodes() -> None:
    objs = [nf("mon", "zeronf-monitor", N1), nf("fwd", "zeronf-forward", None, 2),
            nf("dpi", "zeronf-dpi", N2)]
    apply(nad())
    for o in objs:
        apply(o)
    apply(on("zsrv", N2, "10.200.2.2/24", [TCPCHECK, "serve", "-listen", ":7100"]))
    apply(on("zcli", N1, "10.200.2.1/24", ["/bin/sleep", "3600"]))
    hops = lambda *xs: [{"networkFunction": x} if x in SVC else {"pod": x}
                        for x in xs]
    apply(chain("c2s", "zcli", hops("mon", "fwd", "dpi", "zsrv")))
    apply(chain("s2c", "zsrv", hops("dpi", "fwd", "mon", "zcli")))
    for name in SVC:
        wait(lambda: ready("networkfunction", name), 180, f"{name} ready")
    for p in ("zsrv", "zcli"):
        wait(lambda: kget("pod", p).get("status", {}).get("phase")
             == "Running", 120, f"{p} running")
    for c in ("c2s", "s2c"):
        wait(lambda: ready("servicechain", c), 120,
             f"{c} programmed on both nodes")
        st = kget("servicechain", c)["status"]
        assert st["programmed"] == [N1, N2] and st["pathId"] > 0, st

    # node 1's manager: the client's port takes c2s, whose DPI is on node
    # 2: the path crosses the fabric
    paths = mgr_call(N1, "path.list")["paths"]
    assert len(paths) == 2, paths
    host = {n["metadata"]["name"]: n["spec"]["hostId"]
            for n in kget("zeronfnodes")["items"]}
    assert sorted(host.values()) == [1, 2], host
    fab = mgr_call(N1, "fabric.show")
    assert fab["fabric"]["host"] == host[N1], fab
    assert fab["fabric"]["ip"] == f"10.78.0.{host[N1]}", fab
    assert [(p["host"], p["ip"]) for p in fab["peers"]] == \
        [(host[N2], f"10.78.0.{host[N2]}")], fab

    # the managers' counts (not the reports, up to 2 s old), from a still
    # point: what went by while the chains were programmed on one node and
    # not yet on the other is not theirs
    def counts() -> dict:
        rx = dict.fromkeys(SVC.values(), 0)
        for node in (N1, N2):
            for n in mgr_call(node, "nf.list")["nfs"]:
                if n["service"] in rx:
                    rx[n["service"]] += n["rx"]
        return rx

    def missed() -> int:
        """What the fabric's ports lost (their rings full: counted,
        mgr/port/port_kdrops.c) on both nodes."""
        return sum(p["hw"]["imissed"] + p["hw"]["oerrors"]
                   for node in (N1, N2)
                   for p in mgr_call(node, "port.list")["ports"]
                   if p["name"] == "fabric")

    def still() -> dict:
        a = counts()
        for _ in range(30):
            time.sleep(1)
            b = counts()
            if a == b:
                return b
            a = b
        raise AssertionError(f"the chain never still: {a}")
    before, lost0 = still(), missed()
    out = tcp(4, 4 << 20)
    assert out["ok"] == 4, out

    # every packet of both directions went through all three services:
    # their counts (the node agents' reports, every 2 s) agree
    after, lost = still(), missed() - lost0
    rx = {s: after[s] - before[s] for s in before}

    def fabric(node: str) -> dict:
        port = [p for p in mgr_call(node, "port.list")["ports"]
                if p["name"] == "fabric"][0]
        return {"rx": port["rx"], "tx": port["tx"], "hw": port["hw"],
                "drops": {k: v for k, v in port["drops"].items() if v},
                "peers": [{k: p[k] for k in ("tx", "rx", "drops")}
                          for p in mgr_call(node, "fabric.show")["peers"]]}
    # what the fabric lost under load is counted (TCP sent it again): the
    # counts differ by no more
    assert min(rx.values()) > (16 << 20) // 1448 and \
        max(rx.values()) - min(rx.values()) <= lost, \
        (rx, lost, fabric(N1), fabric(N2))
    # and the NetworkFunctions' status (the nodes' reports) says the same
    wait(lambda: all(nf_status(n)["rxPackets"] >= after[SVC[n]] for n in SVC),
         30, "the NetworkFunctions' counts from the nodes' reports")
    fab = mgr_call(N1, "fabric.show")
    assert fab["peers"][0]["tx"] > 0 and fab["peers"][0]["rx"] > 0, fab
    assert fab["peers"][0]["drops"] == {"nsh_mtu": 0, "peer_down": 0}, fab

    # scaled through the CR: the chain goes on
    kubectl("scale", "networkfunction/fwd", "--replicas=3")
    wait(lambda: nf_status("fwd").get("registered") == 3, 180,
         "3 forwarders registered")
    assert tcp(2, 2 << 20)["ok"] == 2

    # deleted: the chains leave the managers, then the rest goes
    for c in ("c2s", "s2c"):
        kubectl("delete", "servicechain", c, "--wait=true")
    for node in (N1, N2):
        wait(lambda: mgr_call(node, "path.list")["paths"] == [], 60,
             f"{node}'s paths gone")
        att = {p["name"]: p["port"] for p in mgr_call(node, "port.list")["ports"]}
        for name, port in att.items():
            assert mgr_call(node, "chain.get", {"port": port})["hops"] == [], name
    kubectl("delete", "pod", "zcli", "zsrv", "--wait=true")
    for o in objs:
        kubectl("delete", "networkfunction", o["metadata"]["name"], "--wait=true")
    wait(lambda: not kget("pods", "-l", "zeronf.dev/networkfunction")["items"],
         120, "the NF pods gone")

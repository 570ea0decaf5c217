"""A deployment file's policies on the cluster (docs/kubernetes.md
"Autoscaling and reactions"): real datagrams from an application pod
overload a slow NetworkFunction, which the operator scales out from the
load its node reports, and make a monitor's UDP counter run fast, which
puts another NetworkFunction into the chain; the load stops: it scales
back in, the NetworkFunction leaves the chain, each step an event, and no
buffer of the manager's is left held."""
from __future__ import annotations

import time

from kube import TCPCHECK, app_pod, apply, kget, kubectl, mgr_call, nad, wait

NODE = "znk-node1"
NODES = ["znk-node1", "znk-node2"]  # a chain is programmed on every node
SVC = {"pmon": 30, "slow": 31, "extra": 32}
API = "zeronf.dev/v1alpha1"


def nf(name: str, program: str, args: list[str] | None = None,
       autoscale: dict | None = None) -> dict:
    spec: dict = {"serviceId": SVC[name], "program": program,
                  "nodeSelector": {"kubernetes.io/hostname": NODE}}
    if args:
        spec["args"] = args
    if autoscale:
        spec["autoscale"] = autoscale
    return {"apiVersion": API, "kind": "NetworkFunction",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


CHAIN = {"apiVersion": API, "kind": "ServiceChain",
         "metadata": {"name": "guarded", "namespace": "default"},
         "spec": {"fromPod": "zpulse",
                  "hops": [{"networkFunction": "pmon"},
                           {"networkFunction": "slow"}, {"drop": True}],
                  "reactions": [{
                      "name": "udp-flood",
                      "when": {"networkFunction": "pmon", "counter": "udp",
                               "above": 100, "forSeconds": 2},
                      "insert": {"networkFunction": "extra", "after": "pmon",
                                 "removeAfterSeconds": 3}}]}}


def events(kind: str, name: str) -> list[tuple[str, str]]:
    """The object's events (by its uid: those of an earlier object of the
    same name stay an hour)."""
    uid = kget(kind, name)["metadata"]["uid"]
    evs = kget("events", "--field-selector",
               f"involvedObject.uid={uid}")["items"]
    evs.sort(key=lambda e: e.get("lastTimestamp") or e["metadata"]
             ["creationTimestamp"])
    return [(e["reason"], e["message"]) for e in evs]


def replicas() -> int:
    return kget("networkfunction", "slow")["spec"]["replicas"]


def hops(port: int) -> list[str]:
    return mgr_call(NODE, "chain.get", {"port": port})["hops"]


def pulse(on: bool) -> None:
    """Datagrams from zpulse's ZeroNF port, a thousand a second, or none
    (the pulse started in the background, its pid in a file)."""
    cmd = (f"{TCPCHECK} pulse -to 10.200.3.255:9 -every 1ms "
           f">/dev/null 2>&1 & echo $! > /pulse.pid" if on else
           "read p < /pulse.pid && kill $p")
    kubectl("exec", "zpulse", "--", "/bin/sh", "-c", cmd)


def still_pool() -> int:
    """The node's manager's buffers in use once nothing moves (the NFs'
    rings empty, the counts the same twice a second apart)."""
    last = [None]

    def idle():
        st = mgr_call(NODE, "stats")
        key = (st["status"]["pool"]["in_use"],
               [(n["rx"], n["tx"]) for n in st["nfs"]])
        empty = all((n["rx_ring"] or {}).get("count", 0) == 0 and
                    n["staged"] == 0 for n in st["nfs"])
        same, last[0] = key == last[0], key
        if not same:
            time.sleep(1)
        return same and empty
    wait(idle, 120, "the node's manager still")
    return last[0][0]


def test_load_scales_out_and_reacts_then_both_undo(zeronf):
    objs = [nf("pmon", "zeronf-monitor"),
            nf("slow", "zeronf-forward", ["--wait-us", "5000"], {
                "minReplicas": 1, "maxReplicas": 2,
                "scaleOut": {"ringOccupancyPercent": 50, "forSeconds": 2},
                # in only once the rings are empty: this NF takes 5 ms a
                # packet, and a replica scaled in has its pod's grace
                # period (5 s) to finish what it holds
                "scaleIn": {"ringOccupancyPercentBelow": 0,
                            "forSeconds": 3}}),
            nf("extra", "zeronf-forward")]
    try:
        apply(nad())
        for o in objs:
            apply(o)
        apply(app_pod("zpulse", "10.200.3.1/24", ["/bin/sleep", "3600"],
                      NODE))
        apply(CHAIN)
        for n in SVC:
            wait(lambda: kget("networkfunction", n).get("status", {}).get(
                "registered") == 1, 180, f"{n} registered")
        wait(lambda: kget("servicechain", "guarded").get("status", {}).get(
            "programmed") == NODES, 120, "the chain programmed")
        me = kget("zeronfnode", NODE)["status"]
        port_name = next(a["port"] for a in me["attachments"]
                         if a["pod"] == "zpulse")
        port = next(p["id"] for p in me["ports"] if p["name"] == port_name)
        assert hops(port) == ["svc:30", "svc:31", "drop"]
        base = still_pool()
        exit0 = mgr_call(NODE, "stats")["drops"]["nf_exit"]

        pulse(True)
        # the slow NF's input fills: a second replica
        wait(lambda: replicas() == 2, 120, "slow scaled out",
             show=lambda: kget("networkfunction", "slow")["status"])
        wait(lambda: kget("networkfunction", "slow")["status"].get(
            "registered") == 2, 180, "the second replica registered")
        st = kget("networkfunction", "slow")["status"]["autoscale"]
        assert st["lastScaleTime"], st
        out = [m for r, m in events("networkfunction", "slow") if r == "ScaledOut"]
        assert out and out[0].startswith("1 -> 2 replicas (RX rings "), \
            events("networkfunction", "slow")
        # both replicas members of the service (the datagrams are one flow:
        # flow affinity keeps them on one replica, so no test of who gets
        # what here: test_chain.py's TCP connections spread)
        wait(lambda: [n["state"] for n in mgr_call(NODE, "nf.list")["nfs"]
                      if n["service"] == SVC["slow"]] == ["running"] * 2, 60,
             "both replicas running in the manager")
        # pmon's UDP counter runs at the pulse's rate: extra put in after it
        wait(lambda: [r["active"] for r in kget("servicechain", "guarded")
                      ["status"].get("reactions", [])] == [True], 60,
             "the reaction in force")
        wait(lambda: hops(port) == ["svc:30", "svc:32", "svc:31", "drop"],
             60, "extra in the node's chain")
        wait(lambda: kget("servicechain", "guarded")["status"].get(
            "programmed") == NODES, 60, "programmed with the reaction")
        wait(lambda: any(n["rx"] > 0 for n in mgr_call(NODE, "nf.list")["nfs"]
                         if n["service"] == SVC["extra"]), 60,
             "extra takes traffic")

        pulse(False)
        wait(lambda: hops(port) == ["svc:30", "svc:31", "drop"], 120,
             "extra out of the node's chain")
        wait(lambda: replicas() == 1, 180, "slow scaled in",
             show=lambda: kget("networkfunction", "slow")["status"])
        wait(lambda: kget("networkfunction", "slow")["status"].get(
            "registered") == 1, 120, "one replica left")
        reasons = [r for r, _ in events("networkfunction", "slow")]
        assert reasons.index("ScaledOut") < reasons.index("ScaledIn"), reasons
        chain_ev = [(r, m) for r, m in events("servicechain", "guarded")
                    if r.startswith("Reaction")]
        assert [r for r, _ in chain_ev][:2] == ["ReactionInserted",
                                                "ReactionRemoved"], chain_ev
        assert chain_ev[0][1].startswith(
            "udp-flood: extra put into the chain (pmon udp at "), chain_ev
        # what the load held is back in the pool, nothing lost with the
        # replica that went
        assert still_pool() == base
        assert mgr_call(NODE, "stats")["drops"]["nf_exit"] == exit0, [
            e for e in mgr_call(NODE, "event.list")["events"]
            if e["type"].startswith("nf.")][-12:]
    finally:
        kubectl("delete", "servicechain", "guarded", "--ignore-not-found",
                "--wait=true", timeout=120)
        kubectl("delete", "pod", "zpulse", "--ignore-not-found",
                "--wait=true", timeout=120)
        for o in objs:
            kubectl("delete", "networkfunction", o["metadata"]["name"],
                    "--ignore-not-found", "--wait=true", timeout=180)
        wait(lambda: not kget("pods", "-l", "zeronf.dev/networkfunction")
             ["items"], 120, "the NF pods gone")

"""make bench BENCH=k8s: ZeroNF's operator at scale, and an NF's start on
the real cluster (docs/kubernetes.md "Benchmark").

  {"bench":"k8s","nodes":N,"nfs":M,"reconcile_s":X,
   "pod_to_first_packet_ms":Y,...}

The test cluster (scripts/cluster.sh: two real nodes) with ZeroNF on it;
kwok (k8s/upstream/kwok, its stages in k8s/config/kwok) adds N = 100
simulated nodes, each with 10 NF slots. reconcile_s: from the N nodes and
10 NetworkFunctions of N replicas (M = 10 N NF pods) created at once, to
the operator having given every node its ZeroNFNode and host id, the node
agents' DaemonSet ready on every node, and every NetworkFunction Ready with
all its pods (the operator's Deployments, the controller manager's
ReplicaSets, the scheduler placing 10 on each node, kwok's nodes running
them); operator_s: until the operator's own part was done (the
ZeroNFNodes with their host ids, the Deployments): the rest is the
cluster's (the controller manager makes pods at its default 20 requests/s
to the API server). pod_to_first_packet_ms: on a real node, an application pod on a
ZeroNF port sends a datagram every millisecond into a ServiceChain whose
NetworkFunction does not exist yet; from the NetworkFunction created to the
manager counting its NF's first packet (the operator's Deployment, the
scheduler, the kubelet, the device plugin's Allocate, the NF registering,
the node agent programming the chain), read from the manager's control
socket every 2 ms. Medians of the runs, each run listed.

The cluster is brought up when it is not up (and down after), ZeroNF
deployed when it has none (and deleted after); what the bench makes is in
the namespace zeronf-bench and the kwok nodes, gone at the end.
"""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path

# not bench/common (a scratch directory made at import): the cluster tests
# import this module too (tests/cluster/test_scale.py)
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "cluster"))
sys.path.insert(0, str(REPO / "python"))
import kube  # noqa: E402
from zeronf.client import Client  # noqa: E402

NS = "zeronf-bench"
KWOK = REPO / ".deps" / "k8s" / "kwok" / "kwok"
STAGES = REPO / "k8s" / "config" / "kwok" / "stages.yaml"
LABEL = "zeronf.dev/bench"
NODE = "znk-node1"
SLOTS = 10  # NF slots of a kwok node: the scheduler puts 10 NF pods on each


def kwok_node(name: str) -> dict:
    res = {"cpu": "32", "memory": "128Gi", "pods": "110",
           "hugepages-2Mi": "8Gi", "zeronf.dev/nf": str(SLOTS)}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name,
                         "labels": {LABEL: "kwok",
                                    "kubernetes.io/hostname": name},
                         "annotations": {"kwok.x-k8s.io/node": "fake"}},
            "status": {"capacity": res, "allocatable": res}}


def network_function(name: str, service: int, replicas: int,
                     selector: dict) -> dict:
    return {"apiVersion": "zeronf.dev/v1alpha1", "kind": "NetworkFunction",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"serviceId": service, "program": "zeronf-forward",
                     "replicas": replicas, "nodeSelector": selector}}


def apply_all(objs: list[dict]) -> None:
    kube.kubectl("apply", "-f", "-", timeout=300, input=json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": objs}))


def nf_ready(st: dict, want: int) -> bool:
    return st.get("ready") == want and any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in st.get("conditions", []))


# ------------------------------------------------------------ reconcile
def reconcile_once(nodes: int, nfs: int) -> tuple[float, float]:
    """(reconcile_s, operator_s): until all is reconciled and running, and
    until the operator's own part was (every ZeroNFNode with its host id,
    every Deployment made)."""
    names = [f"kwok-{i:03d}" for i in range(nodes)]
    used = {n["spec"]["hostId"] for n in kube.kget("zeronfnodes")["items"]}
    real = len(used)  # the cluster's own nodes
    # what the operator gives: the lowest free host ids
    free = [h for h in range(1, 255) if h not in used][:nodes]
    objs = [kwok_node(n) for n in names]
    objs += [network_function(f"scale{i}", 40 + i, nodes * SLOTS // nfs,
                              {LABEL: "kwok"}) for i in range(nfs)]
    t0 = time.monotonic()
    apply_all(objs)
    operator = []  # when the operator's own part was done

    def done() -> bool:
        zn = kube.kget("zeronfnodes")["items"]
        ids = [n["spec"].get("hostId") for n in zn
               if n["metadata"]["name"] in names]
        if len(ids) != nodes or len(set(ids)) != nodes or not all(ids):
            return False
        if not operator:
            deps = kube.kget("deployments", "-n", NS)["items"]
            if len(deps) != nfs:
                return False
            operator.append(time.monotonic() - t0)
        ds = kube.kget("daemonset", "-n", "zeronf-system",
                       kube.NODE_AGENT).get("status", {})
        if ds.get("numberReady") != nodes + real:
            return False
        items = kube.kget("networkfunctions", "-n", NS)["items"]
        return len(items) == nfs and all(
            nf_ready(x.get("status", {}), nodes * SLOTS // nfs) for x in items)
    kube.wait(done, 1200, f"{nodes} nodes x {SLOTS} NFs reconciled",
              show=lambda: kube.kubectl("get", "networkfunctions", "-n", NS,
                                        check=False).stdout)
    took = time.monotonic() - t0
    ids = sorted(n["spec"]["hostId"] for n in kube.kget("zeronfnodes")["items"]
                 if n["metadata"]["name"] in names)
    if ids != free:
        raise RuntimeError(f"host ids {ids}, not the lowest free {free}")
    # what was asked is what was made: 10 NF pods on every kwok node
    pods = kube.kget("pods", "-n", NS, "-l", "zeronf.dev/networkfunction")
    per: dict[str, int] = {}
    for p in pods["items"]:
        per[p["spec"]["nodeName"]] = per.get(p["spec"]["nodeName"], 0) + 1
    if sorted(per) != names or set(per.values()) != {SLOTS}:
        raise RuntimeError(f"NF pods per node: {per}")
    # gone: the NetworkFunctions (their Deployments and pods), the nodes,
    # their ZeroNFNodes (host ids freed)
    kube.kubectl("delete", "networkfunctions", "--all", "-n", NS,
                 "--wait=true", timeout=600)
    kube.wait(lambda: not kube.kget("pods", "-n", NS, "-l",
                                    "zeronf.dev/networkfunction")["items"],
              600, "the bench's NF pods gone")
    kube.kubectl("delete", "nodes", "-l", f"{LABEL}=kwok", "--wait=true",
                 timeout=600)
    kube.wait(lambda: len(kube.kget("zeronfnodes")["items"]) == real, 300,
              "the kwok nodes' ZeroNFNodes gone")
    kube.wait(lambda: (kube.kget("daemonset", "-n", "zeronf-system",
                                 kube.NODE_AGENT).get("status", {})
                       .get("numberReady")) == real, 300,
              "the node agents of the kwok nodes gone")
    return took, operator[0]


# ------------------------------------------------------------ first packet
PROBE_SVC = 30


def probe_nfs(c: Client) -> list[dict]:
    return [n for n in c.call("nf.list")["nfs"] if n["service"] == PROBE_SVC]


def first_packet_once(c: Client) -> float:
    """ms from the probe NetworkFunction created to its first packet."""
    nf = network_function("probe", PROBE_SVC, 1,
                          {"kubernetes.io/hostname": NODE})
    t0 = time.monotonic()
    kube.apply(nf)
    deadline = t0 + 300
    while not any(n["rx"] > 0 for n in probe_nfs(c)):
        if time.monotonic() > deadline:
            raise TimeoutError("the probe NF had no packet in 300 s")
        time.sleep(0.002)
    took = (time.monotonic() - t0) * 1e3
    kube.kubectl("delete", "networkfunction", "probe", "-n", NS,
                 "--wait=true", timeout=180)
    kube.wait(lambda: not kube.kget("pods", "-n", NS, "-l",
                                    "zeronf.dev/networkfunction=probe")
              ["items"], 180, "the probe NF's pod gone")
    kube.wait(lambda: not probe_nfs(c), 60, "the probe NF gone from the "
              "manager")
    return took


def first_packet_setup() -> None:
    """The pulse pod on a ZeroNF port of node 1 (the CNI plugin), and the
    chain from it to the probe service, which has no NF yet."""
    pod = kube.app_pod("pulse", "10.201.0.1/24",
                       [kube.TCPCHECK, "pulse", "-to", "10.201.0.255:7200",
                        "-every", "1ms"], NODE, NS)
    chain = {"apiVersion": "zeronf.dev/v1alpha1", "kind": "ServiceChain",
             "metadata": {"name": "probe", "namespace": NS},
             "spec": {"fromPod": "pulse",
                      "hops": [{"networkFunction": "probe"}]}}
    apply_all([kube.nad(NS), pod, chain])
    kube.wait(lambda: kube.kget("pod", "-n", NS, "pulse").get(
        "status", {}).get("phase") == "Running", 120, "the pulse pod running")


# ------------------------------------------------------------ the bench
def is_up() -> bool:
    r = subprocess.run([str(kube.CLUSTER), "status"], capture_output=True,
                       text=True)
    return r.returncode == 0 and "kube-apiserver: running" in r.stdout


@contextlib.contextmanager
def namespace():
    """The bench's namespace, deleted with all in it at the end."""
    kube.kubectl("create", "namespace", NS)
    try:
        yield
    finally:
        kube.kubectl("delete", "namespace", NS, "--ignore-not-found",
                     "--wait=true", check=False, timeout=600)


@contextlib.contextmanager
def kwok():
    """kwok, playing the nodes labelled zeronf.dev/bench=kwok; at the end
    those nodes are deleted, then kwok stopped."""
    p = subprocess.Popen(
        [str(KWOK), "--kubeconfig", kube.KUBECONFIG,
         "--manage-nodes-with-label-selector", f"{LABEL}=kwok",
         "--config", str(STAGES), "--node-lease-duration-seconds", "40",
         "--cidr", "10.250.0.0/16", "-v", "WARN"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        kube.kubectl("delete", "nodes", "-l", f"{LABEL}=kwok",
                     "--wait=true", check=False, timeout=600)
        p.terminate()
        p.wait()


def bench_k8s(runs: int, nodes: int = 100, nfs: int = 10) -> None:
    from common import emit, log, median
    was_up = is_up()
    log("k8s: the cluster" + (" (up)" if was_up else ": up (minutes)"))
    kube.cluster("up")
    kube.cluster("images")
    had = kube.kubectl("get", "zeronfs.zeronf.dev", "default",
                       check=False).returncode == 0
    try:
        if not had:
            log("k8s: the operator and ZeroNF")
            kube.operator_up()
            kube.zeronf_up()
        with namespace():
            log("k8s: first packets")
            first_packet_setup()
            with Client(NODE) as c:
                fp = [first_packet_once(c) for _ in range(runs)]
            log(f"k8s: {nodes} kwok nodes x {SLOTS} NFs")
            with kwok():
                rec = [reconcile_once(nodes, nfs) for _ in range(runs)]
        emit({"bench": "k8s", "nodes": nodes, "nfs": nodes * SLOTS,
              "reconcile_s": median([r[0] for r in rec]),
              "pod_to_first_packet_ms": median(fp),
              "network_functions": nfs,
              "operator_s": median([r[1] for r in rec]),
              "reconcile_runs_s": [round(x[0], 2) for x in rec],
              "first_packet_runs_ms": [round(x, 1) for x in fp]})
    finally:
        if not had:
            kube.zeronf_down()
            kube.operator_down()
        if not was_up:
            kube.cluster("down")

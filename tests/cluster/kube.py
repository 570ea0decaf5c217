"""The test cluster from Python (scripts/cluster.sh, kubectl, the
operator and the ZeroNF resource), for the cluster tests (tests/cluster,
whose fixtures call it) and make bench BENCH=k8s (bench/k8s.py)."""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from harness import wait_for  # noqa: E402

CLUSTER = REPO / "scripts" / "cluster.sh"
KUBECONFIG = "/var/lib/zeronf-cluster/pki/admin.kubeconfig"
KUBECTL = REPO / ".deps" / "k8s" / "bin" / "kubectl"
TOOLS = "localhost/zeronf/tools:1"
ZERONF = "localhost/zeronf/zeronf:dev"
BUILD = Path(os.environ.get("ZERONF_BUILD", REPO / "build"))
TCPCHECK = "/usr/local/bin/zeronf-tcpcheck"  # in the tools image

def cluster(*args: str, timeout: float = 1800) -> str:
    r = subprocess.run([str(CLUSTER), *args], capture_output=True,
                       text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"cluster.sh {' '.join(args)}: {r.returncode}\n"
                           f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r.stdout


def kubectl(*args: str, input: str | None = None, check: bool = True,
            timeout: float = 120) -> subprocess.CompletedProcess:
    r = subprocess.run([str(KUBECTL), "--kubeconfig", KUBECONFIG, *args],
                       input=input, capture_output=True, text=True,
                       timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {r.stderr}")
    return r


def kget(*args: str) -> dict:
    return json.loads(kubectl("get", "-o", "json", *args).stdout)


def apply(obj: dict) -> None:
    kubectl("apply", "-f", "-", input=json.dumps(obj))


def wait(pred, timeout: float, what: str, show=None):
    """harness.wait_for, looking every half second (each look is a
    kubectl); @p show: what to say of the state when it times out."""
    try:
        return wait_for(pred, timeout, what, interval=0.5)
    except TimeoutError as e:
        if show is None:
            raise
        raise TimeoutError(f"{e}; now: {show()}") from None


def leftovers() -> list[str]:
    """What of a cluster is on this machine: none after `down`."""
    left = []
    for p in ("/var/lib/zeronf-cluster", "/run/zeronf-cluster"):
        if Path(p).exists():
            left.append(p)
    r = subprocess.run(["ip", "netns", "list"], capture_output=True,
                       text=True)
    left += [f"netns {x.split()[0]}" for x in r.stdout.splitlines()
             if x.startswith("znk-")]
    r = subprocess.run(["ip", "-o", "link", "show"], capture_output=True,
                       text=True)
    left += [f"link {x.split(':')[1].strip()}" for x in r.stdout.splitlines()
             if ": znk" in x]
    for c in Path("/sys/fs/cgroup").iterdir():
        left += [str(d) for d in c.glob("znk-node*")]
    r = subprocess.run(["pgrep", "-af",
                        "zeronf-cluster|kube-apiserver|kubelet|etcd "],
                       capture_output=True, text=True)
    left += [f"process {x}" for x in r.stdout.splitlines()]
    for pat in ("/var/run/dpdk/znk-node*", "/var/run/zeronf/znk-node*",
                "/mnt/huge/znk-node*"):
        left += [str(p) for p in Path("/").glob(pat.lstrip("/"))]
    mounts = Path("/proc/self/mounts").read_text()
    left += [f"mount {ln.split()[1]}" for ln in mounts.splitlines()
             if "zeronf-cluster" in ln]
    if Path("/opt/cni").exists() and not OPT_CNI_BEFORE:
        left.append("/opt/cni (the nodes' CNI directory)")
    return left


OPT_CNI_BEFORE = Path("/opt/cni").exists()


def image_files(name: str) -> tuple[str, ...]:
    """What cluster.sh makes image NAME of (zeronf, tools)."""
    return tuple(cluster("image-files", name).splitlines())


GROUP = "red"  # the managers' trust group (slots 64-71 in pods)
NODE_AGENT = "zeronf-node"  # the operator's DaemonSet
POOL = "znapp"  # the nodes' veth pairs for the CNI plugin (k8s/cni)
APP_PORTS = 6  # pairs a node: the manager's ports 2..7, named znapp0..5
TENANT = "blue"  # a tenant: its namespace, trust group, and these pairs
TENANT_PORTS = ("znapp2", "znapp3")  # ports 4 and 5: a pair, 4^1 = 5


@functools.cache
def files_hash(files: tuple[str, ...]) -> str:
    """Of what an image is made: its pods' template names it, so that a
    new build restarts them (the tag stays :dev). Read once a session."""
    import hashlib
    h = hashlib.sha256()
    for f in files:
        p = Path(f)
        for x in sorted(p.rglob("*")) if p.is_dir() else [p]:
            if x.is_file():
                h.update(x.read_bytes())
    return h.hexdigest()[:16]


# The cluster's ZeroNF (the operator makes each node's agent from it): the
# sample docs/kubernetes.md applies: the fabric (each node's fab0), the
# CNI plugin's pool, one trust group
ZERONF_CR = yaml.safe_load((REPO / "k8s" / "config" / "samples" /
                            "zeronf.yaml").read_text())
FABRIC_SUBNET = ZERONF_CR["spec"]["fabric"]["subnet"]
assert ZERONF_CR["spec"]["appPorts"] == APP_PORTS
assert ZERONF_CR["spec"]["trustGroups"][0]["name"] == GROUP
assert [(t["name"], [s["port"] for s in t["slices"]]) for t in
        ZERONF_CR["spec"]["tenants"]] == [(TENANT, list(TENANT_PORTS))]


def nad(namespace: str = "default") -> dict:
    """The NetworkAttachmentDefinition of ZeroNF ports (the CNI plugin
    through Multus, addresses from Debian's static IPAM plugin)."""
    return {"apiVersion": "k8s.cni.cncf.io/v1",
            "kind": "NetworkAttachmentDefinition",
            "metadata": {"name": "zeronf", "namespace": namespace},
            "spec": {"config": json.dumps({
                "cniVersion": "1.0.0", "name": "zeronf", "plugins": [
                    {"type": "zeronf", "capabilities": {"ips": True,
                                                        "mac": True},
                     "ipam": {"type": "static"}}]})}}


def tools_pod(name: str, command: list[str], node: str = "znk-node1",
              labels: dict | None = None, namespace: str = "default") -> dict:
    """A pod of the tools image (a shell, curl, iperf3, zeronf-tcpcheck)
    running @p command once on @p node."""
    meta: dict = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node, "restartPolicy": "Never",
                     "terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "c", "image": TOOLS,
                                     "imagePullPolicy": "Never",
                                     "command": command}]}}


def app_pod(name: str, ip: str, command: list[str],
            node: str = "znk-node1", namespace: str = "default") -> dict:
    """An application pod (tools_pod) with a second interface, net1, on a
    ZeroNF port at @p ip (nad())."""
    p = tools_pod(name, command, node, namespace=namespace)
    nets = [{"name": "zeronf", "ips": [ip], "interface": "net1"}]
    p["metadata"]["annotations"] = {"k8s.v1.cni.cncf.io/networks":
                                    json.dumps(nets)}
    return p


def agent_pod(node: str) -> str:
    pods = [p for p in kget("pods", "-n", "zeronf-system", "-l",
                            "app=zeronf-node", "--field-selector",
                            f"spec.nodeName={node}")["items"]
            if "deletionTimestamp" not in p["metadata"] and
            p.get("status", {}).get("phase") == "Running"]
    return pods[0]["metadata"]["name"] if pods else ""


def mgr_call(node: str, method: str, params: dict | None = None) -> dict:
    """A control request to @p node's manager (zeronf-node call, in its
    agent container)."""
    args = ["exec", "-n", "zeronf-system", agent_pod(node), "-c", "agent",
            "--", "/usr/local/bin/zeronf-node", "call", "-instance", node,
            method]
    if params is not None:
        args.append(json.dumps(params))
    return json.loads(kubectl(*args).stdout)


K8S = REPO / "k8s" / "config"


def operator_up() -> None:
    """The CRDs and the operator (k8s/config: its role as controller-gen
    wrote it, its Deployment) in zeronf-system, ready."""
    kubectl("apply", "-f", str(K8S / "crd"))
    kubectl("wait", "--for=condition=Established", "--timeout=60s",
            "crd/networkfunctions.zeronf.dev", "crd/servicechains.zeronf.dev",
            "crd/zeronfs.zeronf.dev", "crd/zeronfnodes.zeronf.dev")
    kubectl("apply", "-R", "-f", str(K8S / "rbac"))
    kubectl("apply", "-f", str(K8S / "operator" / "operator.yaml"))
    restart_on_new_build("deployment", "zeronf-operator")
    kubectl("rollout", "status", "-n", "zeronf-system",
            "deployment/zeronf-operator", "--timeout=120s", timeout=150)


def operator_down() -> None:
    kubectl("delete", "-f", str(K8S / "operator" / "operator.yaml"),
            "--ignore-not-found", "--wait=true", timeout=180)
    kubectl("delete", "-R", "-f", str(K8S / "rbac"), "--ignore-not-found")


def restart_on_new_build(kind: str, name: str,
                         images: tuple[str, ...] = ("zeronf",)) -> None:
    """The images' tags stay :dev: the pods' template names what they are
    made of, so that a new build restarts them on a kept cluster."""
    files = tuple(f for i in images for f in image_files(i))
    kubectl("patch", kind, "-n", "zeronf-system", name, "-p", json.dumps(
        {"spec": {"template": {"metadata": {"annotations": {
            "zeronf.dev/image": files_hash(files)}}}}}))


def zeronf_up() -> None:
    """The cluster's ZeroNF: the operator's node agent running on every
    node, every node's NF slots advertised."""
    apply(ZERONF_CR)
    wait(lambda: kubectl("get", "daemonset", "-n", "zeronf-system",
                         NODE_AGENT, check=False).returncode == 0,
         60, "the operator's node agent DaemonSet")
    restart_on_new_build("daemonset", NODE_AGENT, ("zeronf", "dashboard"))
    kubectl("rollout", "status", "-n", "zeronf-system",
            f"daemonset/{NODE_AGENT}", "--timeout=180s", timeout=200)

    def ready() -> bool:
        nodes = kget("nodes")["items"]
        return all(int(n["status"]["allocatable"].get("zeronf.dev/nf", "0"))
                   == 64 for n in nodes)
    wait(ready, 120, "every node's zeronf.dev/nf advertised")
    wait(lambda: any(c["type"] == "Ready" and c["status"] == "True"
                     for c in kget("zeronfs.zeronf.dev", "default").get(
                         "status", {}).get("conditions", [])),
         60, "the ZeroNF's status Ready")
    # each node's agent has programmed its manager and says so
    wait(lambda: [n.get("status", {}).get("ready") for n in
                  kget("zeronfnodes")["items"]] == [True, True],
         60, "both ZeroNFNodes ready")


def zeronf_down() -> None:
    """The ZeroNF deleted: its node agents go, with their pools."""
    # pods a failed test left: their pairs go at their DEL
    kubectl("delete", "pods", "--all", "-n", "default", "--wait=true",
            timeout=180)
    kubectl("delete", "zeronfs.zeronf.dev", "default", "--wait=true", timeout=180)
    wait(lambda: not kget("pods", "-n", "zeronf-system", "-l",
                          f"app={NODE_AGENT}")["items"],
         120, "the node agents gone with the ZeroNF")
    # and the dashboard's Service and Secret (the garbage collector)
    for kind in ("service", "secret"):
        wait(lambda: kubectl("get", kind, "-n", "zeronf-system",
                             "zeronf-dashboard", check=False).returncode != 0,
             60, f"the dashboard's {kind} gone with the ZeroNF")
    # the node agent took its pool of veth pairs with it
    for node in ("znk-node1", "znk-node2"):
        r = subprocess.run(["ip", "-n", node, "-o", "link", "show"],
                           capture_output=True, text=True, check=True)
        left = [ln.split(":")[1].strip() for ln in r.stdout.splitlines()
                if f": {POOL}" in ln]
        assert not left, f"{node}: {left}"

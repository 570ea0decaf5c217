"""The cluster tests (make test-cluster, docs/kubernetes.md): a real
Kubernetes cluster from upstream binaries, brought up by
scripts/cluster.sh for the session and taken down after it, with a check
that nothing of it is left."""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from harness import wait_for  # noqa: E402
CLUSTER = REPO / "scripts" / "cluster.sh"
KUBECONFIG = "/var/lib/zeronf-cluster/pki/admin.kubeconfig"
KUBECTL = REPO / ".deps" / "k8s" / "bin" / "kubectl"
TOOLS = "localhost/zeronf/tools:1"
BUILD = Path(os.environ.get("ZERONF_BUILD", REPO / "build"))
# what the tools image holds (cluster.sh image): a shell, iperf3, curl and
# zeronf-tcpcheck (k8s/cmd: every byte of a TCP connection, checked)
TOOL_FILES = ["/bin/sh", "/bin/dash", "/usr/bin/iperf3", "/usr/bin/curl",
              "/bin/sleep", "/bin/cat", "/bin/hostname",
              str(BUILD / "k8s" / "zeronf-tcpcheck")]
TCPCHECK = "/" + str(BUILD / "k8s" / "zeronf-tcpcheck").lstrip("/")

if os.environ.get("ZERONF_CLUSTER_TESTS") != "1":
    collect_ignore_glob = ["test_*.py"]  # make test-cluster runs them


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


def wait(pred, timeout: float, what: str):
    """harness.wait_for, looking every half second (each look is a
    kubectl)."""
    return wait_for(pred, timeout, what, interval=0.5)


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
    return left


@pytest.fixture(scope="session")
def k8s():
    """The cluster, up (cluster.sh up: idempotent); down at the end, and
    nothing of it left."""
    cluster("up")
    missing = [f for f in TOOL_FILES if not Path(f).exists()]
    assert not missing, f"{missing}: make test-cluster builds them"
    cluster("image", TOOLS, *TOOL_FILES)
    yield
    if os.environ.get("ZERONF_CLUSTER_KEEP") == "1":
        return
    cluster("down")
    left = leftovers()
    assert not left, left


ZERONF = "localhost/zeronf/zeronf:dev"
# the ZeroNF image: the manager, NFs, the node agent, DPDK's drivers, and
# what glibc loads itself (pthread_cancel's unwinder: without it the
# manager aborts while it stops, leaving its files)
ZERONF_FILES = [str(BUILD / "mgr" / "zeronf-mgr"),
                *[str(BUILD / "nfs" / f"zeronf-{n}")
                  for n in ("forward", "monitor", "dpi")],
                str(BUILD / "k8s" / "zeronf-node"),
                str(BUILD / "k8s" / "zeronf-operator"),
                "/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0",
                "/usr/lib/x86_64-linux-gnu/libgcc_s.so.1"]
GROUP = "red"  # the managers' trust group (slots 64-71 in pods)


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


def node_agent(extra_mgr_args: list[str] | None = None) -> list[dict]:
    """The node agent's DaemonSet: each node's manager (its ports, pool and
    trust group) and zeronf-node's device plugin beside it. Instance name:
    the node's."""
    env = [{"name": "NODE_NAME",
            "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    run = {"name": "run", "mountPath": "/var/run/dpdk"}
    huge = {"name": "huge", "mountPath": "/mnt/huge"}
    mgr = ["/usr/local/bin/zeronf-mgr", "-i", "$(NODE_NAME)",
           "-p", "net_null0", "-p", "net_null1,no-rx=1",
           "-c", "svc:1,port:1", "--mem", "128", "--huge-dir", "/mnt/huge",
           "--pool-size", "4095", "--trust-group", f"{GROUP}:1023",
           *(extra_mgr_args or [])]
    return [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": "zeronf-system"}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"name": "zeronf-node", "namespace": "zeronf-system"},
         "spec": {
             "selector": {"matchLabels": {"app": "zeronf-node"}},
             "template": {
                 "metadata": {"labels": {"app": "zeronf-node"},
                              "annotations": {"zeronf.dev/image":
                                              files_hash(tuple(ZERONF_FILES))}},
                 "spec": {
                     "hostNetwork": True, "hostPID": True,
                     "terminationGracePeriodSeconds": 10,
                     "containers": [
                         {"name": "manager", "image": ZERONF,
                          "imagePullPolicy": "Never", "command": mgr,
                          "env": env,
                          "securityContext": {"privileged": True},
                          "resources": {"limits": {
                              "hugepages-2Mi": "256Mi",
                              "memory": "512Mi"}},
                          "volumeMounts": [run, huge]},
                         {"name": "agent", "image": ZERONF,
                          "imagePullPolicy": "Never",
                          "command": ["/usr/local/bin/zeronf-node",
                                      "device-plugin", "-instance",
                                      "$(NODE_NAME)", "-nf-slots", "0-63",
                                      "-group", f"{GROUP}=64-71"],
                          "env": env,
                          # ready: kubelet has the slots of a ready
                          # manager (an NF pod before that is refused)
                          "readinessProbe": {
                              "exec": {"command": [
                                  "/usr/local/bin/zeronf-node", "ready"]},
                              "periodSeconds": 1},
                          "volumeMounts": [
                              run, huge,
                              {"name": "plugins", "mountPath":
                               "/var/lib/kubelet/device-plugins"}]}],
                     "volumes": [
                         {"name": "run", "hostPath": {
                             "path": "/var/run/dpdk",
                             "type": "DirectoryOrCreate"}},
                         {"name": "huge", "hostPath": {
                             "path": "/mnt/huge", "type": "Directory"}},
                         {"name": "plugins", "hostPath": {
                             "path": "/var/lib/kubelet/device-plugins",
                             "type": "Directory"}}]}}}}]


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


@pytest.fixture(scope="session")
def zeronf(k8s):
    """The ZeroNF image on every node and its node agent running on
    each, every node's NF slots advertised."""
    missing = [f for f in ZERONF_FILES if not Path(f).exists()]
    assert not missing, f"{missing}: make test-cluster builds them"
    cluster("image", ZERONF, *ZERONF_FILES)
    for o in node_agent():
        apply(o)
    kubectl("rollout", "status", "-n", "zeronf-system", "daemonset/zeronf-node",
            "--timeout=180s", timeout=200)

    def ready() -> bool:
        nodes = kget("nodes")["items"]
        return all(int(n["status"]["allocatable"].get("zeronf.dev/nf", "0"))
                   == 64 for n in nodes)
    wait(ready, 120, "every node's zeronf.dev/nf advertised")
    yield
    kubectl("delete", "namespace", "zeronf-system", "--wait=true",
            timeout=180)


K8S = REPO / "k8s" / "config"


@pytest.fixture(scope="session")
def operator(zeronf):
    """The CRDs and the operator (k8s/config: its role as controller-gen
    wrote it, its Deployment) in zeronf-system, ready."""
    kubectl("apply", "-f", str(K8S / "crd"))
    kubectl("wait", "--for=condition=Established", "--timeout=60s",
            "crd/networkfunctions.zeronf.dev", "crd/servicechains.zeronf.dev")
    kubectl("apply", "-f", str(K8S / "rbac"))
    op = (K8S / "operator" / "operator.yaml").read_text()
    # a new build restarts it (the image's tag stays :dev)
    kubectl("apply", "-f", "-", input=op)
    kubectl("patch", "deployment", "-n", "zeronf-system", "zeronf-operator",
            "-p", json.dumps({"spec": {"template": {"metadata": {
                "annotations": {"zeronf.dev/image":
                                files_hash(tuple(ZERONF_FILES))}}}}}))
    kubectl("rollout", "status", "-n", "zeronf-system",
            "deployment/zeronf-operator", "--timeout=120s", timeout=150)
    yield
    kubectl("delete", "-f", str(K8S / "rbac"), "--ignore-not-found")
    kubectl("delete", "clusterrolebinding", "zeronf-operator",
            "--ignore-not-found")

"""The cluster tests (make test-cluster, docs/kubernetes.md): a real
Kubernetes cluster from upstream binaries, brought up by
scripts/cluster.sh for the session and taken down after it, with a check
that nothing of it is left."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
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


def wait(pred, timeout: float, what: str, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"{what}: not after {timeout}s (last: {last!r})")


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

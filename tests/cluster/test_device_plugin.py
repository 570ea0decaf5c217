"""NF pods on the cluster (k8s/deviceplugin, docs/kubernetes.md): each asks
for one of its node's NF slots (zeronf.dev/nf, or a trust group's
zeronf.dev/group-NAME) and gets, from the device plugin, exactly the
files its NF opens and the environment libzeronf reads: no hostPath and
no privilege in its spec. Each NF is pid 1 of its pod's PID namespace;
they all join their node's manager, in the slot kubelet gave them."""
from __future__ import annotations

import subprocess
from pathlib import Path

from kube import GROUP, ZERONF, apply, kget, kubectl, mgr_call, wait

NODE = "znk-node1"


def nf_pod(name: str, service: int, resource: str = "zeronf.dev/nf"
           ) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "labels": {"test": "nf"}},
            "spec": {"nodeName": NODE, "terminationGracePeriodSeconds": 5,
                     "containers": [{
                         "name": "nf", "image": ZERONF,
                         "imagePullPolicy": "Never",
                         "command": ["/usr/local/bin/zeronf-forward", "-s",
                                     str(service), "-n", name],
                         "resources": {"limits": {resource: 1,
                                                  "memory": "256Mi"}},
                         "securityContext": {
                             "capabilities": {"drop": ["ALL"]},
                             "allowPrivilegeEscalation": False}}]}}


def nfs() -> dict:
    return {n["name"]: n for n in mgr_call(NODE, "nf.list")["nfs"]}


def mount_points(pid: int) -> set[str]:
    """Where things are mounted in process @p pid's mount namespace."""
    lines = Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
    return {ln.split()[4] for ln in lines}


def test_nf_pods_join_their_managers_with_only_their_files(zeronf):
    kubectl("delete", "pod", "-l", "test=nf", "--wait=true", timeout=180)
    base = mgr_call(NODE, "status")["pool"]["in_use"]
    pods = [nf_pod("fwd-a", 1), nf_pod("fwd-b", 1),
            nf_pod("fwd-red", 2, f"zeronf.dev/group-{GROUP}")]
    for p in pods:
        apply(p)
    def running(names) -> bool:
        now = nfs()  # one control request a look
        return all(now.get(n, {}).get("state") == "running" for n in names)
    wait(lambda: running(("fwd-a", "fwd-b", "fwd-red")), 120,
         "three NF pods registered")
    got = nfs()
    assert 0 <= got["fwd-a"]["instance"] <= 63
    assert 0 <= got["fwd-b"]["instance"] <= 63
    assert got["fwd-a"]["instance"] != got["fwd-b"]["instance"]
    assert 64 <= got["fwd-red"]["instance"] <= 71  # the group's slots
    assert got["fwd-red"]["trust_group"] == GROUP, got["fwd-red"]
    for p in pods:  # what the API holds: nothing of the host's
        spec = kget("pod", p["metadata"]["name"])["spec"]
        assert not any("hostPath" in v for v in spec.get("volumes", []))
        assert not spec.get("hostPID") and not spec.get("hostNetwork")
        sc = spec["containers"][0].get("securityContext", {})
        assert not sc.get("privileged")
    rundir = f"/var/run/dpdk/{NODE}"
    # the group's NF: of the manager's files, its own five, nothing else
    red = {m for m in mount_points(got["fwd-red"]["pid"])
           if m.startswith(rundir) or m.startswith("/mnt/huge")}
    slot = got["fwd-red"]["instance"]
    want = {f"{rundir}/zeronf.lock", f"{rundir}/zeronf-groups",
            f"{rundir}/zeronf-nf{slot}.lock"}
    assert want <= red, red
    assert len(red) == 5, red  # + its group's kick socket and file
    assert any(m.startswith(f"{rundir}/zeronf-kick-tg") for m in red)
    assert not any("map_" in m for m in red)  # no shared-pool memory
    # a shared-pool NF: the runtime directory, its control socket masked
    a = mount_points(got["fwd-a"]["pid"])
    assert rundir in a and f"{rundir}/zeronf.sock" in a
    assert any(m.startswith(f"/mnt/huge/{NODE}map_") for m in a)
    # the attack: the manager's control socket from each NF's files (its
    # mount namespace), with the control client the image has
    for name in ("fwd-a", "fwd-red"):
        r = subprocess.run(
            ["nsenter", "-t", str(got[name]["pid"]), "-m", "--",
             "/usr/local/bin/zeronf-node", "call", "-instance", NODE,
             "status"], capture_output=True, text=True, timeout=30)
        assert r.returncode != 0 and '"instance"' not in r.stdout, \
            (name, r.stdout, r.stderr)
    assert mgr_call(NODE, "status")["instance"] == NODE  # it answers us
    # a pod deleted: its NF leaves, its slot is free again
    kubectl("delete", "pod", "fwd-b", "--wait=true", timeout=120)
    wait(lambda: "fwd-b" not in nfs(), 60, "fwd-b gone from nf.list")
    apply(nf_pod("fwd-c", 1))
    wait(lambda: running(("fwd-c",)), 120, "a new NF pod in the free slot")
    kubectl("delete", "pod", "-l", "test=nf", "--wait=true", timeout=180)
    wait(lambda: not nfs(), 60, "every NF gone",
         show=lambda: mgr_call(NODE, "nf.list"))
    # nothing of theirs kept in the manager's pool
    wait(lambda: mgr_call(NODE, "status")["pool"]["in_use"] <= base, 30,
         "the pool back where it was")


def test_an_nf_that_asks_drives_a_ports_queue(zeronf):
    """Port sink's TX queues for NFs (zeronf.dev/txq-sink, ZeroNF
    nfTxQueues): a NetworkFunction with txPorts gets one of them from the
    manager, and one without none, though queues are free (the managers
    give them by request)."""
    nodes = kget("nodes")["items"]
    assert all(n["status"]["allocatable"].get("zeronf.dev/txq-sink") == "8"
               for n in nodes), [n["status"]["allocatable"] for n in nodes]
    sel = {"kubernetes.io/hostname": NODE}
    for name, svc, extra in (("txer", 5, {"txPorts": ["sink"]}),
                             ("plain", 6, {})):
        apply({"apiVersion": "zeronf.dev/v1alpha1", "kind": "NetworkFunction",
               "metadata": {"name": name, "namespace": "default"},
               "spec": {"serviceId": svc, "program": "zeronf-forward",
                        "nodeSelector": sel, **extra}})
    try:
        wait(lambda: {"txer", "plain"} <= set(nfs()), 180,
             "both NFs registered")
        sink = next(p for p in mgr_call(NODE, "port.list")["ports"]
                    if p["name"] == "sink")
        assert sink["nf_tx"]["queues"] == 8, sink["nf_tx"]
        assert [n["name"] for n in sink["nf_tx"]["nfs"]] == ["txer"], \
            sink["nf_tx"]
        pod = kget("pods", "-l", "zeronf.dev/networkfunction=txer")["items"][0]
        assert pod["spec"]["containers"][0]["resources"]["limits"][
            "zeronf.dev/txq-sink"] == "1"
        # a trust group's NF cannot ask: the workers send its packets
        r = kubectl("create", "--dry-run=server", "-f", "-", check=False,
                    input='{"apiVersion": "zeronf.dev/v1alpha1", "kind": '
                    '"NetworkFunction", "metadata": {"name": "x"}, "spec": '
                    '{"serviceId": 7, "program": "p", "trustGroup": "red", '
                    '"txPorts": ["sink"]}}')
        assert r.returncode != 0 and "leave txPorts out" in r.stderr, r.stderr
    finally:
        kubectl("delete", "networkfunction", "txer", "plain",
                "--ignore-not-found", "--wait=true", timeout=120)
        wait(lambda: not {"txer", "plain"} & set(nfs()), 120, "the NFs gone")

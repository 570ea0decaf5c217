"""The operator (k8s/operator, docs/kubernetes.md) on the cluster: a
NetworkFunction becomes a Deployment of NF pods, each in one of its node's
NF slots (the device plugin), registered with that node's manager; its
status says how many are ready; scaling it through its scale subresource
changes the NFs; a killed NF pod is replaced and the manager keeps no
buffer of it; deleting it removes everything it made; NF pods older than
a restarted manager are replaced."""
from __future__ import annotations

from kube import apply, kget, kubectl, mgr_call, tools_pod, wait

NODE = "znk-node1"


def registered(name: str) -> int:
    return sum(1 for n in mgr_call(NODE, "nf.list")["nfs"]
               if n["name"] == name and n["state"] == "running")


def status(name: str) -> dict:
    return kget("networkfunction", name).get("status", {})


def test_networkfunction_becomes_registered_nfs(zeronf):
    base = mgr_call(NODE, "status")["pool"]["in_use"]
    apply({"apiVersion": "zeronf.dev/v1alpha1", "kind": "NetworkFunction",
           "metadata": {"name": "fwd", "namespace": "default"},
           "spec": {"serviceId": 1, "program": "zeronf-forward",
                    "replicas": 2,
                    "nodeSelector": {"kubernetes.io/hostname": NODE}}})
    wait(lambda: registered("fwd") == 2, 180, "two NFs registered")
    wait(lambda: status("fwd").get("ready") == 2, 60, "status: 2 ready")
    st = status("fwd")
    ready = [c for c in st["conditions"] if c["type"] == "Ready"][0]
    assert ready["status"] == "True", st
    dep = kget("deployment", "nf-fwd")
    owner = dep["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("NetworkFunction", "fwd")
    pod = dep["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"]["zeronf.dev/nf"] == "1"
    assert not any("hostPath" in v for v in pod.get("volumes", []))
    # scaled through the scale subresource
    kubectl("scale", "networkfunction/fwd", "--replicas=3")
    wait(lambda: registered("fwd") == 3, 180, "three NFs registered")
    # an NF pod killed: replaced, its NF reclaimed
    pods = [p for p in kget("pods", "-l",
                            "zeronf.dev/networkfunction=fwd")["items"]
            if "deletionTimestamp" not in p["metadata"]]
    kubectl("delete", "pod", pods[0]["metadata"]["name"], "--wait=true",
            "--grace-period=0", "--force", timeout=120)
    wait(lambda: registered("fwd") == 3 and len(
        kget("pods", "-l", "zeronf.dev/networkfunction=fwd")["items"]) == 3,
        180, "the killed NF replaced")
    events = kget("events", "--field-selector",
                  "involvedObject.kind=NetworkFunction,involvedObject.name=fwd"
                  )["items"]
    assert any(e["reason"] == "Deployment" for e in events), events
    # deleted: its Deployment, pods and NFs go
    kubectl("delete", "networkfunction", "fwd", "--wait=true", timeout=120)
    wait(lambda: not kget("pods", "-l",
                          "zeronf.dev/networkfunction=fwd")["items"], 120,
         "its pods gone")
    assert kubectl("get", "deployment", "nf-fwd", check=False).returncode != 0
    wait(lambda: registered("fwd") == 0, 60, "its NFs gone")
    wait(lambda: mgr_call(NODE, "status")["pool"]["in_use"] <= base, 30,
         "the pool back where it was")


def test_nf_pods_older_than_their_manager_are_replaced(zeronf):
    """The manager restarted: kubelet would restart its NF containers with
    the files of the one gone (their first Allocate's mounts); the node
    agent deletes such pods and their Deployment makes new ones, which
    register with the new manager."""
    apply({"apiVersion": "zeronf.dev/v1alpha1", "kind": "NetworkFunction",
           "metadata": {"name": "fwd2", "namespace": "default"},
           "spec": {"serviceId": 2, "program": "zeronf-forward",
                    "replicas": 2,
                    "nodeSelector": {"kubernetes.io/hostname": NODE}}})
    try:
        manager_restarted()
    finally:
        kubectl("delete", "networkfunction", "fwd2", "--ignore-not-found",
                "--wait=true", timeout=120)
    wait(lambda: registered("fwd2") == 0, 120, "its NFs gone")


def manager_restarted() -> None:
    wait(lambda: registered("fwd2") == 2, 180, "two NFs registered")
    old = {p["metadata"]["uid"] for p in kget(
        "pods", "-l", "zeronf.dev/networkfunction=fwd2")["items"]}
    pid = mgr_call(NODE, "status")["pid"]
    mgr_call(NODE, "shutdown")

    def again() -> bool:
        try:
            st = mgr_call(NODE, "status")
        except RuntimeError:
            return False  # not up yet
        return st["pid"] != pid and st["ready"]
    wait(again, 120, "the manager back (its container restarted)")

    def replaced() -> bool:
        pods = kget("pods", "-l", "zeronf.dev/networkfunction=fwd2")["items"]
        new = {p["metadata"]["uid"] for p in pods
               if "deletionTimestamp" not in p["metadata"] and
               p["status"].get("phase") == "Running"}
        return len(new) == 2 and not new & old and registered("fwd2") == 2
    wait(replaced, 240, "new NF pods registered with the new manager")
    wait(lambda: status("fwd2").get("registered") == 2, 60,
         "the NetworkFunction's status: 2 registered")


AGENT = "system:serviceaccount:zeronf-system:zeronf-node"


def as_agent_on(node: str, *args: str):
    """kubectl as a node agent whose token is bound to @p node (what the
    API server puts in a pod-bound token's user: docs/kubernetes.md)."""
    return kubectl("--as", AGENT, "--as-user-extra",
                   f"authentication.kubernetes.io/node-name={node}", *args,
                   check=False)


def test_a_node_agent_deletes_only_its_own_node_s_nf_pods(zeronf):
    """Its role lets it delete pods; the admission policy of
    k8s/config/operator/operator.yaml narrows that to NF pods of its
    node (the restart test above has a real agent do it)."""
    apply({"apiVersion": "zeronf.dev/v1alpha1", "kind": "NetworkFunction",
           "metadata": {"name": "fwd3", "namespace": "default"},
           "spec": {"serviceId": 3, "program": "zeronf-forward",
                    "nodeSelector": {"kubernetes.io/hostname": NODE}}})
    apply(tools_pod("plain", ["/bin/sleep", "3600"], NODE))
    try:
        wait(lambda: kget("pods", "-l", "zeronf.dev/networkfunction=fwd3")
             ["items"], 120, "fwd3's pod")
        nf = kget("pods", "-l", "zeronf.dev/networkfunction=fwd3")[
            "items"][0]["metadata"]["name"]
        r = as_agent_on(NODE, "delete", "pod", "plain", "--wait=false")
        assert r.returncode != 0 and \
            "the node agent deletes NF pods only" in r.stderr, r.stderr
        r = as_agent_on("znk-node2", "delete", "pod", nf, "--wait=false")
        assert r.returncode != 0 and \
            "the node agent deletes its own node's pods only" in r.stderr, \
            r.stderr
        # nor anything its role does not name, whatever the node
        r = as_agent_on(NODE, "delete", "deployment", "nf-fwd3")
        assert r.returncode != 0 and "forbidden" in r.stderr, r.stderr
        r = as_agent_on(NODE, "delete", "pod", nf, "--wait=false")
        assert r.returncode == 0, r.stderr
        assert kget("pod", "plain")["metadata"].get("deletionTimestamp") \
            is None
    finally:
        kubectl("delete", "networkfunction", "fwd3", "--ignore-not-found",
                "--wait=true", timeout=120)
        kubectl("delete", "pod", "plain", "--ignore-not-found",
                "--wait=true", timeout=120)


def test_a_routers_table_from_a_configmap(zeronf):
    """A NetworkFunction's configMaps are files in its pod: a router's
    table (--routes) from a ConfigMap, its lookups the table's."""
    apply({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "table", "namespace": "default"},
           "data": {"routes": "10.0.0.0/8 1\n10.1.0.0/16 2\n"}})
    apply({"apiVersion": "zeronf.dev/v1alpha1", "kind": "NetworkFunction",
           "metadata": {"name": "rtr", "namespace": "default"},
           "spec": {"serviceId": 3, "program": "zeronf-router",
                    "args": ["--routes", "/etc/zeronf/table/routes"],
                    "configMaps": [{"name": "table",
                                    "mountPath": "/etc/zeronf/table"}],
                    "nodeSelector": {"kubernetes.io/hostname": NODE}}})
    try:
        wait(lambda: registered("rtr") == 1, 180, "the router registered")
        inst = next(n["instance"] for n in mgr_call(NODE, "nf.list")["nfs"]
                    if n["name"] == "rtr")

        def hop(addr: str):
            return mgr_call(NODE, "nf.call", {
                "instance": inst, "command": "route.lookup",
                "args": {"address": addr}})["next_hop"]
        assert (hop("10.1.2.3"), hop("10.200.0.1"), hop("192.0.2.1")) == \
            (2, 1, None)
        pod = kget("deployment", "nf-rtr")["spec"]["template"]["spec"]
        assert pod["containers"][0]["volumeMounts"][0]["readOnly"] is True
    finally:
        kubectl("delete", "networkfunction", "rtr", "--ignore-not-found",
                "--wait=true", timeout=120)
        kubectl("delete", "configmap", "table", "--ignore-not-found")
        wait(lambda: registered("rtr") == 0, 120, "the router gone")

"""A tenant on the cluster (docs/kubernetes.md "Tenants"): the sample
ZeroNF's tenant blue is namespace blue, with trust group blue, service ids
100-109 and the app ports znapp2 and znapp3. Two pods of blue get those
ports and talk kernel TCP through blue's NetworkFunction, its chain the
tenant's on the node where its NF runs (and on the other node, which has
none, not in force, saying why); each way another namespace could reach
into the tenant is tried and refused with the reason."""
from __future__ import annotations

import json

import pytest

from kube import (TCPCHECK, TENANT, TENANT_PORTS, app_pod, apply, kget,
                  kubectl, mgr_call, nad, wait)

N1, N2 = "znk-node1", "znk-node2"
API = "zeronf.dev/v1alpha1"


def nf(name: str, namespace: str, **spec) -> dict:
    return {"apiVersion": API, "kind": "NetworkFunction",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"program": "zeronf-forward", **spec}}


def create(obj: dict, dry: bool = True):
    return kubectl("create", *(["--dry-run=server"] if dry else []), "-f",
                   "-", input=json.dumps(obj), check=False)


@pytest.fixture
def blue(zeronf):
    kubectl("create", "namespace", TENANT, check=False)
    yield
    kubectl("delete", "namespace", TENANT, "--wait=true", timeout=240)


def test_a_tenants_pods_talk_through_its_own_chain(blue):
    apply(nad(TENANT))
    apply(nf("bfw", TENANT, serviceId=100, trustGroup=TENANT,
             args=["--cross-connect"],
             nodeSelector={"kubernetes.io/hostname": N1}))
    apply({"apiVersion": API, "kind": "ServiceChain",
           "metadata": {"name": "chain", "namespace": TENANT},
           "spec": {"hops": [{"networkFunction": "bfw"}]}})
    apply(app_pod("zbs", "10.210.0.2/24",
                  [TCPCHECK, "serve", "-listen", ":7100"], N1,
                  namespace=TENANT))
    apply(app_pod("zbc", "10.210.0.1/24", ["/bin/sleep", "3600"], N1,
                  namespace=TENANT))
    for p in ("zbs", "zbc"):
        wait(lambda: kget("pod", p, "-n", TENANT).get("status", {}).get(
            "phase") == "Running", 120, f"{p} running")
    wait(lambda: kget("nf", "bfw", "-n", TENANT).get("status", {}).get(
        "registered") == 1, 180, "blue's NF registered")

    # the tenant's pods have the tenant's ports, and no others (as the
    # node agent reports them, every 2 s)
    def ports() -> list[str]:
        return sorted(a["port"] for a in kget("zeronfnode", N1)["status"]
                      .get("attachments", []) if a["namespace"] == TENANT)
    wait(lambda: len(ports()) == 2, 60, "both pods' ports reported")
    assert ports() == sorted(TENANT_PORTS)
    me = kget("zeronfnode", N1)["status"]

    # its chain: the tenant's on node 1; node 2 has no bfw: not there
    def chain_status() -> dict:
        return kget("servicechain", "chain", "-n", TENANT).get("status", {})
    wait(lambda: chain_status().get("programmed") == [N1], 120,
         "the chain in force on node 1", show=chain_status)
    cond = next(c for c in chain_status()["conditions"] if c["type"] == "Ready")
    assert cond["status"] == "False" and cond["message"] == (
        f"{N2}: hop 0: NetworkFunction bfw has no pod on this node (a "
        f"tenant's chain stays on its node)"), cond
    assert mgr_call(N1, "chain.get", {"tenant": TENANT})["hops"] == ["svc:100"]
    assert mgr_call(N2, "chain.get", {"tenant": TENANT})["hops"] == []
    ids = {p["name"]: p["id"] for p in me["ports"]}
    # a sliced port has no port chain: the agent sets none
    for p in TENANT_PORTS:
        assert mgr_call(N1, "chain.get", {"port": ids[p]})["hops"] == []

    r = kubectl("exec", "-n", TENANT, "zbc", "--", TCPCHECK, "send", "-to",
                "10.210.0.2:7100", "-bytes", str(1 << 20), "-conns", "2",
                timeout=180, check=False)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert json.loads(r.stdout.splitlines()[-1])["ok"] == 2, r.stdout
    t = next(x for x in mgr_call(N1, "tenant.list")["tenants"]
             if x["name"] == TENANT)
    assert t["group"] == TENANT and t["services"] == [100, 109], t
    bfw = [n for n in mgr_call(N1, "nf.list")["nfs"] if n["service"] == 100]
    assert len(bfw) == 1 and bfw[0]["trust_group"] == TENANT, bfw
    # every byte of it crossed blue's NF: 2 MB in segments of at most 1448
    assert bfw[0]["rx"] > (2 << 20) // 1448 and \
        bfw[0]["drops"]["cross_tenant"] == 0, bfw


@pytest.mark.parametrize("obj, says", [
    (nf("steal-group", "default", serviceId=5, trustGroup=TENANT),
     f"trust group {TENANT} and service ids 100-109 are tenant {TENANT}'s: "
     f"for namespace {TENANT} only"),
    (nf("steal-id", "default", serviceId=105),
     f"are tenant {TENANT}'s: for namespace {TENANT} only"),
    (nf("no-group", TENANT, serviceId=101),
     f"namespace {TENANT} is tenant {TENANT}: its NetworkFunctions are in "
     f"trust group {TENANT}, of service ids 100-109"),
    (nf("wrong-id", TENANT, serviceId=5, trustGroup=TENANT),
     "of service ids 100-109"),
    ({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "thief", "namespace": "default"},
      "spec": {"containers": [{
          "name": "c", "image": "x", "resources": {
              "limits": {f"zeronf.dev/group-{TENANT}": "1"}}}]}},
     f"zeronf.dev/group-{TENANT} is tenant {TENANT}'s: for pods of "
     f"namespace {TENANT} only"),
    ({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "init-thief", "namespace": "default"},
      "spec": {"containers": [{"name": "c", "image": "x"}],
               "initContainers": [{
                   "name": "i", "image": "x", "resources": {
                       "requests": {f"zeronf.dev/group-{TENANT}": "1"},
                       "limits": {f"zeronf.dev/group-{TENANT}": "1"}}}]}},
     f"zeronf.dev/group-{TENANT} is tenant {TENANT}'s"),
    ({"apiVersion": API, "kind": "ServiceChain",
      "metadata": {"name": "side-door", "namespace": TENANT},
      "spec": {"fromPod": "x", "hops": [{"drop": True}]}},
     "its ServiceChain is its chain (what its slices receive): leave from, "
     "fromPod and rules out"),
])
def test_reaching_into_a_tenant_is_refused(blue, obj, says):
    r = create(obj)
    assert r.returncode != 0 and says in r.stderr, (r.stdout, r.stderr)


def test_what_a_tenant_may_do_is_taken(blue):
    """The policies refuse only what they say: the tenant's own, and
    another namespace's NF outside every tenant."""
    for obj in (nf("ok-blue", TENANT, serviceId=109, trustGroup=TENANT),
                nf("ok-default", "default", serviceId=99),
                nf("ok-red", "default", serviceId=110, trustGroup="red")):
        r = create(obj)
        assert r.returncode == 0, (obj, r.stderr)

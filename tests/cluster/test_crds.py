"""ZeroNF's custom resources on the cluster (k8s/config/crd, generated from
k8s/api/v1alpha1): the API server takes good NetworkFunctions and
ServiceChains, and refuses bad ones with a message that names the field
and says what is wrong (the CRDs' schema and CEL rules)."""
from __future__ import annotations

import json

import pytest

from conftest import REPO, kget, kubectl

CRDS = REPO / "k8s" / "config" / "crd"


@pytest.fixture(scope="module")
def crds(k8s):
    kubectl("apply", "-f", str(CRDS))
    kubectl("wait", "--for=condition=Established", "--timeout=60s",
            "crd/networkfunctions.zeronf.dev", "crd/servicechains.zeronf.dev")
    yield
    kubectl("delete", "-f", str(CRDS), "--wait=true", timeout=120)


def create(obj: dict):
    return kubectl("create", "-f", "-", input=json.dumps(obj), check=False)


def nf(name: str, **spec) -> dict:
    return {"apiVersion": "zeronf.dev/v1alpha1", "kind": "NetworkFunction",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"serviceId": 1, "program": "zeronf-forward", **spec}}


def chain(name: str, **spec) -> dict:
    return {"apiVersion": "zeronf.dev/v1alpha1", "kind": "ServiceChain",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def test_good_resources_are_taken_with_defaults(crds):
    r = create(nf("fwd", serviceId=2, args=["--flag"]))
    assert r.returncode == 0, r.stderr
    got = kget("networkfunction", "fwd")
    assert got["spec"]["replicas"] == 1  # the default
    # the scale subresource: kubectl scale works on it
    kubectl("scale", "networkfunction/fwd", "--replicas=3")
    assert kget("nf", "fwd")["spec"]["replicas"] == 3
    r = create(chain("web", **{"from": "lan", "hops": [
        {"networkFunction": "fwd"}, {"port": "wan"}],
        "rules": [{"match": {"proto": "tcp", "dst": "10.1.0.0/16",
                             "dport": "80"}, "priority": 10}]}))
    assert r.returncode == 0, r.stderr
    assert kget("chain", "web")["spec"]["hops"][1] == {"port": "wan"}
    kubectl("delete", "nf", "fwd")
    kubectl("delete", "chain", "web")


@pytest.mark.parametrize("obj, says", [
    (nf("bad1", serviceId=0), "spec.serviceId: Invalid value: 0"),
    (nf("bad2", serviceId=256), "should be less than or equal to 255"),
    (nf("bad3", replicas=17), "spec.replicas: Invalid value: 17"),
    (nf("bad4", trustGroup="red team"), "spec.trustGroup: Invalid value"),
    (nf("bad5", program=""), "spec.program"),
    (nf("bad6", command=[]), "command: the NF's program and its arguments"),
    (chain("bad7", hops=[]), "spec.hops: Invalid value"),
    (chain("bad8", hops=[{"networkFunction": "a", "port": "b"}]),
     "a hop is one of networkFunction, port or drop: true"),
    (chain("bad9", hops=[{}]), "a hop is one of"),
    (chain("bad10", hops=[{"drop": True}], rules=[
        {"match": {"src": "10.0.0.300/8"}}]), "an address or a prefix"),
    (chain("bad11", hops=[{"drop": True}], rules=[
        {"match": {"proto": "tcpx"}}]), "spec.rules[0].match.proto"),
    (chain("bad12", hops=[{"drop": True}], rules=[
        {"match": {}, "priority": 9000}]), "spec.rules[0].priority"),
    (chain("bad13", hops=[{"port": "wan"}] * 33), "spec.hops: Too many"),
])
def test_bad_resources_are_refused_saying_why(crds, obj, says):
    r = create(obj)
    assert r.returncode != 0, f"taken: {obj}"
    assert says in r.stderr, r.stderr
    assert kubectl("get", obj["kind"].lower(), obj["metadata"]["name"],
                   check=False).returncode != 0  # nothing made

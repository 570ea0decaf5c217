"""ZeroNF's custom resources on the cluster (k8s/config/crd, generated from
k8s/api/v1alpha1): the API server takes good NetworkFunctions,
ServiceChains and ZeroNFs, and refuses bad ones with a message that names
the field and says what is wrong (the CRDs' schema and CEL rules). The
resources are made in a namespace of their own, and the ZeroNFs with
`--dry-run=server` (the cluster's own, default, is the other tests')."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kube import REPO, kget, kubectl

CRDS = REPO / "k8s" / "config" / "crd"


NS = "crds"  # no operator acts on what these tests make: none runs here


@pytest.fixture(scope="module")
def crds(k8s):
    """The CRDs installed (they stay: the operator's tests use them)."""
    kubectl("apply", "-f", str(CRDS))
    kubectl("wait", "--for=condition=Established", "--timeout=60s",
            "crd/networkfunctions.zeronf.dev", "crd/servicechains.zeronf.dev",
            "crd/zeronfs.zeronf.dev", "crd/zeronfnodes.zeronf.dev")
    kubectl("create", "namespace", NS, check=False)
    yield
    kubectl("delete", "namespace", NS, "--wait=true", timeout=180)


def create(obj: dict):
    dry = ["--dry-run=server"] if obj["kind"] == "ZeroNF" else []
    return kubectl("create", *dry, "-f", "-", input=json.dumps(obj),
                   check=False)


def nf(name: str, **spec) -> dict:
    return {"apiVersion": "zeronf.dev/v1alpha1", "kind": "NetworkFunction",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"serviceId": 1, "program": "zeronf-forward", **spec}}


def chain(name: str, **spec) -> dict:
    return {"apiVersion": "zeronf.dev/v1alpha1", "kind": "ServiceChain",
            "metadata": {"name": name, "namespace": NS},
            "spec": spec}


def zeronf(name: str = "default", **spec) -> dict:
    return {"apiVersion": "zeronf.dev/v1alpha1", "kind": "ZeroNF",
            "metadata": {"name": name}, "spec": spec}


def test_good_resources_are_taken_with_defaults(crds):
    r = create(nf("fwd", serviceId=2, args=["--flag"]))
    assert r.returncode == 0, r.stderr
    got = kget("networkfunction", "fwd", "-n", NS)
    assert got["spec"]["replicas"] == 1  # the default
    # the scale subresource: kubectl scale works on it
    kubectl("scale", "networkfunction/fwd", "-n", NS, "--replicas=3")
    assert kget("nf", "fwd", "-n", NS)["spec"]["replicas"] == 3
    r = create(chain("web", hops=[{"networkFunction": "fwd"}, {"port": "wan"}],
                     rules=[{"match": {"proto": "tcp", "dst": "10.1.0.0/16",
                                       "dport": "80"}, "priority": 10}]))
    assert r.returncode == 0, r.stderr
    assert kget("chain", "web", "-n", NS)["spec"]["hops"][1] == {"port": "wan"}
    r = create(chain("pods", fromPod="client", hops=[{"pod": "server"}]))
    assert r.returncode == 0, r.stderr
    r = create(zeronf(ports=[{"name": "fabric", "device": "0000:3b:00.0"}],
                      fabric={"port": "fabric", "subnet": "10.78.0.0/24"}))
    assert r.returncode == 0, r.stderr
    z = json.loads(kubectl("create", "--dry-run=server", "-o", "json", "-f",
                           "-", input=json.dumps(zeronf())).stdout)["spec"]
    assert (z["nfSlots"], z["appPorts"], z["hugepagesMi"], z["poolSize"],
            z["appPortPrefix"]) == (64, 0, 256, 8191, "znapp"), z
    kubectl("delete", "nf", "fwd", "-n", NS)
    kubectl("delete", "chain", "web", "pods", "-n", NS)


@pytest.mark.parametrize("obj, says", [
    (nf("bad1", serviceId=0), "spec.serviceId: Invalid value: 0"),
    (nf("bad2", serviceId=256), "should be less than or equal to 255"),
    (nf("bad3", replicas=4097), "spec.replicas: Invalid value: 4097"),
    (nf("bad4", trustGroup="red team"), "spec.trustGroup: Invalid value"),
    (nf("bad5", program=""), "spec.program"),
    (nf("bad6", command=[]), "command: the NF's program and its arguments"),
    (chain("bad7", hops=[]), "spec.hops: Invalid value"),
    (chain("bad8", hops=[{"networkFunction": "a", "port": "b"}]),
     "a hop is one of networkFunction, port, pod or drop: true"),
    (chain("bad9", hops=[{}]), "a hop is one of"),
    (chain("bad10", hops=[{"drop": True}], rules=[
        {"match": {"src": "10.0.0.300/8"}}]), "an address or a prefix"),
    (chain("bad11", hops=[{"drop": True}], rules=[
        {"match": {"proto": "tcpx"}}]), "spec.rules[0].match.proto"),
    (chain("bad12", hops=[{"drop": True}], rules=[
        {"match": {}, "priority": 9000}]), "spec.rules[0].priority"),
    (chain("bad13", hops=[{"port": "wan"}] * 33), "spec.hops: Too many"),
    (chain("bad14", hops=[{"port": "123"}]), "spec.hops[0].port"),
    (chain("bad15", **{"from": "lan", "fromPod": "a", "hops": [{"drop": True}]}),
     "from or fromPod, not both"),
    (chain("bad16", **{"from": "lan", "hops": [{"drop": True}],
                       "rules": [{"match": {"proto": "tcp"}}]}),
     "rules match what enters any port: leave from and fromPod out"),
    (zeronf("mine"), "one ZeroNF a cluster, named default"),
    (zeronf(nfSlots=90, trustGroups=[{"name": "red", "slots": 8}]),
     "nfSlots and the trust groups' slots: 96 at most"),
    (zeronf(ports=[{"name": "7", "device": "net_null0"}]),
     "spec.ports[0].name"),
    (zeronf(ports=[{"name": "a", "device": "net_null0"}] * 2),
     "Duplicate value"),
    (zeronf(ports=[{"name": "a", "device": "x;rm -rf /"}]),
     "spec.ports[0].device"),
    (zeronf(appPorts=30, ports=[{"name": f"p{i}", "device": f"net_null{i}"}
                                for i in range(3)]),
     "ports and appPorts: 32 at most"),
    (zeronf(fabric={"port": "f", "subnet": "2001:db8::/64"}),
     "an IPv4 subnet of /24 or more addresses"),
    (zeronf(defaultChain=["svc:1", "port:a b"]), "spec.defaultChain[1]"),
    (nf("bad17", autoscale={"maxReplicas": 2, "minReplicas": 3, "scaleOut": {
        "ringOccupancyPercent": 50}}), "minReplicas is more than maxReplicas"),
    (nf("bad18", autoscale={"maxReplicas": 2, "scaleOut": {"forSeconds": 1}}),
     "scaleOut: ringOccupancyPercent, ingressDropsPerSecond or both"),
    (chain("bad19", hops=[{"drop": True}], reactions=[{
        "name": "Syn", "when": {"networkFunction": "m", "counter": "c",
                                "above": 1},
        "insert": {"networkFunction": "f"}}]), "spec.reactions[0].name"),
    (zeronf(trustGroups=[{"name": "red"}], tenants=[{
        "name": "blue", "trustGroup": "blue",
        "serviceIds": {"first": 1, "last": 2}}]),
     "a tenant's trustGroup is one of trustGroups"),
    (zeronf(trustGroups=[{"name": "red"}], tenants=[
        {"name": "a", "trustGroup": "red", "serviceIds": {"first": 1, "last": 2}},
        {"name": "b", "trustGroup": "red", "serviceIds": {"first": 3, "last": 4}}]),
     "one tenant a trust group"),
    (zeronf(trustGroups=[{"name": "red"}, {"name": "blue"}], tenants=[
        {"name": "a", "trustGroup": "red", "serviceIds": {"first": 1, "last": 5}},
        {"name": "b", "trustGroup": "blue", "serviceIds": {"first": 5, "last": 9}}]),
     "the tenants' service ids overlap"),
    (zeronf(trustGroups=[{"name": "red"}], tenants=[
        {"name": "Red", "trustGroup": "red", "serviceIds": {"first": 1, "last": 2}}]),
     "spec.tenants[0].name"),
    (zeronf(trustGroups=[{"name": "red"}], tenants=[
        {"name": "a", "trustGroup": "red", "serviceIds": {"first": 1, "last": 2},
         "slices": [{"port": "p", "vlan": 5, "mac": "02:00:00:00:00:01"}]}]),
     "a slice is a whole port, or one of vlan, mac or prefix"),
])
def test_bad_resources_are_refused_saying_why(crds, obj, says):
    r = create(obj)
    assert r.returncode != 0, f"taken: {obj}"
    assert says in r.stderr, r.stderr
    ns = ["-n", NS] if obj["kind"] != "ZeroNF" else []
    assert kubectl("get", obj["kind"].lower() + "s.zeronf.dev",
                   obj["metadata"]["name"], *ns,
                   check=False).returncode != 0  # nothing made


def test_an_exported_deployment_file_is_taken(crds):
    """zeronf k8s export deploy/demo.yaml: every resource valid by the API
    server itself (dry runs)."""
    r = subprocess.run([sys.executable, "-m", "zeronf", "k8s", "export",
                        str(REPO / "deploy" / "demo.yaml"), "--namespace", NS],
                       capture_output=True, text=True, cwd=REPO,
                       env={**os.environ, "PYTHONPATH": str(REPO / "python")},
                       timeout=60)
    assert r.returncode == 0, r.stderr
    out = kubectl("create", "--dry-run=server", "-f", "-", input=r.stdout,
                  check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("created (server dry run)") == 5, out.stdout

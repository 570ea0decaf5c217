"""`zeronf k8s export` (python/zeronf/k8s_export.py, docs/kubernetes.md):
a deployment file becomes the cluster's resources, each valid by its CRD's
schema (k8s/config/crd; the API server's own check of the demo's is in
tests/cluster/test_crds.py), and what they cannot say is named."""
from __future__ import annotations

import subprocess
import sys

import jsonschema
import pytest
import yaml

from harness import REPO

CRDS = {d["spec"]["names"]["kind"]: d for d in
        (yaml.safe_load(p.read_text()) for p in
         (REPO / "k8s" / "config" / "crd").glob("*.yaml"))}


def schema(kind: str) -> dict:
    """A CRD's schema as JSON Schema (its x-kubernetes-* words dropped)."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items()
                    if not k.startswith("x-kubernetes")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return strip(CRDS[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"])


def export(path, *args: str) -> tuple[list[dict], str]:
    r = subprocess.run([sys.executable, "-m", "zeronf", "k8s", "export",
                        str(path), *args], capture_output=True, text=True,
                       cwd=REPO, timeout=60,
                       env={"PYTHONPATH": str(REPO / "python"),
                            "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    return [d for d in yaml.safe_load_all(r.stdout) if d], r.stderr


def test_the_demo_exports_to_valid_resources():
    docs, notes = export(REPO / "deploy" / "demo.yaml", "--namespace", "nfv",
                         "--image", "reg/zeronf:1")
    kinds = [(d["kind"], d["metadata"]["name"]) for d in docs]
    assert kinds == [("ZeroNF", "default"),
                     ("NetworkFunction", "ingress-mon"),
                     ("NetworkFunction", "fwd"), ("NetworkFunction", "dpi"),
                     ("ServiceChain", "default")], kinds
    for d in docs:
        jsonschema.validate(d, schema(d["kind"]))
    z, fwd, ch = docs[0]["spec"], docs[2], docs[4]
    assert z["image"] == "reg/zeronf:1"
    assert [p["name"] for p in z["ports"]] == ["out", "in2"]
    assert fwd["metadata"]["namespace"] == "nfv"
    assert fwd["spec"] == {"serviceId": 2, "replicas": 2,
                           "program": "zeronf-forward"}
    assert ch["spec"]["hops"] == [{"networkFunction": "ingress-mon"},
                                  {"networkFunction": "fwd"},
                                  {"networkFunction": "dpi"},
                                  {"port": "out"}]
    # the pcaps and the DPI's report are paths of this machine: said
    assert "kept: ports[0]: net_pcap0" in notes
    assert "kept: services 'dpi': argument --report" not in notes
    assert "kept: services 'dpi': argument ../nfs/dpi/ndpi-4.2" in notes


def test_what_the_resources_cannot_say_is_named(tmp_path):
    f = tmp_path / "d.yaml"
    f.write_text(yaml.safe_dump({
        "name": "x",
        "manager": {"trust_groups": [{"name": "red", "buffers": 2047}],
                    "rx_threads": 2},
        "ports": [{"name": "lan", "devargs": "net_null0"},
                  {"name": "wan", "devargs": "net_null1"}],
        "services": [{"name": "fw_1", "nf": {"binary": "zeronf-forward"},
                      "trust_group": "red", "memory_mb": 64,
                      "sandbox": True}],
        "chain": ["fw_1", "port:wan"],
        "rules": [{"match": {"proto": "tcp", "dport": 80},
                   "chain": ["fw_1", "drop"], "priority": 5}],
        "flows": [{"flow": {"proto": "udp", "src": "10.0.0.1",
                            "dst": "10.0.0.2", "sport": 1, "dport": 2},
                   "chain": ["drop"]}],
    }))
    docs, notes = export(f)
    for d in docs:
        jsonschema.validate(d, schema(d["kind"]))
    by = {(d["kind"], d["metadata"]["name"]): d["spec"] for d in docs}
    assert by[("ZeroNF", "default")]["trustGroups"] == [
        {"name": "red", "buffers": 2047}]
    assert by[("NetworkFunction", "fw-1")] == {
        "serviceId": 1, "replicas": 1, "program": "zeronf-forward",
        "trustGroup": "red", "resources": {"limits": {"memory": "64Mi"}}}
    assert by[("ServiceChain", "rule-0")] == {
        "hops": [{"networkFunction": "fw-1"}, {"drop": True}],
        "rules": [{"match": {"proto": "tcp", "dport": "80"}, "priority": 5}]}
    for said in ("left out: manager.rx_threads", "left out: flows (1)",
                 "left out: services 'fw_1': sandbox"):
        assert said in notes, notes


def test_policies_become_the_resources_policies(tmp_path):
    """A service's autoscale is its NetworkFunction's; a reaction is one
    of every chain the manager would put its NF into: the default chain
    and each port's chain that has its after (not the rules', whose
    chains the manager leaves alone)."""
    f = tmp_path / "d.yaml"
    f.write_text(yaml.safe_dump({
        "name": "x",
        "ports": [{"name": "lan", "devargs": "net_null0"},
                  {"name": "wan", "devargs": "net_null1"},
                  {"name": "dmz", "devargs": "net_null2",
                   "chain": ["fw_a", "port:lan"]}],
        "services": [{"name": "mon", "nf": {"binary": "zeronf-monitor"}},
                     {"name": "fw_a", "nf": {"binary": "zeronf-forward"}},
                     {"name": "filter", "nf": {"binary": "zeronf-filter"}}],
        "chain": ["mon", "fw_a", "port:wan"],
        "rules": [{"match": {"proto": "udp"}, "chain": ["mon", "drop"]}],
        "autoscale": [{"service": "fw_a", "max": 4,
                       "out_when": {"ring_occupancy": 0.5, "drop_rate": 99.5,
                                    "for_s": 1.5},
                       "in_when": {"idle_for_s": 4}}],
        "reactions": [{"name": "syn_flood",
                       "when": {"service": "mon", "counter": "tcp_syn",
                                "above": 1000.5},
                       "insert": {"service": "filter", "after": "mon",
                                  "remove_after_s": 2}},
                      {"name": "never", "when": {"service": "mon",
                                                 "counter": "udp",
                                                 "above": 1},
                       "insert": {"service": "filter", "after": "filter"}}],
    }))
    docs, notes = export(f)
    for d in docs:
        jsonschema.validate(d, schema(d["kind"]))
    by = {(d["kind"], d["metadata"]["name"]): d["spec"] for d in docs}
    assert by[("NetworkFunction", "fw-a")]["autoscale"] == {
        "maxReplicas": 4, "scaleOut": {"ringOccupancyPercent": 50,
                                       "ingressDropsPerSecond": 100,
                                       "forSeconds": 2},
        "scaleIn": {"forSeconds": 4}}
    assert "autoscale" not in by[("NetworkFunction", "mon")]
    syn = {"name": "syn-flood",
           "when": {"networkFunction": "mon", "counter": "tcp_syn",
                    "above": 1000},
           "insert": {"networkFunction": "filter", "after": "mon",
                      "removeAfterSeconds": 2}}
    # the default chain has mon; dmz's chain and the rule's do not
    assert by[("ServiceChain", "default")]["reactions"] == [syn]
    assert "reactions" not in by[("ServiceChain", "from-dmz")]
    assert "reactions" not in by[("ServiceChain", "rule-0")]
    assert "left out: reactions 'never': no chain has its service " \
        "'filter'" in notes, notes
    assert "autoscale" not in notes and "left out: reactions (" not in notes


def test_a_tenant_is_a_namespace(tmp_path):
    """A tenant is the ZeroNF's (its slices' ports by name), its NFs (its
    trust group's) and its chain in the namespace of its name; what a
    cluster holds otherwise (CPU, memory, its socket's user) is named."""
    f = tmp_path / "d.yaml"
    f.write_text(yaml.safe_dump({
        "name": "x",
        "manager": {"trust_groups": [{"name": "red"}, {"name": "blue"}],
                    "tenants": [{"name": "Red_1", "trust_group": "red",
                                 "service_ids": [10, 19], "uid": 1000,
                                 "cpu_percent": 50,
                                 "slices": [{"port": "lan", "vlan": 10},
                                            {"port": 1}],
                                 "chain": ["rfw", "port:wan"]},
                                {"name": "blue", "trust_group": "blue"}]},
        "ports": [{"name": "lan", "devargs": "net_null0"},
                  {"name": "wan", "devargs": "net_null1"}],
        "services": [{"name": "rfw", "id": 10, "trust_group": "red",
                      "nf": {"binary": "zeronf-forward"}},
                     {"name": "fw", "nf": {"binary": "zeronf-forward"}}],
        "chain": ["fw", "port:wan"],
    }))
    docs, notes = export(f, "--namespace", "ops")
    for d in docs:
        jsonschema.validate(d, schema(d["kind"]))
    by = {(d["kind"], d["metadata"]["namespace"] if "namespace" in
           d["metadata"] else "", d["metadata"]["name"]): d["spec"]
          for d in docs}
    assert by[("ZeroNF", "", "default")]["tenants"] == [
        {"name": "red-1", "trustGroup": "red",
         "serviceIds": {"first": 10, "last": 19},
         "slices": [{"port": "lan", "vlan": 10}, {"port": "wan"}]}]
    assert by[("NetworkFunction", "red-1", "rfw")]["trustGroup"] == "red"
    assert ("NetworkFunction", "ops", "fw") in by
    assert by[("ServiceChain", "red-1", "chain")] == {
        "hops": [{"networkFunction": "rfw"}, {"port": "wan"}]}
    assert by[("ServiceChain", "ops", "default")]["hops"][0] == \
        {"networkFunction": "fw"}
    for said in ("left out: manager.tenants 'Red_1': uid",
                 "left out: manager.tenants 'Red_1': cpu_percent",
                 "left out: manager.tenants 'blue': no service_ids"):
        assert said in notes, notes
    assert "manager.tenants (" not in notes


def test_a_bad_file_is_refused_saying_why(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("name: x\nports: []\nservices: []\nchain: [nosuch]\n")
    r = subprocess.run([sys.executable, "-m", "zeronf", "k8s", "export",
                        str(f)], capture_output=True, text=True, cwd=REPO,
                       env={"PYTHONPATH": str(REPO / "python")}, timeout=60)
    assert r.returncode == 1 and "nosuch" in r.stderr and not r.stdout, r


@pytest.mark.parametrize("kind", ["ZeroNF", "NetworkFunction", "ServiceChain"])
def test_the_crds_are_read(kind):
    assert schema(kind)["properties"]["spec"]["type"] == "object"

"""A deployment file as ZeroNF's Kubernetes resources (docs/kubernetes.md
"From a deployment file"): `zeronf k8s export FILE`. The file's ports,
trust groups and manager settings become the cluster's ZeroNF (every
node's manager), each service a NetworkFunction, the default chain, each
port's chain and each rule a ServiceChain. What the resources cannot say
(exact flows, routes, sandboxes and VMs, CPU lists) is left out and
named, never dropped silently. A service's autoscale becomes its
NetworkFunction's, a reaction one of each ServiceChain the manager would
put its NF into (the default chain, each port's chain that has its
`after`); a tenant the ZeroNF's, in the namespace of its name its NFs
(those of its trust group) and its chain."""
from __future__ import annotations

import math
import re
from pathlib import Path

from .spec import Deployment

API = "zeronf.dev/v1alpha1"
# where the image has the NFs (cluster.sh images: /usr/local/bin)
IMAGE_BIN = "/usr/local/bin"
_NAME = re.compile(r"[^a-z0-9-]+")


def _k8s_name(s: str) -> str:
    """A DNS-1123 label of a ZeroNF name (fwd_2 -> fwd-2)."""
    n = _NAME.sub("-", s.lower()).strip("-")[:63].strip("-")
    return n or "x"


def _seconds(v: float) -> int:
    """A time of the file as the resources' whole seconds (up)."""
    return int(math.ceil(v))


def _autoscale(a: dict) -> dict:
    """A file's autoscale policy as a NetworkFunction's (the manager's
    defaults, mgr/nf/policy.c, are the CRD's)."""
    o, i = a.get("out_when", {}), a.get("in_when", {})
    out: dict = {}
    if "ring_occupancy" in o:
        out["ringOccupancyPercent"] = max(1, round(100 * o["ring_occupancy"]))
    if "drop_rate" in o:
        out["ingressDropsPerSecond"] = max(1, int(math.ceil(o["drop_rate"])))
    if "for_s" in o:
        out["forSeconds"] = _seconds(o["for_s"])
    spec: dict = {"maxReplicas": a.get("max", 16), "scaleOut": out}
    if "min" in a:
        spec["minReplicas"] = a["min"]
    sin: dict = {}
    if "ring_occupancy_below" in i:
        sin["ringOccupancyPercentBelow"] = round(
            100 * i["ring_occupancy_below"])
    if "idle_for_s" in i:
        sin["forSeconds"] = _seconds(i["idle_for_s"])
    if sin:
        spec["scaleIn"] = sin
    return spec


def _reaction(r: dict, nf_name) -> dict:
    w, ins = r["when"], r["insert"]
    when = {"networkFunction": nf_name(w["service"]),
            "counter": w["counter"], "above": int(math.floor(w["above"]))}
    if "for_s" in w:
        when["forSeconds"] = _seconds(w["for_s"])
    insert = {"networkFunction": nf_name(ins["service"])}
    if "after" in ins:
        insert["after"] = nf_name(ins["after"])
    if "remove_after_s" in ins:
        insert["removeAfterSeconds"] = _seconds(ins["remove_after_s"])
    return {"name": _k8s_name(r["name"]), "when": when, "insert": insert}


def export(d: Deployment, namespace: str = "default",
           image: str | None = None) -> tuple[list[dict], list[str]]:
    """The resources, and notes: what of the file they leave out ("left
    out: ...") or keep though it may not hold on a cluster ("kept:
    ...")."""
    left: list[str] = [
        f"left out: bundles: {b.name} ({', '.join(b.services)}): on a "
        f"cluster each NF runs in a pod of its own" for b in d.bundles]
    svc_name = {s.id: _k8s_name(s.name) for s in d.services}
    by_name = {s.name: s.id for s in d.services}
    port_name = {i: p.get("name") or f"port{i}" for i, p in
                 enumerate(d.ports)}

    def hops(steps: list[str], where: str) -> list[dict] | None:
        out = []
        for st in steps:
            if st == "drop":
                out.append({"drop": True})
            elif st.startswith("svc:") and "@" not in st:
                out.append({"networkFunction": svc_name[int(st[4:])]})
            elif st.startswith("port:") and "@" not in st:
                out.append({"port": port_name[int(st[5:])]})
            else:
                left.append(f"left out: {where}: step {st} (another host's: "
                            f"on a cluster, hops run where their pods do)")
                return None
        return out

    mgr = d.manager
    spec: dict = {"ports": [{"name": port_name[i], "device": p["devargs"]}
                            for i, p in enumerate(d.ports)]}
    if image:
        spec["image"] = image
    if "memory_mb" in mgr:
        spec["hugepagesMi"] = mgr["memory_mb"]
    if "pool_size" in mgr:
        spec["poolSize"] = mgr["pool_size"]
    groups = [{"name": g["name"], **({"buffers": g["buffers"]}
                                     if "buffers" in g else {})}
              for g in mgr.get("trust_groups", [])]
    if groups:
        spec["trustGroups"] = groups
    tenant_ns: dict[str, str] = {}  # trust group -> its tenant's namespace
    tenants = []
    for t in d.tenants:
        name = _k8s_name(t["name"])[:31].strip("-")
        if "service_ids" not in t:
            left.append(f"left out: manager.tenants '{t['name']}': no "
                        f"service_ids (a tenant of the cluster has some)")
            continue
        lo, hi = t["service_ids"]
        tenant_ns[t["trust_group"]] = name
        slices = []
        for sl in t["slices"]:
            out_sl = {"port": port_name[sl["port"]]}
            for k in ("vlan", "mac", "prefix"):
                if k in sl:
                    out_sl[k] = sl[k]
            slices.append(out_sl)
        tenants.append({"name": name, "trustGroup": t["trust_group"],
                        "serviceIds": {"first": lo, "last": hi},
                        **({"slices": slices} if slices else {})})
        for k in ("uid", "cpu_percent", "memory_mb"):
            if k in t:
                left.append(f"left out: manager.tenants '{t['name']}': {k} "
                            f"(on a cluster: namespace {name}'s "
                            f"ResourceQuota, and RBAC for who may do what)")
    if tenants:
        spec["tenants"] = tenants
    for k in sorted(set(mgr) - {"memory_mb", "pool_size", "trust_groups",
                                "log_dir", "tenants"}):
        left.append(f"left out: manager.{k} (the ZeroNF's managerArgs "
                    f"can carry it)")
    for i, p in enumerate(d.ports):
        if p.get("trust_group"):
            left.append(f"left out: ports[{i}].trust_group")
        if "=/" in p["devargs"] or "=../" in p["devargs"]:
            left.append(f"kept: ports[{i}]: {p['devargs']}: a path of this "
                        f"machine (is it on every node?)")
    docs: list[dict] = [{"apiVersion": API, "kind": "ZeroNF",
                         "metadata": {"name": "default"}, "spec": spec}]

    for s in d.services:
        nf = {"serviceId": s.id, "replicas": s.replicas}
        b = Path(s.binary)
        # an NF installed with ZeroNF is in the image by name
        nf["program"] = b.name if b.name.startswith("zeronf-") else s.binary
        if s.args:
            nf["args"] = list(s.args)
            for arg in s.args:
                if arg.startswith("/") or arg.startswith("../"):
                    left.append(f"kept: services '{s.name}': argument "
                                f"{arg}: a path of this machine (is it in "
                                f"the NF's pod?)")
        if s.trust_group:
            nf["trustGroup"] = s.trust_group
        if s.memory_mb:
            nf["resources"] = {"limits": {"memory": f"{s.memory_mb}Mi"}}
        for what, there in (("sandbox", s.sandbox), ("vm", s.vm),
                            ("cpus", s.cpus)):
            if there:
                left.append(f"left out: services '{s.name}': {what} (a pod "
                            f"is its sandbox; CPUs: its resources)")
        scale = next((a for a in d.autoscale if a["service"] == s.name),
                     None)
        if scale is not None:
            nf["autoscale"] = _autoscale(scale)
        if s.lb != "hash":
            left.append(f"left out: services '{s.name}': lb {s.lb}")
        docs.append({"apiVersion": API, "kind": "NetworkFunction",
                     "metadata": {"name": svc_name[s.id], "namespace":
                                  tenant_ns.get(s.trust_group, namespace)},
                     "spec": nf})

    def chain(name: str, sc: dict, ns: str = namespace) -> None:
        docs.append({"apiVersion": API, "kind": "ServiceChain",
                     "metadata": {"name": name, "namespace": ns},
                     "spec": sc})

    if d.chain:
        h = hops(d.chain, "chain")
        if h:
            chain("default", {"hops": h})
    for port, steps in sorted(d.port_chains.items()):
        h = hops(steps, f"ports[{port}].chain")
        if h:
            chain(_k8s_name(f"from-{port_name[port]}"),
                  {"from": port_name[port], "hops": h})
    for i, r in enumerate(d.rules):
        h = hops(r["chain"], f"rules[{i}]")
        if h:
            m = {k: (str(v) if k in ("sport", "dport", "proto") else v)
                 for k, v in r["match"].items()}
            rule = {"match": m}
            if "priority" in r:
                rule["priority"] = r["priority"]
            chain(f"rule-{i}", {"hops": h, "rules": [rule]})
    # a tenant's chain: its namespace's ServiceChain
    for t in d.tenants:
        if t["trust_group"] in tenant_ns and t["chain"]:
            h = hops(t["chain"], f"manager.tenants '{t['name']}'.chain")
            if h:
                chain("chain", {"hops": h}, tenant_ns[t["trust_group"]])
    chains = [c for c in docs if c["kind"] == "ServiceChain" and
              "rules" not in c["spec"] and
              c["metadata"]["namespace"] == namespace]
    for r in d.reactions:
        after = r["insert"].get("after")
        into = [c for c in chains if after is None or
                {"networkFunction": svc_name[by_name[after]]} in
                c["spec"]["hops"]]
        if not into:
            left.append(f"left out: reactions '{r['name']}': no chain has "
                        f"its service '{after}'")
        for c in into:
            c["spec"].setdefault("reactions", []).append(
                _reaction(r, lambda n: svc_name[by_name[n]]))
    for what in ("flows", "routes"):
        if getattr(d, what):
            left.append(f"left out: {what} ({len(getattr(d, what))}): no "
                        f"resource of the cluster's says them yet")
    return docs, left

"""`zeronf apply`: a running instance changed to match its file, as a
transaction. plan() compares the instance with the file and lists the
steps (shown first); each carries its undo, and a step that fails takes
the steps done back, last first. What only a restart of the manager
applies (its settings, its ports) is listed, and done with --restart
(down, then up)."""
from __future__ import annotations

import ipaddress
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .client import Client, ZeroNFError
from .orchestrate import (APPLIED, Say, UpError, _routes, _save_applied,
                          down, is_up, launch_counts, launches, policies,
                          start_params, up, wait_running)
from .spec import Deployment


# IP protocols the manager lists by name (mgr/flow/fdir_json.c)
_PROTO_NAMES = {1: "icmp", 6: "tcp", 17: "udp", 47: "gre", 50: "esp",
                58: "icmpv6", 132: "sctp"}
# A policy's fields that name it rather than tune it (no default)
_POLICY_IDS = ("nf", "name", "watch", "counter", "above", "insert")


def _proto_name(p: int | str) -> int | str:
    return _PROTO_NAMES.get(p, p) if isinstance(p, int) else p


def _canon_match(m: dict) -> dict:
    """A rule's match as the manager lists it (rule.list)."""
    out = {}
    ver = m.get("ip")
    if "proto" in m:
        out["proto"] = _proto_name(m["proto"])
    for side in ("src", "dst"):
        if side in m:
            net = ipaddress.ip_network(m[side], strict=False)
            out[side] = str(net)
            ver = net.version
    for side in ("sport", "dport"):
        if side in m:
            v = m[side]
            lo, hi = (v, v) if isinstance(v, int) else map(int,
                                                           v.split("-"))
            if (lo, hi) != (0, 65535):
                out[side] = f"{lo}-{hi}"
    if ver:
        out["ip"] = ver
    return out


def _flow_key(flow: dict) -> str:
    """An exact flow as the manager lists it (flow.list)."""
    return json.dumps({
        "proto": _proto_name(flow["proto"]),
        "src": str(ipaddress.ip_address(flow["src"])),
        "dst": str(ipaddress.ip_address(flow["dst"])),
        "sport": flow["sport"], "dport": flow["dport"],
        "vlan": flow.get("vlan", 0)}, sort_keys=True)


def _reverse(flow: dict) -> dict:
    return {**flow, "src": flow["dst"], "dst": flow["src"],
            "sport": flow["dport"], "dport": flow["sport"]}


def _rule_key(match: dict, chain: list[str], prio: int) -> str:
    return json.dumps([_canon_match(match), chain, prio], sort_keys=True)


@dataclass
class Step:
    text: str            # "+ service fw (svc:3) ..." as shown
    run: Callable[[Client], Any]
    phase: int           # 0 start/scale, 1 chain, 2 rules/flows, 3 remove
    # What takes the step back, given what run returned (apply rolls a
    # failed plan back through the undos of the steps done, last first)
    undo: Callable[[Client, Any], None] | None = None


def _launched_params(cur: dict) -> dict:
    """nf.start's parameters that launch what launch.list shows."""
    if cur.get("bundle"):
        p = {k: cur[k] for k in ("name", "replicas", "restart")}
        p["bundle"] = [{"binary": b["module"][:-len(".so")],
                        "service": b["service"], "name": b["name"],
                        "args": b["args"]} for b in cur["bundle"]]
    else:
        p = {k: cur[k] for k in ("name", "binary", "args", "service",
                                  "replicas", "restart", "sandbox")}
    if cur["cpus"]:
        p["cpus"] = cur["cpus"]
    if cur["memory_mb"]:
        p["memory_mb"] = cur["memory_mb"]
    if cur.get("trust_group"):
        p["trust_group"] = cur["trust_group"]
    return p


def _canon_bundle(p: dict) -> dict:
    """A bundle's nf.start parameters, compared as what runs: each
    program by its real path, replicas left out (nf.scale)."""
    return {**{k: v for k, v in p.items() if k != "replicas"},
            "bundle": [{**b, "binary": os.path.realpath(b["binary"]),
                        "args": b.get("args", [])} for b in p["bundle"]]}


def _update(c: Client, p: dict, timeout: float = 120.0) -> None:
    """nf.update with @p p's spec (its service, group and replicas kept),
    and wait for its rolling restart."""
    keys = ("binary", "args", "cpus", "restart", "sandbox", "memory_mb")
    q = {k: p[k] for k in keys if k in p}
    q.setdefault("args", [])
    q.setdefault("cpus", "")  # none
    q.setdefault("sandbox", False)
    q.setdefault("memory_mb", 0)  # no limit
    c.call("nf.update", name=p["name"], **q)
    deadline = time.monotonic() + timeout
    while True:
        spec = next(s for s in c.call("launch.list")["launched"]
                    if s["name"] == p["name"])
        if not spec["rolling"]:
            break
        if time.monotonic() > deadline:
            raise UpError(f"{p['name']}: rolling restart not done after "
                          f"{timeout:g} s")
        time.sleep(0.05)
    if spec["running"] < spec["replicas"]:
        raise UpError(f"{p['name']}: a replica did not run again after its "
                      f"update (nf.roll_stopped: zeronf events)")


def _restart_as(c: Client, p: dict) -> None:
    """Launch @p p again in place of what has its name now."""
    if any(s["name"] == p["name"] for s in c.call("launch.list")["launched"]):
        c.call("nf.remove", name=p["name"])
        _wait_gone(c, p["name"])
    c.call("nf.start", **p)


def plan(c: Client, d: Deployment, say: Say = print) -> list[Step]:
    steps: list[Step] = []
    live = {s["name"]: s for s in c.call("launch.list")["launched"]
            if not s["removing"]}
    want = {s.name: s for s in d.services}
    bundled = {n for b in d.bundles for n in b.services}
    for p, what in launches(d):
        if "bundle" not in p:
            continue
        name = p["name"]
        cur = live.get(name)
        if cur is None:
            steps.append(Step(f"+ {what}",
                              lambda c, p=p: c.call("nf.start", **p), 0,
                              lambda c, _, n=name: (
                                  c.call("nf.remove", name=n),
                                  _wait_gone(c, n))))
            continue
        old = _launched_params(cur)
        if _canon_bundle(old) != _canon_bundle(p):
            steps.append(Step(f"~ bundle {name}: replaced (its NFs, their "
                              f"options, CPUs, restart or group changed)",
                              lambda c, p=p: _restart_as(c, p), 0,
                              lambda c, _, old=old: _restart_as(c, old)))
        elif cur["replicas"] != p["replicas"]:
            steps.append(Step(f"~ bundle {name}: replicas "
                              f"{cur['replicas']} -> {p['replicas']}",
                              lambda c, n=name, r=p["replicas"]: c.call(
                                  "nf.scale", name=n, replicas=r), 0,
                              lambda c, _, n=name, r=cur["replicas"]:
                              c.call("nf.scale", name=n, replicas=r)))
    want = {n: s for n, s in want.items() if n not in bundled}
    launched = {p["name"] for p, _ in launches(d)}
    for name, s in want.items():
        p = start_params(s)
        if name not in live:
            steps.append(Step(f"+ service {name} (svc:{s.id}): "
                              f"{s.replicas} x {Path(s.binary).name}",
                              lambda c, p=p: c.call("nf.start", **p), 0,
                              lambda c, _, n=name: (
                                  c.call("nf.remove", name=n),
                                  _wait_gone(c, n))))
            continue
        cur = live[name]
        old = _launched_params(cur)
        same = (cur["binary"] == p["binary"] and
                cur["args"] == p.get("args", []) and
                cur["service"] == s.id and cur["cpus"] == (s.cpus or "") and
                cur["restart"] == s.restart and
                cur["sandbox"] == s.sandbox and
                cur["memory_mb"] == (s.memory_mb or 0) and
                cur.get("trust_group") == s.trust_group)
        if not same and cur["service"] == s.id and \
                cur.get("trust_group") == s.trust_group and \
                cur["replicas"] == s.replicas and s.vm is None:
            # in place, rolling: the service never lacks a replica
            steps.append(Step(f"~ service {name}: updated, rolling "
                              f"(program, arguments, CPUs, restart, "
                              f"sandbox or memory changed)",
                              lambda c, p=p: _update(c, p), 0,
                              lambda c, _, old=old: _update(c, old)))
        elif not same:
            steps.append(Step(f"~ service {name}: replaced (its id, trust "
                              f"group or replicas changed with it)",
                              lambda c, p=p: _restart_as(c, p), 0,
                              lambda c, _, old=old: _restart_as(c, old)))
        elif cur["replicas"] != s.replicas:
            steps.append(Step(f"~ service {name}: replicas "
                              f"{cur['replicas']} -> {s.replicas}",
                              lambda c, n=name, r=s.replicas: c.call(
                                  "nf.scale", name=n, replicas=r), 0,
                              lambda c, _, n=name, r=cur["replicas"]:
                              c.call("nf.scale", name=n, replicas=r)))
    for name, cur in live.items():
        if name not in launched:
            steps.append(Step(f"- service {name}",
                              lambda c, n=name: (c.call("nf.remove", name=n),
                                                 _wait_gone(c, n)), 3,
                              lambda c, _, old=_launched_params(cur):
                              c.call("nf.start", **old)))
    lbs = {sv["service"]: sv.get("lb", "hash")
           for sv in c.services()}
    for s in d.services:
        if lbs.get(s.id, "hash") != s.lb:
            steps.append(Step(f"~ service {s.name}: lb {lbs.get(s.id)} -> "
                              f"{s.lb}", lambda c, s=s: c.call(
                                  "service.set", service=s.id, lb=s.lb), 1,
                              lambda c, _, s=s, lb=lbs.get(s.id, "hash"):
                              c.call("service.set", service=s.id, lb=lb)))
    cur_chain = c.chain_get()
    if d.chain and cur_chain != d.chain:
        steps.append(Step(f"~ chain: {','.join(cur_chain) or '(none)'} -> "
                          f"{','.join(d.chain)}",
                          lambda c: c.chain_set(d.chain), 1,
                          (lambda c, _, h=cur_chain: c.chain_set(h))
                          if cur_chain else None))
    for p in range(len(d.ports)):
        cur = c.call("chain.get", port=p)["hops"]
        want = d.port_chains.get(p, [])
        if cur != want:
            steps.append(Step(
                f"~ chain of port {p}: {','.join(cur) or '(default)'} -> "
                f"{','.join(want) or '(default)'}",
                lambda c, p=p, want=want: c.call("chain.set", port=p,
                                                 hops=want), 1,
                lambda c, _, p=p, cur=cur: c.call("chain.set", port=p,
                                                  hops=cur)))
    for t in d.tenants:
        cur = c.call("chain.get", tenant=t["name"])["hops"]
        if cur != t["chain"]:
            steps.append(Step(
                f"~ chain of tenant {t['name']}: {','.join(cur) or '(none)'}"
                f" -> {','.join(t['chain']) or '(none)'}",
                lambda c, t=t: c.call("chain.set", tenant=t["name"],
                                      hops=t["chain"]), 1,
                lambda c, _, t=t, cur=cur: c.call("chain.set",
                                                  tenant=t["name"],
                                                  hops=cur)))
    # Rules and exact flows: the operator's (added on the control socket,
    # by the CLI, the API or apply) are the file's; a tenant's and those
    # NFs add (steering) are not apply's to remove.
    live_rules = {_rule_key(r["match"], r["chain"], r["priority"]): r
                  for r in c.call("rule.list")["rules"]
                  if r.get("tenant") is None}
    for r in d.rules:
        k = _rule_key(r["match"], r["chain"], r.get("priority", 0))
        if k in live_rules:
            live_rules.pop(k)
        else:
            steps.append(Step(f"+ rule {json.dumps(_canon_match(r['match']))}"
                              f" -> {','.join(r['chain'])} (priority "
                              f"{r.get('priority', 0)})",
                              lambda c, r=r: c.call("rule.add", **r), 2,
                              lambda c, res: c.call("rule.del",
                                                    id=res["id"])))
    for r in live_rules.values():
        steps.append(Step(f"- rule {r['id']} {json.dumps(r['match'])} -> "
                          f"{','.join(r['chain'])} (priority "
                          f"{r['priority']})",
                          lambda c, rid=r["id"]: c.call("rule.del", id=rid),
                          2, lambda c, _, r=r: c.call(
                              "rule.add", match=r["match"], chain=r["chain"],
                              priority=r["priority"])))
    count = c.call("flow.list", limit=0)["count"]
    live_flows = {_flow_key(f["flow"]): f for f in
                  c.call("flow.list", limit=count)["flows"]
                  if f["tenant"] is None and f["by"] == "socket"}
    want = []
    for f in d.flows:
        keys = [_flow_key(f["flow"])] + \
            ([_flow_key(_reverse(f["flow"]))] if f.get("both") else [])
        if any(live_flows.get(k, {}).get("chain") != f["chain"]
               for k in keys):
            want.append(f)
        for k in keys:
            live_flows.pop(k, None)
    if want:
        steps.append(Step(f"+ flows: {len(want)} added or replaced",
                          lambda c, w=want: c.call("flow.add", flows=w), 2,
                          lambda c, _, w=want: c.call("flow.del", flows=[
                              {"flow": f["flow"], **({"both": True} if
                               f.get("both") else {})} for f in w])))
    gone = list(live_flows.values())
    if gone:
        steps.append(Step(f"- flows: {len(gone)} not in the file",
                          lambda c, g=gone: c.call("flow.del", flows=[
                              {"flow": f["flow"]} for f in g]), 2,
                          lambda c, _, g=gone: c.call("flow.add", flows=[
                              {"flow": f["flow"], "chain": f["chain"]}
                              for f in g])))
    pol = policies(d)
    defaults = _policy_defaults(c)
    if _canon_policies(pol, defaults) != \
            _canon_policies(c.call("policy.list"), defaults):
        old_pol = c.call("policy.list")
        old_pol = {kind: [{k: v for k, v in x.items()
                           if k in defaults[i] or k in _POLICY_IDS}
                          for x in old_pol[kind]]
                   for i, kind in enumerate(("autoscale", "reactions"))}
        steps.append(Step(f"~ policies: {len(pol['autoscale'])} autoscale, "
                          f"{len(pol['reactions'])} reactions",
                          lambda c: c.call("policy.set", **pol), 2,
                          lambda c, _, o=old_pol: c.call("policy.set",
                                                         **o)))
    applied = d.log_dir / APPLIED
    old_routes = []
    if applied.exists():
        old_routes = json.loads(applied.read_text()).get("routes", [])
    gone = [r for r in old_routes if r not in d.routes]
    new = [r for r in d.routes if r not in old_routes]
    if new:
        steps.append(Step(f"+ routes: {len(new)}",
                          lambda c: _routes(c, d, new, say), 2,
                          lambda c, _: _routes(c, d, new, say,
                                               "route.del")))
    if gone:
        steps.append(Step(f"- routes: {len(gone)}",
                          lambda c: _routes(c, d, gone, say, "route.del"),
                          2, lambda c, _: _routes(c, d, gone, say)))
    return sorted(steps, key=lambda s: s.phase)


# policy.set's defaults (mgr/nf/policy.c), to compare a file with policy.list
def _policy_defaults(c: Client) -> tuple[dict, dict]:
    """The defaults of an autoscale policy's and a reaction's fields, as
    the manager states them in policy.set's schema (mgr/nf/policy.c holds
    them once)."""
    params = c.call("schema")["methods"]["policy.set"]["params"]
    return tuple({k: v["default"] for k, v in
                  params[kind]["items"]["properties"].items()
                  if "default" in v}
                 for kind in ("autoscale", "reactions"))


def _canon_policies(p: dict, defaults: tuple[dict, dict]) -> list:
    def canon(x: dict, dflt: dict) -> dict:
        return {k: (float(v) if isinstance(v, (int, float)) and
                    not isinstance(v, bool) and k not in ("min", "max")
                    else v)
                for k, v in {**dflt, **x}.items()
                if k in dflt or k in _POLICY_IDS}
    return [[canon(x, defaults[0]) for x in p["autoscale"]],
            [canon(x, defaults[1]) for x in p["reactions"]]]


def _wait_gone(c: Client, name: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while any(s["name"] == name for s in c.call("launch.list")["launched"]):
        if time.monotonic() > deadline:
            raise UpError(f"{name} did not stop in {timeout:g} s")
        time.sleep(0.05)


def restart_changes(d: Deployment) -> list[str]:
    """What the file changes that only a restart of the manager applies:
    its settings (manager:) and its ports, against what up or apply last
    made (applied.json; one from before these were kept says nothing)."""
    applied = d.log_dir / APPLIED
    if not applied.exists():
        return []
    old = json.loads(applied.read_text())
    out = []
    def live_less(m: dict) -> dict:
        # a tenant's chain is changed live (chain.set tenant=)
        return {**m, "tenants": [{k: v for k, v in t.items()
                                  if k != "chain"}
                                 for t in m.get("tenants", [])]}
    if "manager" in old:
        was, now = live_less(old["manager"]), live_less(d.manager)
        for k in sorted(set(was) | set(now)):
            if was.get(k) != now.get(k):
                out.append(f"manager.{k}: {json.dumps(was.get(k))} -> "
                           f"{json.dumps(now.get(k))}")
    if "port_specs" in old:
        was, now = old["port_specs"], d.ports
        for i in range(max(len(was), len(now))):
            a = was[i] if i < len(was) else None
            b = now[i] if i < len(now) else None
            if a != b:
                out.append(f"ports[{i}]: {json.dumps(a)} -> "
                           f"{json.dumps(b)}")
    return out


def apply(d: Deployment, say: Say = print, dry_run: bool = False,
          timeout: float = 60.0, restart: bool = False) -> list[Step]:
    if not is_up(d.name):
        raise UpError(f"instance '{d.name}' is not up (zeronf up {d.file})")
    need = restart_changes(d)
    if need:
        say(f"changes to '{d.name}' ({d.file}) that need a restart of "
            f"its manager:")
        for n in need:
            say(f"  {n}")
        if dry_run:
            return []
        if not restart:
            raise UpError(f"nothing applied: `zeronf apply --restart "
                          f"{d.file}` restarts '{d.name}' with them (its "
                          f"traffic stops until it is up again)")
        t0 = time.monotonic()
        down(d.name, say=say, timeout=timeout)
        up(d, say=say, timeout=timeout)
        say(f"restarted: {time.monotonic() - t0:.1f} s without traffic")
        return []
    with Client(d.name) as c:
        steps = plan(c, d, say)
        if not steps:
            say(f"'{d.name}' already matches {d.file}")
            return steps
        say(f"changes to '{d.name}' ({d.file}):")
        for s in steps:
            say(f"  {s.text}")
        if dry_run:
            return steps
        _run_or_roll_back(c, d, steps, say, timeout)
        _save_applied(d)
        say(f"applied: {len(steps)} changes")
    return steps


def _run_or_roll_back(c: Client, d: Deployment, steps: list[Step],
                      say: Say, timeout: float) -> None:
    """The plan as a transaction: every step, or, when one fails, the
    steps done taken back, last first (the instance as the old file made
    it), and the failure raised saying which."""
    done: list[tuple[Step, Any]] = []
    fail_at = int(os.environ.get("ZN_TEST_APPLY_FAIL_AT", "0"))
    try:
        waited = False
        for k, s in enumerate(steps, 1):
            if s.phase > 0 and not waited:
                # every NF of the file runs before the chain names it
                wait_running(c, launch_counts(d), d.log_dir, timeout)
                waited = True
            if k == fail_at:  # tests/system/test_deploy.py
                raise UpError(f"injected failure (ZN_TEST_APPLY_FAIL_AT="
                              f"{k})")
            done.append((s, s.run(c)))
    except (UpError, ZeroNFError) as e:
        failed = steps[len(done)]
        say(f"failed at step {len(done) + 1} of {len(steps)} "
            f"({failed.text.strip()}): {e}")
        left = []
        for s, res in reversed(done):
            try:
                if s.undo is not None:
                    s.undo(c, res)
                    say(f"  rolled back: {s.text.strip()}")
            except (UpError, ZeroNFError) as u:
                left.append(f"{s.text.strip()} ({u})")
        if left:
            raise UpError(f"apply failed at \"{failed.text.strip()}\": {e}; "
                          f"rollback incomplete: {'; '.join(left)}"
                          ) from None
        raise UpError(f"apply failed at \"{failed.text.strip()}\": {e}; "
                      f"the {len(done)} change(s) before it rolled back: "
                      f"'{d.name}' is as it was") from None

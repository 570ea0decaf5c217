"""A deployment's values checked by the manager's own code, before
anything starts: `zeronf validate`, `up` and `apply` run it after
spec.load.

spec.py checks the file's shape (schemas/deployment.json) and its names;
the values the manager parses (match fields, flow addresses, chains,
prefixes, CPU lists, its options) have one checker, the manager's:
`zeronf-mgr --check OPTIONS` parses the options the instance would start
with and the requests up would send (on stdin), starts nothing, and
answers each request (mgr/core/cmd.c, zn_cmd_check_requests). Each error is
mapped back to the file's line and key."""
from __future__ import annotations

import json
import re
import subprocess

from . import paths
from .orchestrate import MANAGER_KEY_OF, manager_argv, policies, start_params
from .spec import Deployment, SpecError

# zeronf-mgr options that are not a manager key: where in the file they
# come from.
_OPTION_KEYS = {
    "--trust-group": ("manager", "trust_groups"),
    "--port-group": ("ports",), "--tenant": ("manager", "tenants"),
    "--slice": ("manager", "tenants"), "--port": ("ports",),
    "-p": ("ports",), "--chain": ("chain",), "-i": ("name",),
    **{opt: ("manager", key) for opt, key in MANAGER_KEY_OF.items()},
}


def requests(d: Deployment) -> list[tuple[tuple, dict]]:
    """(where in the file, request) for each value up would send."""
    out: list[tuple[tuple, dict]] = []
    for i, s in enumerate(d.services):
        if s.vm is None:  # a VM's replicas are zeronf-vm's (vm.py checks)
            out.append((("services", i),
                        {"method": "nf.start", "params": start_params(s)}))
        out.append((("services", i, "lb"), {"method": "service.set",
                    "params": {"service": s.id, "lb": s.lb}}))
    if d.chain:
        out.append((("chain",), {"method": "chain.set",
                                 "params": {"hops": d.chain}}))
    for p, hops in d.port_chains.items():
        out.append((("ports", p, "chain"), {"method": "chain.set",
                    "params": {"port": p, "hops": hops}}))
    for i, t in enumerate(d.tenants):
        out.append((("manager", "tenants", i, "chain"), {
            "method": "chain.set",
            "params": {"tenant": t["name"], "hops": t["chain"]}}))
    for i, r in enumerate(d.rules):
        out.append((("rules", i), {"method": "rule.add", "params": r}))
    for i, f in enumerate(d.flows):  # one each: every bad one said
        out.append((("flows", i), {"method": "flow.add",
                                   "params": {"flows": [f]}}))
    for i, r in enumerate(d.routes):
        out.append((("routes", i, "prefix"), {"prefix": r["prefix"]}))
    pol = policies(d)
    if pol["autoscale"] or pol["reactions"]:
        out.append((("autoscale",) if pol["autoscale"] else ("reactions",),
                    {"method": "policy.set", "params": pol}))
    return out


def _key_of(where: tuple, message: str) -> tuple[tuple, str]:
    """The key a request's error is about, as deep as its message says."""
    if where[0] == "services" and len(where) == 2:
        m = re.match(r"(binary|cpus|args|name)\b(\[\d+\])?[ :]", message)
        if m:
            sub = {"binary": ("nf", "binary"), "args": ("nf", "args"),
                   "cpus": ("cpus",), "name": ("name",)}[m.group(1)]
            return where + sub, message[m.end():].strip() \
                if m.group(1) in ("cpus", "name") else message
    if where[0] == "rules":
        m = re.match(r"(match|chain)\b", message)
        if m:
            return where + (m.group(1),), message
    if where[0] == "flows":
        m = re.match(r"flows\[0\]: (flow|chain)(?:\.(\w+))?[:\[]?\s*(.*)",
                     message)
        if m:
            key = (m.group(1),) + ((m.group(2),) if m.group(2) else ())
            return where + key, m.group(3) or message
    return where, message


def _option_error(d: Deployment, mgr: str, stderr: str) -> str:
    line = next((ln for ln in stderr.splitlines() if ln.strip()), stderr)
    line = line.removeprefix(f"{mgr}: ")  # its argv[0], spaces and all
    m = re.search(r"(--[a-z][a-z-]*|-[pi]\b)", line)
    where = _OPTION_KEYS.get(m.group(1)) if m else None
    if where is None:
        where = ("manager", "args") if d.manager.get("args") else \
            ("manager",)
    elif m.group(1) in MANAGER_KEY_OF:
        line = line.replace(m.group(1), MANAGER_KEY_OF[m.group(1)])
    return f"{d.at(where)}: {line}"


def check(d: Deployment) -> None:
    """Raise SpecError naming every value the manager would refuse."""
    mgr = paths.find_program("zeronf-mgr")
    if mgr is None:
        raise SpecError([f"{d.shown}: cannot check its values: no "
                         f"zeronf-mgr (build it: make build)"])
    reqs = requests(d)
    argv = manager_argv(d, mgr) + ["--check"]
    try:
        p = subprocess.run(argv, input=json.dumps([r for _, r in reqs]),
                           capture_output=True, text=True, timeout=60,
                           cwd=d.base)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SpecError([f"{d.shown}: cannot check its values: {e}"]) \
            from None
    if p.returncode == 2:
        raise SpecError([_option_error(d, str(mgr), p.stderr)])
    if p.returncode not in (0, 1):
        raise SpecError([f"{d.shown}: zeronf-mgr --check failed "
                         f"({p.returncode}): {p.stderr.strip()}"])
    answers = json.loads(p.stdout)
    errors = []
    for (where, _), a in zip(reqs, answers):
        if a is not None:
            key, msg = _key_of(where, a["message"])
            errors.append((d.line(key), f"{d.at(key)}: {msg}"))
    if errors:
        raise SpecError([m for _, m in sorted(errors)])

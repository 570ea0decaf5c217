"""Bring a deployment up, down, or to a new version of its file.

`up` starts the manager (a daemon of its own session, RX paused), has it
launch and supervise every service's NFs (nf.start), waits until each
replica runs its packet loop, then sets the chain, rules, flows, balancing
and routes, and only then enables RX: no packet meets a half-built
instance. A step that fails stops what was started and says why, with the
tail of the failing program's log. `apply` (python/zeronf/change.py)
changes a running instance to match a new version of its file."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

from . import paths, vm
from .client import Client, ZeroNFError, runtime_dir
from .spec import Deployment, as_json

Say = Callable[[str], None]
APPLIED = "applied.json"  # in the log dir: what up/apply last made


class UpError(Exception):
    pass


def _tail(path: Path, n: int = 8) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()[-n:]
    except OSError:
        return ""
    return "\n".join("    | " + ln for ln in lines)


def _file_terms(text: str) -> str:
    """The manager's log in the file's words: `--mem` is the user's
    `manager.memory_mb`."""
    return re.sub(r"--[a-z][a-z-]*", lambda m: (
        f"manager.{MANAGER_KEY_OF[m.group(0)]} ({m.group(0)})"
        if m.group(0) in MANAGER_KEY_OF else m.group(0)), text)


# The file's manager keys and zeronf-mgr's options that carry them (more
# keys below: trust_groups, tenants); check.py names a refused option by
# its key.
MANAGER_OPTIONS = {
    "cpus": "--cpus", "memory_mb": "--mem", "rx_threads": "--rx-threads",
    "tx_threads": "--tx-threads", "ingress": "--ingress",
    "handoff": "--handoff", "nf_tx_queues": "--nf-tx-queues",
    "nf_rx_queues": "--nf-rx-queues",
    "pool_size": "--pool-size", "nf_pool_quota": "--nf-pool-quota",
    "nf_steer_rate": "--nf-steer-rate",
    "sandbox_uid_base": "--sandbox-uid-base", "ring_size": "--ring-size",
    "flow_capacity": "--flow-capacity", "flow_idle_s": "--flow-idle-s",
    "nf_flow_quota": "--nf-flow-quota",
    "tenant_flow_quota": "--tenant-flow-quota",
}


# ... and back: the key an option carries
MANAGER_KEY_OF = {opt: key for key, opt in MANAGER_OPTIONS.items()}


def manager_argv(d: Deployment, mgr: Path) -> list[str]:
    m = d.manager
    argv = [str(mgr), "-i", d.name, "--rx-paused", "--log-dir",
            str(d.log_dir)]
    if d.chain:  # its default chain from the start (set again later)
        argv += ["--chain", ",".join(d.chain)]
    for p in d.ports:
        argv += ["-p", p["devargs"]]
    for i, p in enumerate(d.ports):
        if "name" in p:
            argv += ["--port-name", f"{i}={p['name']}"]
    for key, opt in MANAGER_OPTIONS.items():
        if key in m:
            argv += [opt, str(m[key])]
    for g in m.get("trust_groups", []):
        argv += ["--trust-group",
                 f"{g['name']}:{g['buffers']}" if "buffers" in g
                 else g["name"]]
    for i, p in enumerate(d.ports):
        if "trust_group" in p:
            argv += ["--port-group", f"{i}={p['trust_group']}"]
    for t in d.tenants:
        opt = f"{t['name']}={t['trust_group']}"
        if "service_ids" in t:
            opt += ",services={}-{}".format(*t["service_ids"])
        for key, name in (("uid", "uid"), ("cpu_percent", "cpu"),
                          ("memory_mb", "mem")):
            if key in t:
                opt += f",{name}={t[key]}"
        argv += ["--tenant", opt]
        for s in t["slices"]:
            match = "".join(f":{k}={s[k]}" for k in ("vlan", "mac", "prefix")
                            if k in s)
            argv += ["--slice", f"{t['name']}:{s['port']}{match}"]
    return argv + list(m.get("args", []))


def is_up(instance: str) -> bool:
    try:
        with Client(instance, timeout=1.0) as c:
            return bool(c.status()["ready"])
    except ZeroNFError:
        return False


def _start_manager(d: Deployment, say: Say, timeout: float) -> int:
    mgr = paths.find_program("zeronf-mgr")
    if mgr is None:
        raise UpError("no zeronf-mgr (build it: make build)")
    d.log_dir.mkdir(parents=True, exist_ok=True)
    log = d.log_dir / "manager.log"
    if log.exists():  # an earlier run's: kept aside, not shown as this one's
        log.replace(d.log_dir / "manager.log.1")
    t0 = time.monotonic()
    argv = manager_argv(d, mgr)
    if d.manager.get("netns"):  # a host of a fabric on this machine
        argv = ["ip", "netns", "exec", d.manager["netns"]] + argv
    with open(log, "ab") as f:
        p = subprocess.Popen(argv, cwd=d.base, stdout=f,
                             stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = t0 + timeout
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise UpError(f"zeronf-mgr exited ({p.returncode}):\n"
                          f"{_file_terms(_tail(log))}")
        if is_up(d.name):
            say(f"manager '{d.name}' up (pid {p.pid}, "
                f"{len(d.ports)} ports) {time.monotonic() - t0:.1f} s; "
                f"logs in {d.log_dir}")
            return p.pid
        time.sleep(0.05)
    p.kill()
    raise UpError(f"zeronf-mgr not ready after {timeout:g} s:\n{_tail(log)}")


def start_params(s) -> dict:
    p = {"name": s.name, "binary": s.binary, "service": s.id,
         "replicas": s.replicas, "restart": s.restart}
    if s.args:
        p["args"] = s.args
    if s.vm is not None:  # zeronf-vm boots each replica's guest
        v = s.vm
        p.update(vm.start_params(
            s.name, Path(s.binary), s.id, s.trust_group or "", s.args,
            mem_mb=v.get("mem_mb", 1024), vcpus=v.get("vcpus", 1),
            accel=v.get("accel", "auto"), poll_max_us=v.get("poll_max_us"),
            kernel_path=Path(v["kernel"]) if "kernel" in v else None,
            image=Path(v["image"]) if "image" in v else None,
            files=[Path(f) for f in v.get("files", [])],
            restart=s.restart))
    if s.cpus:
        p["cpus"] = s.cpus
    if s.memory_mb is not None:
        p["memory_mb"] = s.memory_mb
    if s.sandbox:
        p["sandbox"] = True
    if s.trust_group:
        p["trust_group"] = s.trust_group
    return p


def bundle_params(d: Deployment, b) -> dict:
    """nf.start's parameters of a bundle of the file: its services' NFs
    in one thread of each replica (zeronf-bundle)."""
    p = {"name": b.name, "replicas": b.replicas, "restart": b.restart,
         "bundle": [{"binary": s.binary, "service": s.id, "name": s.name,
                     "args": s.args}
                    for s in (d.service(n) for n in b.services)]}
    if b.cpus:
        p["cpus"] = b.cpus
    if b.trust_group:
        p["trust_group"] = b.trust_group
    return p


def launches(d: Deployment) -> list[tuple[dict, str]]:
    """What the file launches, in order: each service's NF, or, for the
    services of a bundle, the bundle (where its first service is); each
    as nf.start's parameters and a line saying what it is."""
    out, done = [], set()
    of = {n: b for b in d.bundles for n in b.services}
    for s in d.services:
        b = of.get(s.name)
        if b is None:
            out.append((start_params(s), f"{s.name} (svc:{s.id}): "
                        f"{s.replicas} x {Path(s.binary).name}"))
        elif b.name not in done:
            done.add(b.name)
            out.append((bundle_params(d, b), f"{b.name}: {b.replicas} x "
                        f"bundle of {', '.join(b.services)}"))
    return out


def launch_counts(d: Deployment) -> dict[str, int]:
    """wait_running's `name: replicas` of everything the file launches."""
    return {p["name"]: p["replicas"] for p, _ in launches(d)}


def wait_running(c: Client, names: dict[str, int], log_dir: Path,
                 timeout: float) -> None:
    """Until every replica of each launched NF `name: replicas` runs its
    packet loop (a bundle's: every NF of it); UpError with its log if one
    fails first."""
    deadline = time.monotonic() + timeout
    while True:
        running = {n["name"] for n in c.nfs() if n["state"] == "running"}
        specs = {s["name"]: s for s in c.call("launch.list")["launched"]}
        pending = []
        for name, want in names.items():
            for inst in specs[name]["instances"][:want]:
                if all(n in running for n in inst["nfs"]):
                    continue
                if inst["state"] in ("down", "backoff") and \
                        inst["last_exit"] is not None:
                    raise UpError(
                        f"{inst['name']} exited ({inst['last_exit']}) "
                        f"before it was ready:\n"
                        f"{_tail(log_dir / (inst['name'] + '.log'))}")
                pending.append(inst["name"])
        if not pending:
            return
        if time.monotonic() > deadline:
            raise UpError(f"not running after {timeout:g} s: "
                          f"{', '.join(pending)}")
        time.sleep(0.05)


def _routes(c: Client, d: Deployment, routes: list[dict], say: Say,
            op: str = "route.add") -> None:
    by_svc: dict[int, list[dict]] = {}
    for r in routes:
        by_svc.setdefault(d.service(r["service"]).id, []).append(r)
    for sid, rs in by_svc.items():
        insts = [n["instance"] for n in c.nfs() if n["service"] == sid and
                 n["state"] == "running"]
        t0 = time.monotonic()
        for i in range(0, len(rs), 100):
            batch = rs[i:i + 100]
            args = ({"routes": [{"prefix": r["prefix"],
                                 "next_hop": r["next_hop"]} for r in batch]}
                    if op == "route.add" else
                    {"prefixes": [r["prefix"] for r in batch]})
            for inst in insts:
                c.nf_call(inst, op, args)
        say(f"routes: {len(rs)} {'to' if op == 'route.add' else 'off'} "
            f"svc:{sid} ({len(insts)} NFs) {time.monotonic() - t0:.1f} s")


def configure(c: Client, d: Deployment, say: Say) -> None:
    """Balancing, chain, rules, flows and routes of a deployment whose NFs
    run (up; apply does the same piece by piece)."""
    for s in d.services:
        if s.lb != "hash":
            c.call("service.set", service=s.id, lb=s.lb)
    if d.chain:
        c.chain_set(d.chain)
        say(f"chain: {','.join(d.chain)}")
    for p, hops in d.port_chains.items():
        c.call("chain.set", port=p, hops=hops)
        say(f"chain of port {p}: {','.join(hops)}")
    for t in d.tenants:
        if t["chain"]:
            c.call("chain.set", tenant=t["name"], hops=t["chain"])
            say(f"chain of tenant {t['name']}: {','.join(t['chain'])}")
    for r in d.rules:
        c.call("rule.add", **r)
    if d.rules:
        say(f"rules: {len(d.rules)}")
    if d.flows:
        c.call("flow.add", flows=d.flows)
        say(f"flows: {len(d.flows)}")
    if d.routes:
        _routes(c, d, d.routes, say)
    pol = policies(d)
    if pol["autoscale"] or pol["reactions"]:
        c.call("policy.set", **pol)
        say(f"policies: {len(pol['autoscale'])} autoscale, "
            f"{len(pol['reactions'])} reactions")


def _save_applied(d: Deployment) -> None:
    (d.log_dir / APPLIED).write_text(json.dumps(as_json(d), indent=1))


def policies(d: Deployment) -> dict:
    """The file's autoscale and reactions as policy.set takes them."""
    scale = []
    for a in d.autoscale:
        o, i = a.get("out_when", {}), a.get("in_when", {})
        p = {"nf": a["service"], "min": a.get("min", 1),
             "max": a.get("max", 16)}
        for k, v in (("out_occupancy", o.get("ring_occupancy")),
                     ("out_drop_rate", o.get("drop_rate")),
                     ("out_for_s", o.get("for_s")),
                     ("in_occupancy", i.get("ring_occupancy_below")),
                     ("in_for_s", i.get("idle_for_s"))):
            if v is not None:
                p[k] = v
        scale.append(p)
    react = []
    for r in d.reactions:
        w, ins = r["when"], r["insert"]
        p = {"name": r["name"], "watch": w["service"],
             "counter": w["counter"], "above": w["above"],
             "insert": ins["service"]}
        for k, v in (("for_s", w.get("for_s")), ("after", ins.get("after")),
                     ("remove_after_s", ins.get("remove_after_s"))):
            if v is not None:
                p[k] = v
        react.append(p)
    return {"autoscale": scale, "reactions": react}


def up(d: Deployment, say: Say = print, timeout: float = 60.0,
       keep: bool = False, rx: bool = True) -> None:
    """@p rx False: everything but RX (a host of several: multihost.py
    puts it on the fabric first)."""
    if is_up(d.name):
        raise UpError(f"instance '{d.name}' is already up (zeronf apply "
                      f"{d.file} changes it; zeronf down {d.name} stops it)")
    pid = _start_manager(d, say, timeout)
    try:
        with Client(d.name) as c:
            todo = launches(d)
            for k, (p, what) in enumerate(todo, 1):
                t0 = time.monotonic()
                c.call("nf.start", **p)
                wait_running(c, {p["name"]: p["replicas"]}, d.log_dir,
                             timeout)
                say(f"[{k}/{len(todo)}] {what} "
                    f"{time.monotonic() - t0:.1f} s")
            configure(c, d, say)
            _save_applied(d)
            if rx:
                c.rx_set(True)
                say(f"'{d.name}' is up: RX enabled")
    except (UpError, ZeroNFError) as e:
        if not keep:
            down(d.name, say=lambda _: None, pid=pid)
        raise UpError(f"{e}" + ("" if keep else
                                f"\n(instance '{d.name}' stopped)")) from None


def down(instance: str, say: Say = print, timeout: float = 30.0,
         pid: int | None = None) -> None:
    try:
        with Client(instance, timeout=2.0) as c:
            pid = c.status()["pid"]
            c.shutdown()
    except ZeroNFError as e:
        if pid is None:
            if _clean_dead(instance, say):
                return
            raise UpError(f"instance '{instance}' is not up ({e.message})"
                          ) from None
    deadline = time.monotonic() + timeout
    while pid and _alive(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            raise UpError(f"manager {pid} did not stop in {timeout:g} s: "
                          f"killed")
        time.sleep(0.05)
    say(f"'{instance}' is down")


def _clean_dead(instance: str, say: Say) -> bool:
    """A manager that died (kill -9) leaves its runtime directory and
    hugepage files: zeronf-mgr --clean removes them, by the code a new
    manager of the name runs first. True if there was such a one."""
    if not Path(runtime_dir(instance)).exists():
        return False
    mgr = paths.find_program("zeronf-mgr")
    if mgr is None:
        raise UpError("no zeronf-mgr (build it: make build)")
    r = subprocess.run([str(mgr), "-i", instance, "--clean"],
                       capture_output=True, text=True, timeout=60)
    out = (r.stdout + r.stderr).strip()
    if r.returncode != 0:
        raise UpError(f"instance '{instance}': its manager is gone and "
                      f"what it left cannot be removed:\n{out}")
    removed = re.search(r"\((\d+) hugepage files\)", out)
    say(f"'{instance}' was not running (its manager died): removed what "
        f"it left ({removed.group(1) if removed else 0} hugepage files)")
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie of ours (up started it) is gone for our purpose.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


# --------------------------------------------------------------- apply

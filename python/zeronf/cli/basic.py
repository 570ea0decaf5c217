"""zeronf CLI: the manager's methods one by one (status, nfs, chain, rx,
wait, call...)."""

from __future__ import annotations

import json
import os
import sys

from ..client import Client, ZeroNFError


def _cell(v) -> str:
    return "-" if v is None else str(v)


def _table(rows: list[dict], cols: list[str]) -> str:
    widths = {c: max([len(c)] + [len(_cell(r.get(c, ""))) for r in rows])
              for c in cols}
    out = ["  ".join(c.ljust(widths[c]) for c in cols).rstrip()]
    for r in rows:
        out.append("  ".join(_cell(r.get(c, "")).ljust(widths[c])
                             for c in cols).rstrip())
    return "\n".join(out)


def _wait(instance: str, idle: bool, timeout: float) -> dict:
    """Wait until the manager answers and is ready; with idle, also until
    nothing moves any more (port counters unchanged for half a second, NF
    rings empty): all that came in went through. RX must be on, or off
    by the operator's choice (rx.set, `zeronf rx off`: then idle is the
    pipeline drained), not waiting to be turned on (--rx-when-ready)."""
    import time
    deadline = time.monotonic() + timeout
    last_err: ZeroNFError | None = None
    key = None
    while time.monotonic() < deadline:
        try:
            with Client(instance) as c:
                st = c.stats()
        except ZeroNFError as e:
            last_err, key = e, None
            time.sleep(0.1)
            continue
        status = st["status"]
        if status["ready"] and not idle:
            return status
        moving = [[p["rx"], p["tx"]] for p in st["ports"]]
        queued = sum((n["rx_ring"] or {}).get("count", 0) +
                     (n["tx_ring"] or {}).get("count", 0) + n["staged"]
                     for n in st["nfs"])
        now = (moving, status["rx_enabled"])
        if (status["ready"] and queued == 0 and now == key and
                (status["rx_enabled"] or not status["rx_waiting"])):
            return {"ports": [{k: p[k] for k in ("port", "name", "rx",
                                                 "tx")}
                              for p in st["ports"]],
                    "drops": {k: v for k, v in st["drops"].items() if v}}
        key = now
        time.sleep(0.5)
    raise ZeroNFError(-110, f"not {'idle' if idle else 'ready'} after "
                            f"{timeout:g} s" +
                      (f" ({last_err.message})" if last_err else ""))


def _params(cmd: str, what: str, text: str | None) -> dict | None:
    """A JSON object argument, checked before anything is sent: a clear
    line, not a traceback. None: no argument. Exits 2 when bad."""
    if text is None:
        return None
    try:
        params = json.loads(text)
    except ValueError as e:
        print(f"zeronf: {cmd}: {what} is not JSON ({e}): {text}",
              file=sys.stderr)
        raise SystemExit(2) from None
    if not isinstance(params, dict):
        print(f"zeronf: {cmd}: {what} must be a JSON object, not {text}",
              file=sys.stderr)
        raise SystemExit(2)
    return params


def show(res) -> int:
    print(json.dumps(res, indent=2))
    return 0


def warned(res: dict) -> dict:
    """The manager's warnings of a change (a chain to a service no NF
    serves) on stderr, as well as in the answer."""
    for w in res.get("warnings", []):
        print(f"zeronf: warning: {w}", file=sys.stderr)
    return res


NF_COLS = ["instance", "service", "name", "pid", "state", "rx", "tx",
           "dropped", "exit_drops"]


def _with_dropped(nfs: list[dict]) -> list[dict]:
    """Each NF with `dropped`: the packets it dropped (its drop verdicts)
    and those dropped after it (its `drops`, by reason)."""
    return [{**n, "dropped": n.get("actions", {}).get("drop", 0) +
             sum(n.get("drops", {}).values())} for n in nfs]


def _status_text(st: dict) -> str:
    pool = st["pool"]
    up_s = st["uptime_ms"] / 1000
    return "\n".join([
        f"instance  {st['instance']}  (manager pid {st['pid']}, up "
        f"{up_s:.0f} s, {'ready' if st['ready'] else 'starting'}"
        f"{', stopping' if st['stopping'] else ''})",
        f"build     {st['build']}  {st['dpdk']}",
        f"ports     {st['ports']}  RX "
        f"{'on' if st['rx_enabled'] else 'paused'}"
        f"{' (waiting for NFs)' if st.get('rx_waiting') else ''}; ingress "
        f"{st['ingress']}",
        f"workers   {st['workers']}",
        f"NFs       {st['nfs']}  (registered {st['registry']['registered']},"
        f" died {st['registry']['died']})",
        f"chain     {','.join(st['chain']) or '(none)'}",
        f"pool      {pool['in_use']} of {pool['size']} buffers in use",
    ])


def run_simple(a) -> int:
    with Client(a.instance) as c:
        if a.cmd == "status":
            st = c.status()
            try:
                fab = c.call("fabric.show")
            except ZeroNFError:  # a tenant's socket: not its to see
                fab = {"fabric": None}
            if a.json:
                return show({**st, "fabric": fab["fabric"] and fab})
            print(_status_text(st))
            from .fabric import fabric_text
            if fab["fabric"] is not None:
                print(fabric_text(fab))
            nfs = c.nfs()
            if nfs:
                print()
                print(_table(_with_dropped(nfs), NF_COLS))
            return 0
        if a.cmd == "nfs":
            res = c.nfs()
            if not a.json:
                print(_table(_with_dropped(res), NF_COLS))
                return 0
            return show(res)
        if a.cmd == "ports":
            res = c.ports()
            if not a.json:
                print(_table(res, ["port", "name", "driver", "rx", "tx",
                                   "rx_paused"]))
                return 0
            return show(res)
        if a.cmd == "services":
            return show(c.services())
        if a.cmd == "tenants":
            return show(c.call("tenant.list")["tenants"])
        return show(c.call(a.cmd.replace("-", ".")))


def run_chain(a) -> int:
    """chain [--port P | --tenant T] [show] | chain [--port P | --tenant
    T] set HOPS | chain HOPS (set) | chain --port P clear (its packets
    take the default chain) | chain --tenant T clear (they drop)."""
    words = list(a.words)
    port = {} if a.port is None else {"port": a.port}
    if a.tenant is not None:
        port["tenant"] = a.tenant
    if words and words[0] == "show":
        words = words[1:]
    elif words and words[0] == "clear" and port:
        with Client(a.instance) as c:
            return show(c.call("chain.set", hops=[], **port)["hops"])
    elif words and words[0] == "set":
        words = words[1:]
        if not words:
            print("zeronf: chain set: which hops? (svc:ID,port:P,drop)",
                  file=sys.stderr)
            return 2
    with Client(a.instance) as c:
        if not words:
            return show(c.call("chain.get", **port)["hops"])
        hops = c.steps(words[0].split(","))
        return show(warned(c.call("chain.set", hops=hops, **port))["hops"])


def run_stop_nf(a) -> int:
    with Client(a.instance) as c:
        return show(c.nf_stop(a.instance_id))


def run_rx(a) -> int:
    with Client(a.instance) as c:
        return show(c.rx_set(a.state == "on"))


def run_call(a) -> int:
    params = _params("call", "params", a.params) or {}
    with Client(a.instance) as c:
        return show(c.call(a.method, **params))


def run_nf_call(a) -> int:
    params = _params("nf-call", "args", a.args)
    with Client(a.instance) as c:
        return show(c.nf_call(a.instance_id, a.command, params))


def run_wait(a) -> int:
    try:
        res = _wait(a.instance, a.idle, a.timeout)
    except ZeroNFError as e:
        print(f"zeronf: wait: {e.message}", file=sys.stderr)
        return 1
    return show(res)


def run_events(a) -> int:
    import time
    since = 0
    with Client(a.instance) as c:
        while True:
            r = c.call("event.list", since=since,
                       **({"limit": a.n} if since == 0 and a.n else {}))
            for e in r["events"]:
                if a.json:
                    print(json.dumps(e))
                else:
                    t = time.strftime("%H:%M:%S",
                                      time.localtime(e["time_ms"] / 1000))
                    print(f"{e['seq']:>5} {t} {e['type']:<16} "
                          f"{e['message']}")
                since = e["seq"]
            if not a.follow:
                return 0
            sys.stdout.flush()
            time.sleep(0.5)


def run_help(a) -> int:
    """Methods, or one method's description: from the manager's generated
    schema (the schema method)."""
    with Client(a.instance) as c:
        if not a.method:
            return show(c.call("help"))
        m = c.schema()["methods"].get(a.method)
    if m is None:
        print(f"zeronf: help: no method '{a.method}'", file=sys.stderr)
        return 1
    print(f"{a.method}: {m['help']}")
    for k, p in m.get("params", {}).items():
        req = "required" if p.get("required") else "optional"
        extra = {x: p[x] for x in ("minimum", "maximum", "enum") if x in p}
        print(f"  {k}: {p.get('type', 'value')}, {req}"
              f"{' ' + json.dumps(extra) if extra else ''}"
              f"{': ' + p['description'] if 'description' in p else ''}")
    if m.get("description"):
        print(m["description"])
    return 0


def register(sub) -> None:
    for name, what in (("status", "the instance: manager, ports, NFs"),
                       ("stats", "every counter (JSON)"),
                       ("nfs", "NF instances and their counters"),
                       ("ports", "ports and their counters"),
                       ("services", "services and their balancing"),
                       ("tenants", "tenants: slices, chain, counters"),
                       ("version", "protocol, build and DPDK versions"),
                       ("shutdown", "stop every NF and the manager")):
        sub.add_parser(name, help=what).set_defaults(run=run_simple)
    p = sub.add_parser("help", help="the manager's methods; one in detail")
    p.add_argument("method", nargs="?")
    p.set_defaults(run=run_help)
    p = sub.add_parser("chain", help="show or set the default chain, or "
                       "a port's (--port P) or a tenant's (--tenant T): "
                       "chain [show] | chain [set] HOPS | chain --port P "
                       "clear")
    p.add_argument("--port", type=int, metavar="P",
                   help="the chain of what enters from port P (and "
                        "matches no rule)")
    p.add_argument("--tenant", metavar="T",
                   help="tenant T's chain (what its slices receive and "
                        "matches no rule; docs/security.md)")
    p.add_argument("words", nargs="*", metavar="HOPS",
                   help="comma-separated: svc:ID (or a launched NF's "
                        "name), port:P, drop")
    p.set_defaults(run=run_chain)
    p = sub.add_parser("stop-nf", help="stop an NF instance (by id)")
    p.add_argument("instance_id", type=int)
    p.set_defaults(run=run_stop_nf)
    p = sub.add_parser("rx", help="enable or pause port RX")
    p.add_argument("state", choices=["on", "off"])
    p.set_defaults(run=run_rx)
    p = sub.add_parser("nf-call", help="a command an NF serves, e.g. "
                       "nf-call 0 route.add '{\"routes\": [...]}'")
    p.add_argument("instance_id", type=int)
    p.add_argument("command")
    p.add_argument("args", nargs="?", help="a JSON object")
    p.set_defaults(run=run_nf_call)
    p = sub.add_parser("wait", help="wait for the manager to be ready "
                       "(--idle: and for its traffic to go through)")
    p.add_argument("--idle", action="store_true")
    p.add_argument("--timeout", type=float, default=30.0)
    p.set_defaults(run=run_wait)
    p = sub.add_parser("call", help="any method, params as JSON")
    p.add_argument("method")
    p.add_argument("params", nargs="?", default="{}")
    p.set_defaults(run=run_call)
    p = sub.add_parser("events", help="the instance's event log")
    p.add_argument("-f", "--follow", action="store_true")
    p.add_argument("-n", type=int, default=0, help="the last N only")
    p.set_defaults(run=run_events)

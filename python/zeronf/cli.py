"""zeronf: command-line client of a ZeroNF manager."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .client import Client, ZeroNFError


def _table(rows: list[dict], cols: list[str]) -> str:
    widths = {c: max([len(c)] + [len(str(r.get(c, ""))) for r in rows])
              for c in cols}
    out = ["  ".join(c.ljust(widths[c]) for c in cols)]
    for r in rows:
        out.append("  ".join(str(r.get(c, "")).ljust(widths[c])
                             for c in cols))
    return "\n".join(out)


def _wait(instance: str, idle: bool, timeout: float) -> dict:
    """Wait until the manager answers and is ready; with idle, also until
    port RX is on and nothing moves any more (port counters unchanged for
    half a second, NF rings empty): all that came in went through."""
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
        if (status["ready"] and status["rx_enabled"] and queued == 0
                and now == key):
            return {"ports": [{k: p[k] for k in ("port", "name", "rx",
                                                 "tx")}
                              for p in st["ports"]],
                    "drops": {k: v for k, v in st["drops"].items() if v}}
        key = now
        time.sleep(0.5)
    raise ZeroNFError(-110, f"not {'idle' if idle else 'ready'} after "
                            f"{timeout:g} s" +
                      (f" ({last_err.message})" if last_err else ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="zeronf", description=__doc__)
    ap.add_argument("-i", "--instance",
                    default=os.environ.get("ZERONF_INSTANCE", "zeronf"))
    ap.add_argument("--json", action="store_true", help="raw JSON output")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("status", "stats", "nfs", "ports", "services", "version",
                 "help", "shutdown"):
        sub.add_parser(name)
    p = sub.add_parser("chain", help="show or set the default chain")
    p.add_argument("hops", nargs="?",
                   help="comma-separated hops: svc:ID, port:P, drop")
    p = sub.add_parser("stop-nf", help="stop an NF instance")
    p.add_argument("instance_id", type=int)
    p = sub.add_parser("rx", help="enable or pause port RX")
    p.add_argument("state", choices=["on", "off"])
    p = sub.add_parser("nf-call", help="a command an NF serves, e.g. "
                       "nf-call 0 route.add '{\"routes\": [...]}'")
    p.add_argument("instance_id", type=int)
    p.add_argument("command")
    p.add_argument("args", nargs="?", help="a JSON object")
    p = sub.add_parser("wait", help="wait for the manager to be ready "
                       "(--idle: and for its traffic to go through)")
    p.add_argument("--idle", action="store_true")
    p.add_argument("--timeout", type=float, default=30.0)
    p = sub.add_parser("call", help="any method, params as JSON")
    p.add_argument("method")
    p.add_argument("params", nargs="?", default="{}")
    a = ap.parse_args(argv)

    # JSON arguments are checked before anything is sent: a clear line,
    # not a traceback.
    params = None
    for what in ("params", "args"):
        text = getattr(a, what, None)
        if text is None:
            continue
        try:
            params = json.loads(text)
        except ValueError as e:
            print(f"zeronf: {a.cmd}: {what} is not JSON ({e}): {text}",
                  file=sys.stderr)
            return 2
        if not isinstance(params, dict):
            print(f"zeronf: {a.cmd}: {what} must be a JSON object, not "
                  f"{text}", file=sys.stderr)
            return 2

    if a.cmd == "wait":
        try:
            res = _wait(a.instance, a.idle, a.timeout)
        except ZeroNFError as e:
            print(f"zeronf: wait: {e.message}", file=sys.stderr)
            return 1
        print(json.dumps(res, indent=2))
        return 0

    try:
        with Client(a.instance) as c:
            if a.cmd == "nfs":
                res = c.nfs()
                if not a.json:
                    print(_table(res, ["instance", "service", "name", "pid",
                                       "state", "rx", "tx", "exit_drops"]))
                    return 0
            elif a.cmd == "ports":
                res = c.ports()
                if not a.json:
                    print(_table(res, ["port", "name", "driver", "rx", "tx",
                                       "rx_paused"]))
                    return 0
            elif a.cmd == "services":
                res = c.services()
            elif a.cmd == "chain":
                res = (c.chain_set(a.hops.split(",")) if a.hops
                       else c.chain_get())
            elif a.cmd == "stop-nf":
                res = c.nf_stop(a.instance_id)
            elif a.cmd == "rx":
                res = c.rx_set(a.state == "on")
            elif a.cmd == "call":
                res = c.call(a.method, **params)
            elif a.cmd == "nf-call":
                res = c.nf_call(a.instance_id, a.command, params)
            else:
                res = c.call(a.cmd.replace("-", "."))
    except ZeroNFError as e:
        print(f"zeronf: {e}", file=sys.stderr)
        return 1
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

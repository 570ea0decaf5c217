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

"""zeronf CLI: flow director rules: flow add|del|list, rule add|del|list.
Match and flow fields are KEY=VALUE words: proto=tcp src=10.0.0.0/8
dport=80 sport=1000-2000 vlan=5 ip=4."""
from __future__ import annotations

import sys

from ..client import Client
from .basic import show, warned

NUMERIC = {"sport", "dport", "vlan", "ip"}


def fields(words: list[str], cmd: str) -> dict:
    out: dict = {}
    for w in words:
        k, eq, v = w.partition("=")
        if not eq or not k or not v:
            print(f"zeronf: {cmd}: '{w}' is not KEY=VALUE", file=sys.stderr)
            raise SystemExit(2)
        out[k] = int(v) if (k in NUMERIC or k == "proto") and \
            v.isdigit() else v
    return out


def _chain(c: Client, text: str) -> list[str]:
    return c.steps(text.split(","))


def run_rule(a) -> int:
    with Client(a.instance) as c:
        if a.action == "list":
            return show(c.call("rule.list")["rules"])
        if a.action == "del":
            return show(c.call("rule.del", id=a.id))
        p = {"match": fields(a.match, "rule add"),
             "chain": _chain(c, a.chain)}
        if a.priority is not None:
            p["priority"] = a.priority
        return show(warned(c.call("rule.add", **p)))


def run_flow(a) -> int:
    with Client(a.instance) as c:
        if a.action == "list":
            return show(c.call("flow.list", limit=a.limit))
        item = {"flow": fields(a.flow, f"flow {a.action}")}
        if a.both:
            item["both"] = True
        if a.action == "del":
            return show(c.call("flow.del", flows=[item]))
        item["chain"] = _chain(c, a.chain)
        return show(c.call("flow.add", flows=[item]))


def register(sub) -> None:
    p = sub.add_parser("rule", help="wildcard rules: add, del, list")
    acts = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    s = acts.add_parser("add", help="rule add proto=tcp dport=80 "
                        "--chain svc:2,port:1 [--priority N]")
    s.add_argument("match", nargs="*", metavar="KEY=VALUE")
    s.add_argument("--chain", required=True)
    s.add_argument("--priority", type=int)
    s = acts.add_parser("del", help="rule del ID")
    s.add_argument("id", type=int)
    acts.add_parser("list")
    p.set_defaults(run=run_rule)
    p = sub.add_parser("flow", help="exact flow rules: add, del, list")
    acts = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for act in ("add", "del"):
        s = acts.add_parser(act, help=f"flow {act} proto=tcp src=A dst=B "
                            f"sport=P dport=Q" +
                            (" --chain HOPS" if act == "add" else ""))
        s.add_argument("flow", nargs="+", metavar="KEY=VALUE")
        s.add_argument("--both", action="store_true",
                       help="the reverse direction too")
        if act == "add":
            s.add_argument("--chain", required=True)
    s = acts.add_parser("list")
    s.add_argument("--limit", type=int, default=1000)
    p.set_defaults(run=run_flow)

"""zeronf CLI: fabric and path, chains across hosts (docs/multihost.md).
`fabric` shows this host's place on the fabric and its peers with their
counters; `fabric set` puts it on one (its port, host id, address),
`fabric off` takes it off; `fabric peer HOST ...` adds or replaces a peer,
`fabric peer HOST --del` removes it. `path` lists the service paths,
`path SPI HOPS` sets one, `path SPI --del` forgets it."""
from __future__ import annotations

import json
import sys

from ..client import Client, ZeroNFError

PEER_COLS = ["host", "name", "ip", "encap", "mtu", "state", "tx", "rx",
             "nsh_mtu", "peer_down"]


def _state(p: dict) -> str:
    if p["up"]:
        return "up"
    if p["down"]:
        return "down (set)"
    if not p["alive"]:
        return "down (not heard)"
    return "no MAC yet"


def fabric_text(show: dict) -> str:
    """fabric.show's answer for people: empty when not on a fabric."""
    from .basic import _table
    f = show["fabric"]
    if f is None:
        return ""
    rows = [{**p, "encap": p["encap"] if p["nsh"] else "vxlan (plain)",
             "state": _state(p), **p["drops"]}
            for p in show["peers"]]
    ing = show["ingress"]
    lines = [f"fabric    host {f['host']} on port {f['port']}, {f['ip']} "
             f"({f['mac']}); {len(rows)} peers, "
             f"{sum(p['up'] for p in show['peers'])} up"]
    bad = {k: v for k, v in ing.items() if v and k != "arp_answered"}
    if bad:
        lines.append("          dropped in: " + ", ".join(
            f"{k} {v}" for k, v in bad.items()))
    if rows:
        lines += ["", _table(rows, PEER_COLS)]
    return "\n".join(lines)


def run_fabric(a) -> int:
    try:
        with Client(a.instance) as c:
            if a.what == "set":
                if a.port is None or a.host is None or a.ip is None:
                    print("zeronf: fabric set: --port, --host and --ip",
                          file=sys.stderr)
                    return 2
                c.call("fabric.set", port=a.port, host=a.host, ip=a.ip)
            elif a.what == "off":
                c.call("fabric.set", off=True)
            elif a.what == "peer":
                if a.peer_host is None:
                    print("zeronf: fabric peer: HOST", file=sys.stderr)
                    return 2
                if a.delete:
                    c.call("fabric.peer.del", host=a.peer_host)
                else:
                    p = {k: v for k, v in (
                        ("ip", a.ip), ("mac", a.mac), ("encap", a.encap),
                        ("vni", a.vni), ("mtu", a.mtu), ("name", a.name))
                        if v is not None}
                    if a.plain:
                        p["nsh"] = False
                    if a.down:
                        p["down"] = True
                    c.call("fabric.peer.set", host=a.peer_host, **p)
            show = c.call("fabric.show")
    except ZeroNFError as e:
        print(f"zeronf: fabric: {e}", file=sys.stderr)
        return 1
    if a.json:
        print(json.dumps(show, indent=2))
    else:
        print(fabric_text(show) or "not on a fabric (zeronf fabric set)")
    return 0


def run_path(a) -> int:
    try:
        with Client(a.instance) as c:
            if a.spi is not None and a.delete:
                c.call("path.del", spi=a.spi)
            elif a.spi is not None:
                if not a.hops:
                    print("zeronf: path SPI HOPS (comma-separated)",
                          file=sys.stderr)
                    return 2
                c.call("path.set", spi=a.spi, hops=c.steps(
                    [h for w in a.hops for h in w.split(",") if h]))
            paths = c.call("path.list")["paths"]
    except ZeroNFError as e:
        print(f"zeronf: path: {e}", file=sys.stderr)
        return 1
    if a.json:
        print(json.dumps(paths, indent=2))
    else:
        for p in paths:
            print(f"{p['spi']:>8}  {','.join(p['hops'])}  (chain "
                  f"{p['chain']}, {p['users']} users)")
    return 0


def register(sub) -> None:
    p = sub.add_parser("fabric", help="this host on a fabric of ZeroNF "
                       "hosts and its peers (docs/multihost.md)")
    p.add_argument("what", nargs="?", default="show",
                   choices=["show", "set", "off", "peer"])
    p.add_argument("peer_host", nargs="?", type=int, metavar="HOST",
                   help="peer: its host id")
    p.add_argument("--port", type=int, help="set: the fabric port")
    p.add_argument("--host", type=int, help="set: this host's id")
    p.add_argument("--ip", help="set: this host's fabric address; peer: "
                   "the peer's")
    p.add_argument("--mac", help="peer: its fabric port's MAC address")
    p.add_argument("--encap", choices=["vxlan-gpe", "vxlan", "ethernet"],
                   help="peer: the tunnel (vxlan-gpe)")
    p.add_argument("--vni", type=int, help="peer: VXLAN's VNI (0)")
    p.add_argument("--mtu", type=int, help="peer: the fabric's IP MTU "
                   "towards it (1500)")
    p.add_argument("--name", help="peer: a name for people")
    p.add_argument("--plain", action="store_true", help="peer: a plain "
                   "VXLAN end point, no NSH (a kernel's vxlan device)")
    p.add_argument("--down", action="store_true", help="peer: its hops' "
                   "packets drop (peer_down)")
    p.add_argument("--del", dest="delete", action="store_true",
                   help="peer: remove it")
    p.set_defaults(run=run_fabric)
    p = sub.add_parser("path", help="service paths: chains across hosts "
                       "by their NSH path id")
    p.add_argument("spi", nargs="?", type=int)
    p.add_argument("hops", nargs="*", metavar="HOPS",
                   help="as this host sees them: svc:ID or a launched "
                        "NF's name, port:P, with @HOST on another host")
    p.add_argument("--del", dest="delete", action="store_true")
    p.set_defaults(run=run_path)

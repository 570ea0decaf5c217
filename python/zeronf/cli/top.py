"""zeronf CLI: top: per-NF and per-port rates, refreshed (packets per
second over the last interval, drops per second, ring occupancy)."""
from __future__ import annotations

import sys
import time

from ..client import Client
from .basic import _table


def _rates(prev: dict, cur: dict, dt: float, key: str) -> str:
    d = cur.get(key, 0) - prev.get(key, 0)
    return f"{d / dt:,.0f}" if dt > 0 else "-"


def _drops(x: dict) -> int:
    return sum(x.get("drops", {}).values())


def frame(st: dict, prev: dict | None, dt: float) -> str:
    prev_nf = {n["instance"]: n for n in (prev or {}).get("nfs", [])}
    prev_port = {p["port"]: p for p in (prev or {}).get("ports", [])}
    nfs, ports = [], []
    for n in st["nfs"]:
        p = prev_nf.get(n["instance"], n)
        ring = n.get("rx_ring") or {"count": 0, "size": 1}
        nfs.append({
            "id": n["instance"], "name": n["name"], "svc": n["service"],
            "state": n["state"], "rx/s": _rates(p, n, dt, "rx"),
            "tx/s": _rates(p, n, dt, "tx"),
            "drops/s": f"{(_drops(n) - _drops(p)) / dt:,.0f}" if dt else "-",
            "ring": f"{100 * ring['count'] / max(ring['size'], 1):.0f}%",
            "rx": n["rx"]})
    for pt in st["ports"]:
        p = prev_port.get(pt["port"], pt)
        ports.append({
            "port": pt["port"], "name": pt["name"],
            "rx/s": _rates(p, pt, dt, "rx"), "tx/s": _rates(p, pt, dt, "tx"),
            "drops/s": f"{(_drops(pt) - _drops(p)) / dt:,.0f}"
            if dt else "-", "rx": pt["rx"], "tx": pt["tx"]})
    s = st["status"]
    head = (f"{s['instance']}: {len(st['nfs'])} NFs, {len(st['ports'])} "
            f"ports, RX {'on' if s['rx_enabled'] else 'paused'}, pool "
            f"{s['pool']['in_use']}/{s['pool']['size']} in use")
    return "\n".join([
        head, "",
        _table(nfs, ["id", "name", "svc", "state", "rx/s", "tx/s",
                     "drops/s", "ring", "rx"]) if nfs else "(no NFs)", "",
        _table(ports, ["port", "name", "rx/s", "tx/s", "drops/s", "rx",
                       "tx"])])


def run_top(a) -> int:
    tty = sys.stdout.isatty()
    prev, t_prev, n = None, 0.0, 0
    with Client(a.instance) as c:
        while a.n == 0 or n < a.n:
            st = c.stats()
            now = time.monotonic()
            text = frame(st, prev, now - t_prev if prev else 0.0)
            if tty:
                sys.stdout.write("\x1b[H\x1b[2J")
            print(text + ("" if tty else "\n"), flush=True)
            prev, t_prev, n = st, now, n + 1
            if a.n == 0 or n < a.n:
                time.sleep(a.interval)
    return 0


def register(sub) -> None:
    p = sub.add_parser("top", help="live per-NF and per-port rates")
    p.add_argument("-d", "--interval", type=float, default=1.0)
    p.add_argument("-n", type=int, default=0,
                   help="this many refreshes, then exit (default: until ^C)")
    p.set_defaults(run=run_top)

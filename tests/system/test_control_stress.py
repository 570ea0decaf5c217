"""Telemetry and control requests hammered while NFs join and leave
(stopped and killed), load-balancing modes change (least_loaded's pin
table is freed when it changes away) and the chain changes, under
traffic (issue 10, defect 8). The views the telemetry thread serves are
built by the control thread; publishing a route snapshot cannot fail.
Run by the sanitizer subset too (tests/sanitize.sh)."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time

from harness import traffic_ports, wait_for
from zeronf import Client, runtime_dir
from test_lb import many_flows  # noqa: F401 - fixture

DURATION = 8.0


def telemetry_loop(name: str, stop: threading.Event, res: dict) -> None:
    cmds = ["/zeronf/stats", "/zeronf/status", "/zeronf/nfs",
            "/zeronf/ports", "/zeronf/nf,0", "/zeronf/nf,1"]
    n = 0
    while not stop.is_set():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(5)
        try:
            s.connect(f"{runtime_dir(name)}/dpdk_telemetry.v2")
            s.recv(4096)
            for c in cmds:
                s.send(c.encode())
                json.loads(s.recv(1 << 20))
                n += 1
        finally:
            s.close()
    res["telemetry"] = n


def control_loop(name: str, stop: threading.Event, res: dict) -> None:
    n = 0
    with Client(name) as c:
        while not stop.is_set():
            for m in ("stats", "nf.list", "service.list", "status",
                      "flow.list", "rule.list"):
                c.call(m)
                n += 1
    res["control"] = n


def test_hammered_while_nfs_and_lb_change(managers, many_flows):  # noqa
    m = managers(ports=traffic_ports(many_flows), chain="1,port:1",
                 rx_paused=True)
    base = m.pool()["in_use"]
    nfs = [m.start_nf("forward", 1, f"r{i}") for i in range(2)]
    m.call("rx.set", enabled=True)
    stop, res, errors = threading.Event(), {}, []

    def guarded(fn):
        def run():
            try:
                fn(m.name, stop, res)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(f"{fn.__name__}: {e!r}")
        return threading.Thread(target=run)

    threads = [guarded(telemetry_loop), guarded(control_loop),
               guarded(control_loop)]
    for t in threads:
        t.start()
    modes = ["least_loaded", "hash", "weighted", "least_loaded"]
    deadline, step = time.monotonic() + DURATION, 0
    try:
        while time.monotonic() < deadline:
            mode = modes[step % len(modes)]
            live = [n for n in nfs if n.proc.alive()]
            kw = {"weights": {str(n.instance): 1 + step % 3 for n in live}} \
                if mode == "weighted" and live else {}
            m.call("service.set", service=1, lb=mode, **kw)
            m.call("chain.set", hops=["svc:1", "port:1"] if step % 2 else
                   ["svc:1", "svc:1", "port:1"])
            if len(live) >= 3:  # replicas come and go, 2 to 3 alive
                live[0].proc.signal(signal.SIGKILL if step % 2
                                    else signal.SIGTERM)
                live[0].proc.wait(10)
            nfs.append(m.start_nf("forward", 1, f"r{len(nfs)}"))
            step += 1
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert not errors, errors
    assert res["telemetry"] > 20 and res["control"] > 100, res
    assert step >= 4
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    assert st["status"]["registry"]["died"] >= 1
    assert m.shutdown() == 0
    assert "buffers not returned" not in m.proc.output()


def test_telemetry_waits_then_answers_while_control_busy(managers):
    """The control thread answers telemetry between its events: a burst
    of flow rules being installed delays it, never loses it."""
    m = managers(ports=["net_null0,no-rx=1"], chain="1,port:0")
    flows = [{"flow": {"proto": "udp", "src": f"10.0.{i // 250}.{i % 250}",
                       "dst": "10.9.9.9", "sport": 1000, "dport": 53},
              "chain": ["drop"]} for i in range(20000)]
    got = {}

    def tel():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(f"{runtime_dir(m.name)}/dpdk_telemetry.v2")
        s.recv(4096)
        for _ in range(20):
            s.send(b"/zeronf/status")
            got.setdefault("n", 0)
            r = json.loads(s.recv(1 << 20))["/zeronf/status"]
            got["n"] += r is not None and r["instance"] == m.name
        s.close()
    t = threading.Thread(target=tel)
    t.start()
    with Client(m.name) as c:  # batches under the 64 KiB request limit
        for i in range(0, len(flows), 400):
            c.call("flow.add", flows=flows[i:i + 400])
    t.join(30)
    assert got["n"] == 20
    wait_for(lambda: m.call("stats")["fdir"]["flows"] == 20000, 5, "flows")
    deleted = missing = 0
    with Client(m.name) as c:
        for i in range(0, len(flows), 400):
            r = c.call("flow.del", flows=[{"flow": f["flow"]}
                                          for f in flows[i:i + 400]])
            deleted += r["deleted"]
            missing += r["missing"]
    assert (deleted, missing) == (20000, 0)
    # deleted slots are recycled once the workers passed a quiescent
    # state (the control tick): 0 soon after
    wait_for(lambda: m.call("stats")["fdir"]["flows"] == 0, 5, "flows gone")

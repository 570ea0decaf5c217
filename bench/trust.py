"""`make bench BENCH=trust`: a chain of 2 (the speed tester and one
forward NF) within one trust group, and across two (each packet copied
into the other group's pool by a worker, both ways: mgr/trust/group.c).
`BENCH=validate`: the descriptor checks' cost. `BENCH=group_port`: a
trust group's port with the manager's headers for its driver and
without (mgr/trust/port_headers.h)."""
from __future__ import annotations

import json
import time

from common import TMP, emit, log, median, udp_frame
from harness import Manager

GROUPS = ["--trust-group", "a:16383", "--trust-group", "b:16383"]
WINDOW = 512


def trust_once(mode: str, size: int, seconds: float = 2.0) -> tuple[float,
                                                                    float]:
    """(Mpps through the chain, mean ns per copy) for mode same_group
    (both NFs in a) or cross_group (the tester in a, the forward NF in
    b)."""
    m = Manager(TMP, chain="2,1", args=GROUPS + ["--mem", "512"])
    try:
        fwd = "a" if mode == "same_group" else "b"
        m.start_nf("forward", 2, lib_args=["--trust-group", fwd])
        st = m.start_nf("speed-tester", 1, lib_args=["--trust-group", "a"],
                        nf_args=["-n", str(WINDOW), "-S", str(size),
                                 "-d", str(seconds), "-w", "1"])
        st.proc.wait(seconds + 30)
        r = json.loads([ln for ln in st.proc.output().splitlines()
                        if ln.startswith("{")][-1])
        return r["mpps"], m.call("group.list")["ns_per_copy"]
    finally:
        m.shutdown()
        m.close()


def bench_trust(runs: int) -> None:
    for size in (64, 1500):
        res: dict[str, list[tuple[float, float]]] = {"same_group": [],
                                                     "cross_group": []}
        for _ in range(runs):
            for mode in res:
                res[mode].append(trust_once(mode, size))
        log(f"trust {size} B: {res}")
        for mode, v in res.items():
            emit({"bench": "trust", "mode": mode, "size": size,
                  "mpps": median([x[0] for x in v]),
                  "ns_per_copy": round(median([x[1] for x in v]), 1),
                  "runs": [round(x[0], 3) for x in v]})


def chain2_once(handoff: str, validate: str, seconds: float = 2.0) -> float:
    """The chain bench's chain of 2 (dataplane.tester_line's layout on
    this machine), with --validate on or off."""
    m = Manager(TMP, chain="2,1",
                args=["--handoff", handoff, "--validate", validate])
    try:
        m.start_nf("forward", 2)
        st = m.start_nf("speed-tester", 1,
                        nf_args=["-n", str(WINDOW), "-d", str(seconds),
                                 "-w", "1"])
        st.proc.wait(seconds + 30)
        return json.loads([ln for ln in st.proc.output().splitlines()
                           if ln.startswith("{")][-1])["mpps"]
    finally:
        m.shutdown()
        m.close()


def on_off(runs: int, once, line: dict) -> None:
    """@once(handoff, "on"|"off") alternating, @runs each, per handoff
    (direct, worker): one line each, @line plus the medians, the cost of
    --validate on and the runs."""
    for handoff in ("direct", "worker"):
        res: dict[str, list[float]] = {"on": [], "off": []}
        for _ in range(runs):
            for v in res:
                res[v].append(once(handoff, v))
        log(f"{line['bench']}, {handoff}: {res}")
        on, off = median(res["on"]), median(res["off"])
        emit({**line, "handoff": handoff, "on_mpps": on, "off_mpps": off,
              "cost_pct": round(100 * (1 - on / off), 1) if off else None,
              "runs_on": res["on"], "runs_off": res["off"]})


def bench_validate(runs: int) -> None:
    """What checking NFs' descriptors costs (mgr/trust/owner_map.c), chain of 2:
    NFs handing packets to each other (the default: the worker sees
    none of them) and every hop through the worker (--handoff worker)."""
    on_off(runs, chain2_once, {"bench": "validate", "nfs": 2})


def group_port_trace(frames: int = 512) -> str:
    """@frames 64-byte UDP frames, one flow each (net_pcap's infinite RX
    keeps them all in the port's pool: a small trace)."""
    from pcaputil import write_pcap
    path = TMP / f"group_port{frames}.pcap"
    if not path.exists():
        write_pcap(path, (udp_frame(bytes([10, 0, i >> 8, i & 255]),
                                    bytes([10, 1, 0, 1]), 1024 + i, 80, 60)
                          for i in range(frames)))
    return str(path)


def group_port_once(handoff: str, validate: str,
                    seconds: float = 2.0) -> float:
    """Mpps through a forward NF of group a that port 0 (a's port, net_pcap
    replaying 64-byte frames) feeds and port 1 (net_null) takes."""
    m = Manager(TMP, ports=[f"net_pcap0,rx_pcap={group_port_trace()},"
                            "infinite_rx=1", "net_null0,no-rx=1"],
                chain="1,port:1", rx_paused=True,
                args=["--trust-group", "a:4095", "--port-group", "0=a",
                      "--handoff", handoff, "--validate", validate,
                      "--mem", "512"])
    try:
        nf = m.start_nf("forward", 1, lib_args=["--trust-group", "a"])
        m.call("rx.set", enabled=True)
        time.sleep(1.0)  # warm up
        t0, a = time.monotonic(), (nf.stats() or {}).get("rx", 0)
        time.sleep(seconds)
        t1, b = time.monotonic(), (nf.stats() or {}).get("rx", 0)
        return round((b - a) / (t1 - t0) / 1e6, 3)
    finally:
        m.shutdown()
        m.close()


def bench_group_port(runs: int) -> None:
    """What the manager's headers for a group's port cost (--validate on:
    its driver receives into them, and with --handoff worker sends from
    them) against the buffers' own headers (--validate off: NFs
    trusted), alternating."""
    on_off(runs, group_port_once, {"bench": "group_port"})

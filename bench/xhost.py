"""xhost: a chain of 2 on one host against the same chain split over two
hosts (bench/run.py has the line format). The speed tester (service 1)
and a forward NF (service 2): on one host the default chain is "2,1"; on
two, the forward NF runs on host 2 and the default chain of host 1 is the
path "svc:2@2,svc:1" (path 1), packets crossing in NSH over VXLAN-GPE
both ways. The hosts are two managers on this machine, their fabric ports
the two ends of a memif pair (DPDK's shared-memory interface between
processes): a wire that costs little itself, so what the two-host line
adds is ZeroNF's (encapsulation, decapsulation, a second manager's
worker), not a kernel's. Latency is one way: the tester stamps each
packet it makes and measures it when the chain brings it back (one
clock); open loop, both lines at the same rate: 10 % of the lower of the
two closed-loop peaks measured just before (the two hosts').
"""
from __future__ import annotations

import json
import statistics
import subprocess

from common import TMP, emit, log, median
from harness import BUILD, Manager

SIZES = (64, 1500)
PATH = {1: ["svc:2@2", "svc:1"], 2: ["svc:2", "svc:1@1"]}


def tester(m: Manager, args: list[str], seconds: float) -> dict:
    st = m.start_nf("speed-tester", 1,
                    nf_args=args + ["-d", str(seconds), "-w", "1"])
    st.proc.wait(seconds + 60)
    return json.loads([ln for ln in st.proc.output().splitlines()
                       if ln.startswith("{")][-1])


def one_host(args: list[str], seconds: float) -> dict:
    m = Manager(TMP, chain="2,1")
    try:
        m.start_nf("forward", 2)
        return tester(m, args, seconds)
    finally:
        m.shutdown()
        m.close()


def two_hosts(args: list[str], seconds: float) -> dict:
    sock = TMP / f"memif-{len(list(TMP.iterdir()))}.sock"
    m1 = Manager(TMP, chain="1",  # the path replaces it below
                 ports=[f"net_memif0,role=server,socket={sock},id=0"])
    m2 = Manager(TMP, ports=[f"net_memif1,role=client,socket={sock},id=0"])
    try:
        macs = [m.call("port.list")["ports"][0]["mac"] for m in (m1, m2)]
        for i, m in enumerate((m1, m2)):
            m.call("fabric.set", port=0, host=i + 1, ip=f"10.255.0.{i + 1}")
            m.call("fabric.peer.set", host=2 - i, ip=f"10.255.0.{2 - i}",
                   mac=macs[1 - i], mtu=9000)
        m1.call("chain.set", hops=PATH[1])
        for i, m in enumerate((m1, m2)):
            m.call("path.set", spi=1, hops=PATH[i + 1])
        m2.start_nf("forward", 2)
        r = tester(m1, args, seconds)
        r["peer"] = m1.call("fabric.show")["peers"][0]
        return r
    finally:
        for m in (m2, m1):
            m.shutdown()
            m.close()


def bench_xhost(runs: int) -> None:
    """Per size and run, interleaved: both closed-loop peaks, then both
    latencies at one offered rate, 10 % of the lower peak (the two
    hosts'): the same load for both lines."""
    for size in SIZES:
        peaks: dict[int, list[float]] = {1: [], 2: []}
        lat: dict[int, list[dict]] = {1: [], 2: []}
        rates = []
        for _ in range(runs):
            for hosts, once in ((1, one_host), (2, two_hosts)):
                peaks[hosts].append(
                    once(["-n", "512", "-S", str(size)], 2.0)["mpps"])
            rate = int(min(peaks[1][-1], peaks[2][-1]) * 1e6 * 0.1)
            rates.append(rate)
            for hosts, once in ((1, one_host), (2, two_hosts)):
                lat[hosts].append(once(["-S", str(size), "-r", str(rate)],
                                       2.0))
                log(f"xhost {hosts} host(s) {size} B: "
                    f"{peaks[hosts][-1]:.3f} Mpps, p50 "
                    f"{lat[hosts][-1]['latency_ns']['p50']} ns at "
                    f"{rate / 1e6:.3f} Mpps")
        for hosts in (1, 2):
            emit({"bench": "xhost", "hosts": hosts, "size": size,
                  "mpps": median(peaks[hosts]),
                  "p50_ns": int(statistics.median(
                      r["latency_ns"]["p50"] for r in lat[hosts])),
                  "p99_ns": int(statistics.median(
                      r["latency_ns"]["p99"] for r in lat[hosts])),
                  "latency_at_mpps": round(statistics.median(rates) / 1e6,
                                           4),
                  "runs": peaks[hosts]})
    for size in SIZES:
        r = subprocess.run([str(BUILD / "bench/zn-nsh-bench"), str(size)],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"zn-nsh-bench failed: {r.stderr}")
        emit(json.loads(r.stdout))

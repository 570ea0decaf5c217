"""Fairness between tenants under a flood (docs/security.md "Tenants"):
tenant red, held to 20 % of a CPU (--tenant cpu=20) and to the manager's
core, is flooded from its slice of port 0 at far more than that share
lets its NF do (a capture replayed without pause, each packet costing its
NF 20 us: 10 kpps at its share); tenant blue, on a core of its own, runs
an open-loop generator (the speed tester, 20 kpps) through its own
forward NF. Blue's throughput and latency with red flooded stay within
10 % of what they are with red quiet, and red's NF gets its share, no
more. Phases alternate quiet / flooded three times; medians compared."""

from __future__ import annotations

import json
import os
import statistics
import time

import pytest

from harness import DATA, NF_BIN, scaled, wait_for
from pcaputil import read_frames, write_pcap


def cpu_seconds(pid: int) -> float:
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def test_a_flooded_tenant_keeps_to_its_share(managers, tmp_path):
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs 2 CPUs: one for the manager and red, one for "
                    "blue")
    mine, blues = str(cpus[0]), str(cpus[-1])
    frames = [f[:12] + b"\x81\x00\x00\x0a" + f[12:]
              for f in read_frames(DATA / "pcap/bittorrent.pcap")]
    write_pcap(tmp_path / "red.pcap", frames)
    m = managers(ports=[f"net_pcap0,rx_pcap={tmp_path / 'red.pcap'},"
                        "infinite_rx=1", "net_null0,no-rx=1"],
                 chain="20,21", rx_paused=True,
                 args=["--cpus", mine,
                       "--trust-group", "red:4095",
                       "--trust-group", "blue:4095",
                       "--tenant", "red=red,services=10-19,cpu=20",
                       "--tenant", "blue=blue,services=20-29",
                       "--slice", "red:0:vlan=10", "--slice", "red:1"])
    m.call("nf.start", name="red-nf", binary=str(NF_BIN["forward"]),
           service=10, trust_group="red", cpus=mine,
           args=["--cost-ns", "20000"])
    wait_for(lambda: any(n["name"] == "red-nf" and n["state"] == "running"
                         for n in m.call("nf.list")["nfs"]), scaled(20),
             "red's NF running")
    red_pid = next(n["pid"] for n in m.call("nf.list")["nfs"])
    m.call("chain.set", tenant="red", hops=["10", "port:1"])
    m.start_nf("forward", 20, "blue-fw",
               lib_args=["--trust-group", "blue", "--cpus", blues])

    res: dict[bool, list[dict]] = {False: [], True: []}
    shares = []
    for i in range(6):
        flood = i % 2 == 1
        m.call("rx.set", enabled=flood)
        if flood:
            time.sleep(0.5)
        t0, c0 = time.monotonic(), cpu_seconds(red_pid)
        st = m.start_nf("speed-tester", 21, f"blue-st{i}",
                        nf_args=["-r", "20000", "-d", "2", "-w", "0.5"],
                        lib_args=["--trust-group", "blue", "--cpus", blues])
        assert st.proc.wait(30) == 0
        if flood:
            shares.append((cpu_seconds(red_pid) - c0) /
                          (time.monotonic() - t0))
        res[flood].append(json.loads(
            [ln for ln in st.proc.output().splitlines()
             if ln.startswith("{")][-1]))
    m.call("rx.set", enabled=False)
    red = m.call("tenant.list")["tenants"][0]["counters"]

    def med(flood, f):
        return statistics.median(f(r) for r in res[flood])
    quiet = (med(False, lambda r: r["mpps"]),
             med(False, lambda r: r["latency_ns"]["p50"]),
             med(False, lambda r: r["latency_ns"]["p90"]))
    loud = (med(True, lambda r: r["mpps"]),
            med(True, lambda r: r["latency_ns"]["p50"]),
            med(True, lambda r: r["latency_ns"]["p90"]))
    msg = (f"blue (Mpps, p50, p90 ns) with red quiet {quiet}, flooded "
           f"{loud}; red's CPU share {shares}, counters {red}")
    # Red was flooded well past its share, and got its share.
    assert red["ingress_full"] > 10 * (red["rx"] - red["ingress_full"]), red
    assert max(shares) <= 0.25, msg
    # Blue: the same throughput and latency, within 10 %.
    assert loud[0] >= 0.9 * quiet[0], msg
    assert loud[1] <= 1.1 * quiet[1] and loud[2] <= 1.1 * quiet[2], msg
    assert m.shutdown() == 0

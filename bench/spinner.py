"""The spinner bench (issue 28 item 13): what a forwarder keeps of its
core when a thread that never yields shares it. Line format: bench/run.py."""
from __future__ import annotations

import os
import subprocess
import time

from common import TMP, emit, log, median
from harness import Manager

PORTS = ["net_null0", "net_null1,no-rx=1"]


def spinner_once(seconds: float, spin: bool) -> tuple[float, int]:
    """net_null -> one forward NF -> net_null, the manager's worker and
    the NF on one core; with @p spin, a busy loop (a process that never
    sleeps nor yields) pinned there too. Returns the rate out of the port
    (Mpps) and the NF's long yields (lib/common/zn_yield.h). (With the
    NF's core shared with the spinner alone, the worker on another, the
    NF always has packets and never yields: 0.5 of its rate either way.)"""
    cpus = sorted(os.sched_getaffinity(0))
    nf_cpu = mgr_cpu = cpus[0]
    m = Manager(TMP, ports=PORTS, chain="1,port:1", rx_paused=True,
                args=["--cpus", str(mgr_cpu)])
    spinner = None
    try:
        nf = m.start_nf("forward", 1, lib_args=["--cpus", str(nf_cpu)])
        if spin:
            spinner = subprocess.Popen(
                ["taskset", "-c", str(nf_cpu), "sh", "-c",
                 "while :; do :; done"])
        m.call("rx.set", enabled=True)
        time.sleep(1.0)  # warm up
        t0, a = time.monotonic(), m.call("port.list")["ports"][1]["tx"]
        time.sleep(seconds)
        t1, b = time.monotonic(), m.call("port.list")["ports"][1]["tx"]
        return (b - a) / (t1 - t0) / 1e6, \
            m.nf_by_pid(nf.proc.pid)["long_yields"]
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
        m.shutdown()
        m.close()


def bench_spinner(runs: int) -> None:
    alone, shared, longs = [], [], []
    for i in range(runs):  # interleaved: a noisy machine hits both
        alone.append(spinner_once(3.0, False)[0])
        mpps, n = spinner_once(3.0, True)
        shared.append(mpps)
        longs.append(n)
        log(f"spinner run {i}: alone {alone[-1]:.2f} Mpps, with a spinner "
            f"{mpps:.2f} Mpps ({n} long yields)")
    a, s = median(alone), median(shared)
    emit({"bench": "spinner", "alone_mpps": round(a, 2),
          "with_spinner_mpps": round(s, 2), "ratio": round(s / a, 3),
          "target_ratio": 0.25, "long_yields": int(median(longs)),
          "runs": {"alone": [round(x, 2) for x in alone],
                   "with_spinner": [round(x, 2) for x in shared]}})

#!/usr/bin/env python3
"""ZeroNF benchmarks (`make bench`, `make bench BENCH=name`).

Each prints one JSON object per line on stdout; values are medians of
--runs runs, with the individual runs alongside. Comparisons (p2p against
dpdk-testpmd) are measured in the same run, interleaved, so a noisy machine
affects both sides alike. Progress goes to stderr.

  chain  {"bench":"chain","nfs":N,"mpps":X}  N = 1, 2, 4, 8: the speed
         tester keeps 512 64-byte packets circulating through N NFs (itself
         and N-1 forward NFs); mpps = packets per second through the chain.
         Where the machine has a core per thread, NFs are pinned one per
         core and their output is drained by N worker threads.
  p2p    {"bench":"p2p","zeronf_mpps":X,"testpmd_mpps":Y}: net_null ->
         one forward NF -> net_null, and dpdk-testpmd io forwarding on the
         same vdevs.
  idle   {"bench":"idle","cpu_pct":X}: CPU used by the manager and 4 idle
         NFs over 10 s, in % of one core.
  flowtable {"bench":"flowtable","flows":N,"ns_per_lookup_burst":X,...}:
         flow table lookup cost for N = 1k, 10k, 100k, 1M flows.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "python"))

from harness import HUGE_DIR, Manager, wait_for  # noqa: E402
from zeronf import runtime_dir  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="zeronf-bench-"))


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def median(xs: list[float]) -> float:
    return round(statistics.median(xs), 4)


# ---------------------------------------------------------------- chain
def chain_layout(n: int) -> tuple[list[str], dict[int, list[str]], int]:
    """Manager args, per-service NF args and worker count for a chain of n
    NFs on this machine. With a core per thread to spare, NFs get a core
    each and NF draining is spread over TX worker threads (each NF drained
    by one); otherwise everything floats over all CPUs with one worker."""
    cpus = sorted(os.sched_getaffinity(0))
    tx = min(n, len(cpus) - n - 2)
    if tx < 1:
        return [], {s: [] for s in range(1, n + 1)}, 1
    mgr_cpus = cpus[:tx + 2]  # control thread, idle RX worker, TX workers
    nf_cpus = cpus[tx + 2:]
    args = ["--tx-threads", str(tx), "--cpus",
            ",".join(str(c) for c in mgr_cpus)]
    return args, {s: ["--cpus", str(nf_cpus[s - 1])]
                  for s in range(1, n + 1)}, tx


def chain_once(n: int, seconds: float) -> dict:
    # The tester is service 1, at the end of the chain; forwards are 2..n.
    hops = [str(s) for s in range(2, n + 1)] + ["1"]
    mgr_args, nf_args, workers = chain_layout(n)
    m = Manager(TMP, chain=",".join(hops), args=mgr_args)
    try:
        for s in range(2, n + 1):
            m.start_nf("forward", s, lib_args=nf_args[s])
        st = m.start_nf("speed-tester", 1, lib_args=nf_args[1],
                        nf_args=["-n", "512", "-d", str(seconds), "-w", "1"])
        st.proc.wait(seconds + 30)
        line = [ln for ln in st.proc.output().splitlines()
                if ln.startswith("{")][-1]
        return {**json.loads(line), "workers": workers}
    finally:
        m.shutdown()
        m.close()


def bench_chain(runs: int) -> None:
    for n in (1, 2, 4, 8):
        res = [chain_once(n, 2.0) for _ in range(runs)]
        mpps = [r["mpps"] for r in res]
        log(f"chain {n}: {mpps}")
        emit({"bench": "chain", "nfs": n, "mpps": median(mpps),
              "cpus": len(os.sched_getaffinity(0)),
              "workers": res[0]["workers"],
              "latency_p50_ns": int(statistics.median(
                  r["latency_ns"]["p50"] for r in res)),
              "latency_p99_ns": int(statistics.median(
                  r["latency_ns"]["p99"] for r in res)),
              "runs": mpps})


# ---------------------------------------------------------------- p2p
P2P_PORTS = ["net_null0", "net_null1,no-rx=1"]


def zeronf_p2p_once(seconds: float) -> float:
    m = Manager(TMP, ports=P2P_PORTS, chain="1,port:1", rx_paused=True)
    try:
        m.start_nf("forward", 1)
        m.call("rx.set", enabled=True)
        time.sleep(1.0)  # warm up
        t0, a = time.monotonic(), m.call("port.list")["ports"][1]["tx"]
        time.sleep(seconds)
        t1, b = time.monotonic(), m.call("port.list")["ports"][1]["tx"]
        return (b - a) / (t1 - t0) / 1e6
    finally:
        m.shutdown()
        m.close()


def _tx_packets(out: str, port: int) -> list[int]:
    blocks = re.findall(r"NIC statistics for port (\d+).*?TX-packets:\s+(\d+)",
                        out, re.S)
    return [int(v) for p, v in blocks if int(p) == port]


def testpmd_once(seconds: float) -> float:
    prefix = f"znbench-tpmd{os.getpid()}"
    cmd = ["dpdk-testpmd", "-l", "0-1", "--no-pci", f"--file-prefix={prefix}",
           "--log-level=error"] + \
        [f"--vdev={p}" for p in P2P_PORTS] + \
        ["--", "-i", "--forward-mode=io", "--nb-cores=1",
         "--total-num-mbufs=32768"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        p.stdin.write("start\n")
        p.stdin.flush()
        time.sleep(1.0)
        t0 = time.monotonic()
        p.stdin.write("show port stats 1\n")
        p.stdin.flush()
        time.sleep(seconds)
        t1 = time.monotonic()
        p.stdin.write("show port stats 1\nstop\nquit\n")
        p.stdin.flush()
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
        shutil.rmtree(runtime_dir(prefix), ignore_errors=True)
        for f in HUGE_DIR.glob(f"{prefix}map_*"):
            f.unlink()
    tx = _tx_packets(out, 1)
    if len(tx) < 2:
        raise RuntimeError(f"cannot parse testpmd output:\n{out[-2000:]}")
    return (tx[1] - tx[0]) / (t1 - t0) / 1e6


def bench_p2p(runs: int) -> None:
    if shutil.which("dpdk-testpmd") is None:
        raise RuntimeError("dpdk-testpmd not found (Debian package dpdk-dev)")
    zn, tp = [], []
    for _ in range(runs):
        zn.append(zeronf_p2p_once(3.0))
        tp.append(testpmd_once(3.0))
        log(f"p2p: zeronf {zn[-1]:.3f} Mpps, testpmd {tp[-1]:.3f} Mpps")
    emit({"bench": "p2p", "zeronf_mpps": median(zn),
          "testpmd_mpps": median(tp),
          "ratio": round(statistics.median(zn) / statistics.median(tp), 3),
          "zeronf_runs": [round(x, 4) for x in zn],
          "testpmd_runs": [round(x, 4) for x in tp]})


# ---------------------------------------------------------------- idle
def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def idle_once(seconds: float) -> float:
    m = Manager(TMP, ports=["net_null0,no-rx=1"], chain="1,2,3,4,port:0")
    try:
        nfs = [m.start_nf("forward", s) for s in range(1, 5)]
        time.sleep(1.0)  # let start-up settle
        pids = [m.proc.pid] + [nf.proc.pid for nf in nfs]
        hz = os.sysconf("SC_CLK_TCK")
        t0, c0 = time.monotonic(), sum(cpu_ticks(p) for p in pids)
        time.sleep(seconds)
        t1, c1 = time.monotonic(), sum(cpu_ticks(p) for p in pids)
        return 100.0 * (c1 - c0) / hz / (t1 - t0)
    finally:
        m.shutdown()
        m.close()


def bench_idle(runs: int) -> None:
    res = [idle_once(10.0) for _ in range(runs)]
    log(f"idle: {res}")
    emit({"bench": "idle", "cpu_pct": median(res),
          "runs": [round(x, 3) for x in res]})


# ---------------------------------------------------------------- flowtable
def bench_flowtable(runs: int) -> None:
    """Lookup cost as the table grows (bench/ft_bench.c: medians of 5
    rounds of 2M random lookups per size)."""
    from harness import BUILD
    out = subprocess.run([str(BUILD / "bench/zn-ft-bench")], check=True,
                         capture_output=True, text=True, timeout=600).stdout
    for line in out.splitlines():
        if line.startswith("{"):
            emit(json.loads(line))


BENCHES = {"chain": bench_chain, "p2p": bench_p2p, "idle": bench_idle,
           "flowtable": bench_flowtable}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", choices=sorted(BENCHES))
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    try:
        for name, fn in BENCHES.items():
            if a.only in (None, name):
                fn(a.runs)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

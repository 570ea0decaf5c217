"""Data-path benchmarks: chain, p2p (against dpdk-testpmd), idle,
flowtable, flowdir, lb. Line formats: bench/run.py."""
from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from common import TMP, log, emit, median, cpu_pct, udp_frame
from harness import HUGE_DIR, Manager
from zeronf import runtime_dir


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


def chain_hops(n: int) -> str:
    """The chain of n NFs the speed tester loops through: forwards as
    services 2..n, then the tester (service 1)."""
    return ",".join([str(s) for s in range(2, n + 1)] + ["1"])


def tester_report(proc, seconds: float) -> dict:
    """The speed tester's last JSON line, once its run of @p seconds
    ended (its process's, or its bundle's)."""
    proc.wait(seconds + 30)
    return json.loads([ln for ln in proc.output().splitlines()
                       if ln.startswith("{")][-1])


def tester_line(n: int, tester_args: list[str], seconds: float,
                handoff: str = "direct") -> dict:
    """The speed tester's report through a chain of n NFs: forwards as
    services 2..n, the tester (service 1) last."""
    mgr_args, nf_args, _ = chain_layout(n)
    m = Manager(TMP, chain=chain_hops(n),
                args=mgr_args + ["--handoff", handoff])
    try:
        for s in range(2, n + 1):
            m.start_nf("forward", s, lib_args=nf_args[s])
        st = m.start_nf("speed-tester", 1, lib_args=nf_args[1],
                        nf_args=tester_args + ["-d", str(seconds),
                                               "-w", "1"])
        return tester_report(st.proc, seconds)
    finally:
        m.shutdown()
        m.close()


def chain_window(n: int) -> int:
    """Packets the tester keeps in flight through a chain of n: two bursts
    (2 x 128) per hop, at least 512. A closed loop's throughput is its
    window over its round trip (Little): with a fixed 512 a chain of 8
    NFs on 2 cores has 64 packets per hop, and every NF's turn on a core
    moves half a burst: the bench would measure context switches, not
    the data path. Two bursts per hop is what a saturated port gives
    every hop (rings hold 1024)."""
    return max(512, 256 * n)


def bundle_split(n: int) -> list[int]:
    """NFs per bundle for a chain of n in bundle mode: one bundle a core
    (the machine's first two), the chain cut in order: 8 -> [4, 4]."""
    k = min(len(os.sched_getaffinity(0)), 2, n)
    return [n // k + (i < n % k) for i in range(k)]


def bundle_line(n: int, seconds: float, tester_args: list[str] | None = None,
                split: list[int] | None = None) -> dict:
    """The speed tester's report through a chain of n NFs run as bundles
    (nfs/bundle/): forwards 2..n in chain order and the tester (service
    1, its start and end), cut into split (bundle_split(n)), each bundle
    one thread on a core of its own; every hop on a link, taken in the
    same pass inside a bundle."""
    m = Manager(TMP, chain=chain_hops(n))
    cpus = sorted(os.sched_getaffinity(0))
    tester = None
    if tester_args is None:
        tester_args = ["-n", str(chain_window(n))]
    try:
        # The last bundle first, and the tester last in its own: its init
        # sends the packets, to NFs that must be there (a bundle's NFs
        # start in order).
        first = n + 1
        for i, k in reversed(list(enumerate(split or bundle_split(n)))):
            first -= k
            members = [("forward", s, f"f{s}")
                       for s in range(max(first, 2), first + k)]
            if first == 1:
                members.append(("speed-tester", 1, "tester", tester_args +
                                ["-d", str(seconds), "-w", "1"]))
            b = m.start_bundle(members, name=f"b{i}", lib_args=[
                "--cpus", str(cpus[i % len(cpus)])])
            if first == 1:
                tester = b
        return tester_report(tester.proc, seconds)
    finally:
        m.shutdown()
        m.close()


def chain_once(n: int, seconds: float, handoff: str = "direct") -> dict:
    return {**tester_line(n, ["-n", str(chain_window(n))], seconds,
                          handoff),
            "workers": chain_layout(n)[2]}


def bench_chain(runs: int) -> None:
    """Each chain length in three modes, interleaved in the same run:
    NFs as processes handing packets to each other (the default), every
    hop through a worker (--handoff worker), and NFs bundled
    (bundle_line). The bundle lines also give chain n / chain 2 in
    that mode."""
    bundled: dict[int, float] = {}
    chain2 = 0.0
    for n in (1, 2, 4, 8):
        res, base, bun = [], [], []
        for _ in range(runs):
            res.append(chain_once(n, 2.0))
            base.append(chain_once(n, 2.0, "worker")["mpps"])
            if n > 1:
                bun.append(bundle_line(n, 2.0))
        mpps = [r["mpps"] for r in res]
        log(f"chain {n}: {mpps}, through a worker: {base}, bundled: "
            f"{[r['mpps'] for r in bun]}")
        line = {"bench": "chain", "mode": "process", "nfs": n,
                "mpps": median(mpps), "cpus": len(os.sched_getaffinity(0)),
                "workers": res[0]["workers"], "window": chain_window(n),
                "latency_p50_ns": int(statistics.median(
                    r["latency_ns"]["p50"] for r in res)),
                "latency_p99_ns": int(statistics.median(
                    r["latency_ns"]["p99"] for r in res)),
                "worker_mpps": median(base), "runs": mpps}
        emit(line)
        if n == 2:
            chain2 = line["mpps"]
        emit({"bench": "chain", "mode": "worker", "nfs": n,
              "mpps": median(base), "runs": base})
        if not bun:
            continue
        bundled[n] = median([r["mpps"] for r in bun])
        out = {"bench": "chain", "mode": "bundle", "nfs": n,
               "mpps": bundled[n], "bundles": bundle_split(n),
               "window": chain_window(n),
               "latency_p50_ns": int(statistics.median(
                   r["latency_ns"]["p50"] for r in bun)),
               "runs": [r["mpps"] for r in bun]}
        if n > 2 and bundled.get(2):
            out["of_chain_2"] = round(bundled[n] / bundled[2], 3)
            out["of_process_chain_2"] = round(bundled[n] / chain2, 3)
            if n == 8:
                out["target"] = 0.25
        emit(out)


# ---------------------------------------------------------------- latency
def bench_latency(runs: int) -> None:
    """One-way latency through chains of 1, 2, 4 at 10 % and 50 % of the
    chain's peak: the speed tester as an open-loop generator (--rate),
    timestamping each packet it makes and measuring it when it comes back
    from the chain's last hop (itself: the same clock). The peak is the
    closed-loop rate measured just before (512 packets circulating). In
    two modes, interleaved: NFs as processes, and the chain as one
    bundle (one thread: bundle_line)."""
    modes = {
        "process": lambda n, a: tester_line(n, a, 2.0),
        "bundle": lambda n, a: bundle_line(n, 2.0, a, [n]),
    }
    for n in (1, 2, 4):
        for mode, line in modes.items():
            latency_lines(n, mode, line, runs)


def latency_lines(n: int, mode: str, line, runs: int) -> None:
    res: dict[int, list[dict]] = {10: [], 50: []}
    peaks = []
    for _ in range(runs):
        peak = line(n, ["-n", "512"])["mpps"]
        peaks.append(peak)
        for load in (10, 50):
            rate = int(peak * 1e6 * load / 100)
            res[load].append(line(n, ["-r", str(rate)]))
            r = res[load][-1]
            log(f"latency chain {n} ({mode}) at {load} % of {peak:.2f} "
                f"Mpps: offered {r['offered_mpps']:.3f}, delivered "
                f"{r['mpps']:.3f} Mpps, p50 {r['latency_ns']['p50']} "
                f"p99 {r['latency_ns']['p99']} ns")
    for load in (10, 50):
        rs = sorted(res[load], key=lambda r: r["latency_ns"]["p50"])
        mid = rs[len(rs) // 2]
        out = {"bench": "latency", "mode": mode, "nfs": n,
               "load_pct": load, "peak_mpps": median(peaks),
               "rate_mpps": median([r["offered_mpps"] for r in rs]),
               "delivered_mpps": median([r["mpps"] for r in rs]),
               "p50_ns": int(statistics.median(
                   r["latency_ns"]["p50"] for r in rs)),
               "p99_ns": int(statistics.median(
                   r["latency_ns"]["p99"] for r in rs)),
               "cdf_ns": mid["cdf_ns"]}
        if n == 2 and load == 10:
            out["target_p50_ns"] = 5000
        emit(out)


# ---------------------------------------------------------------- p2p
P2P_PORTS = ["net_null0", "net_null1,no-rx=1"]


# How a packet gets from port 0 into the forward NF (docs/architecture.md
# "How a packet travels"): a worker polls the port and hands it
# over, or the NF owns the port's RX queue (--nf-rx-queues), or the NF
# runs in a bundle (zeronf-bundle, here of one NF) owning the queue.
P2P_MODES = {"worker": [], "nf_rx": ["--nf-rx-queues", "1"],
             "bundle": ["--nf-rx-queues", "1"]}


def zeronf_p2p_once(seconds: float, ports: list[str] = P2P_PORTS,
                    mode: str = "worker") -> float:
    m = Manager(TMP, ports=ports, chain="1,port:1", rx_paused=True,
                args=P2P_MODES[mode])
    try:
        if mode == "bundle":
            m.start_bundle([("forward", 1, "forward1")])
        else:
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


def testpmd_once(seconds: float, ports: list[str] = P2P_PORTS,
                 mode: str = "io") -> float:
    prefix = f"znbench-tpmd{os.getpid()}"
    cmd = ["dpdk-testpmd", "-l", "0-1", "--no-pci", f"--file-prefix={prefix}",
           "--log-level=error"] + \
        [f"--vdev={p}" for p in ports] + \
        ["--", "-i", f"--forward-mode={mode}", "--nb-cores=1",
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
    """Each ZeroNF mode and testpmd interleaved in every run, so that the
    ratios compare what one sitting of this machine gave."""
    if shutil.which("dpdk-testpmd") is None:
        raise RuntimeError("dpdk-testpmd not found (Debian package dpdk-dev)")
    zn: dict[str, list[float]] = {mode: [] for mode in P2P_MODES}
    tp = []
    for _ in range(runs):
        for mode in P2P_MODES:
            zn[mode].append(zeronf_p2p_once(3.0, mode=mode))
        tp.append(testpmd_once(3.0))
        log("p2p: " + ", ".join(f"zeronf {mode} {v[-1]:.3f}"
                                for mode, v in zn.items()) +
            f", testpmd {tp[-1]:.3f} Mpps")
    for mode, v in zn.items():
        emit({"bench": "p2p", "mode": mode, "zeronf_mpps": median(v),
              "testpmd_mpps": median(tp),
              "ratio": round(statistics.median(v) / statistics.median(tp),
                             3),
              "target": 0.9 if mode != "worker" else None,
              "zeronf_runs": [round(x, 4) for x in v],
              "testpmd_runs": [round(x, 4) for x in tp]})


def idle_once(seconds: float, flows: int = 0,
              args: list[str] | None = None, bundle: bool = False) -> float:
    m = Manager(TMP, ports=["net_null0,no-rx=1"], chain="1,2,3,4,port:0",
                args=args or [])
    try:
        if bundle:  # the 4 NFs in one thread
            nfs = [m.start_bundle([("forward", s, f"f{s}")
                                   for s in range(1, 5)])]
        else:
            nfs = [m.start_nf("forward", s) for s in range(1, 5)]
        items = list(itertools.islice(flow_items(["svc:1", "port:0"]),
                                      flows))
        with m.client() as c:
            for i in range(0, len(items), 300):
                c.call("flow.add", flows=items[i:i + 300])
        time.sleep(1.0)  # let start-up settle
        return cpu_pct([m.proc.pid] + [nf.proc.pid for nf in nfs],
                       seconds)
    finally:
        m.shutdown()
        m.close()


def bench_idle(runs: int) -> None:
    res = [idle_once(10.0) for _ in range(runs)]
    log(f"idle: {res}")
    emit({"bench": "idle", "cpu_pct": median(res),
          "runs": [round(x, 3) for x in res]})
    # The same with N_FLOWS exact rules waiting to expire (the control
    # thread's expiry passes).
    res = [idle_once(10.0, N_FLOWS) for _ in range(runs)]
    log(f"idle with {N_FLOWS} flows: {res}")
    emit({"bench": "idle", "flows": N_FLOWS, "cpu_pct": median(res),
          "runs": [round(x, 3) for x in res]})
    # The first NF owning the port's RX queues (run to completion at
    # ingress): no doorbell rings for a port, it polls them again after
    # sleeps of up to 1 ms.
    res = [idle_once(10.0, args=["--nf-rx-queues", "2"])
           for _ in range(runs)]
    log(f"idle, the first NF owning the port's RX queues: {res}")
    emit({"bench": "idle", "mode": "nf_rx", "cpu_pct": median(res),
          "runs": [round(x, 3) for x in res]})
    # The 4 NFs bundled in one thread (which sleeps on their 4 doorbells
    # at once), owning the port's RX queues.
    res = [idle_once(10.0, args=["--nf-rx-queues", "2"], bundle=True)
           for _ in range(runs)]
    log(f"idle, the 4 NFs in a bundle owning the port's RX queues: {res}")
    emit({"bench": "idle", "mode": "bundle", "cpu_pct": median(res),
          "target": 3.0, "runs": [round(x, 3) for x in res]})


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


# ---------------------------------------------------------------- flowdir, lb
N_FLOWS = 100_000


def flows_trace(size: int = 60) -> Path:
    """N_FLOWS distinct UDP flows, one frame of @size bytes each."""
    from pcaputil import write_pcap
    path = TMP / f"flows100k-{size}.pcap"
    if not path.exists():
        write_pcap(path, (udp_frame(bytes([10, 0, i >> 8 & 255, i & 255]),
                                    bytes([10, 1, 0, 1]), 1024 + i % 50000,
                                    80, size) for i in range(N_FLOWS)))
    return path


def flow_items(chain: list[str]):
    for i in range(N_FLOWS):
        yield {"flow": {"proto": "udp", "src": f"10.0.{i >> 8 & 255}.{i & 255}",
                        "dst": "10.1.0.1", "sport": 1024 + i % 50000,
                        "dport": 80}, "chain": chain}


def trace_manager(args: list[str], size: int = 60) -> tuple[Manager, int]:
    m = Manager(TMP, ports=[f"net_pcap0,rx_pcap={flows_trace(size)},"
                            "infinite_rx=1",
                            "net_null0,no-rx=1"],
                chain="1,port:1", rx_paused=True,
                args=["--pool-size", "131071", "--mem", "1024"] + args)
    return m, m.pool()["in_use"]


def rate(m: Manager, seconds: float) -> float:
    time.sleep(1.0)  # warm up
    t0, a = time.monotonic(), m.call("port.list")["ports"][1]["tx"]
    time.sleep(seconds)
    t1, b = time.monotonic(), m.call("port.list")["ports"][1]["tx"]
    return (b - a) / (t1 - t0) / 1e6


def flowdir_once(mode: str, seconds: float, size: int = 60) -> float:
    # The worker keeps a core, as in lb: floating, runs of one build fell
    # in two groups (13 and 19 Mpps) by where the scheduler put the NF.
    mgr_args, nf_args = lb_layout(1)
    m, _ = trace_manager(mgr_args + (["--fdir-rehash"]
                                     if mode == "naive_rehash" else []),
                         size)
    try:
        m.start_nf("forward", 1, lib_args=nf_args[0])
        if mode != "default_chain":
            items = list(flow_items(["svc:1", "port:1"]))
            with m.client() as c:
                for i in range(0, len(items), 300):
                    c.call("flow.add", flows=items[i:i + 300])
            assert m.call("flow.list", limit=0)["count"] == N_FLOWS
        m.call("rx.set", enabled=True)
        r = rate(m, seconds)
        if mode != "default_chain":  # every packet hit a rule
            fd = m.call("stats")["fdir"]
            assert fd["misses"] == 0 and fd["exact_hits"] > 0, fd
        return r
    finally:
        m.shutdown()
        m.close()


def bench_flowdir(runs: int) -> None:
    modes = ["default_chain", "flow_table", "naive_rehash"]
    res: dict[str, list[float]] = {k: [] for k in modes}
    for _ in range(runs):
        for mode in modes:
            res[mode].append(flowdir_once(mode, 3.0))
            log(f"flowdir {mode}: {res[mode][-1]:.3f} Mpps")
    base = statistics.median(res["default_chain"])
    for mode in modes:
        emit({"bench": "flowdir", "mode": mode, "mpps": median(res[mode]),
              "flows": N_FLOWS,
              "vs_default": round(statistics.median(res[mode]) / base, 3),
              "runs": [round(x, 4) for x in res[mode]]})


def lb_layout(r: int) -> tuple[list[str], list[list[str]]]:
    """Manager args and per-replica NF args: every traffic crosses the
    manager's one worker, so it keeps a core of its own; replicas get a
    core each where there are enough, else they share the others (and
    batch their turns, see nf_run.c). Floating all of them over 2 cores
    measured 5 Mpps for 2 replicas instead of 20."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return [], [[] for _ in range(r)]
    if len(cpus) >= r + 2:
        return (["--cpus", f"{cpus[0]},{cpus[1]}"],
                [["--cpus", str(cpus[2 + i])] for i in range(r)])
    rest = ",".join(str(c) for c in cpus[:-1])
    return ["--cpus", str(cpus[-1])], [["--cpus", rest] for _ in range(r)]


def lb_once(replicas: int, seconds: float) -> tuple[float, float]:
    mgr_args, nf_args = lb_layout(replicas)
    m, _ = trace_manager(mgr_args)
    try:
        for i in range(replicas):
            m.start_nf("forward", 1, f"r{i}", lib_args=nf_args[i])
        m.call("rx.set", enabled=True)
        time.sleep(1.0)
        r0 = {n["instance"]: n["rx"] for n in m.call("nf.list")["nfs"]}
        mpps = rate(m, seconds)
        r1 = {n["instance"]: n["rx"] for n in m.call("nf.list")["nfs"]}
        d = [r1[k] - r0[k] for k in r1]
        return mpps, max(d) / sum(d)
    finally:
        m.shutdown()
        m.close()


def bench_lb(runs: int) -> None:
    for r in (1, 2, 4):
        res = [lb_once(r, 3.0) for _ in range(runs)]
        log(f"lb {r}: {res}")
        emit({"bench": "lb", "replicas": r,
              "mpps": median([x[0] for x in res]),
              "max_share": round(statistics.median(x[1] for x in res), 3),
              "runs": [round(x[0], 4) for x in res]})

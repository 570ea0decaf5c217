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
         NFs over 10 s, in % of one core; again with 100k exact flow rules
         installed ({"bench":"idle","flows":100000,...}).
  flowtable {"bench":"flowtable","flows":N,"ns_per_lookup_burst":X,...}:
         flow table lookup cost for N = 1k, 10k, 100k, 1M flows.
  flowdir {"bench":"flowdir","mode":M,"mpps":X}: a 100k-flow trace
         (64-byte UDP, replayed from memory) through one forward NF to
         net_null. default_chain: no rules; flow_table: 100k exact rules
         (the same path as a per-flow chain), looked up once per packet at
         ingress with the stored flow hash; naive_rehash: the same rules,
         but every packet's header is parsed, hashed and looked up again
         at every hop (--fdir-rehash, OpenNetVM's way).
  dpi    {"bench":"dpi","mode":M,"mpps":X}: the nDPI test captures (those
         with Ethernet framing, concatenated) classified by the dpi NF on
         ZeroNF (M = zeronf), by the same classifier reading the file with
         libpcap (libpcap) and by ndpiReader 4.2 (ndpireader).
  router {"bench":"router","prefixes":512621,"mpps":X}: the router NF
         with the RouteViews table, 64-byte packets to random IPv4
         destinations (net_pcap replay -> router -> net_null).
  route_load {"bench":"route_load","prefixes":N,"load_s":X,
         "lookup_mpps":Y,"lpm_lookup_mpps":Z}: the router's route tables
         (rte_fib) loading the RouteViews table and a synthetic 1M-prefix
         one; lookups in bursts of 32 on a 5000-address sample, against
         rte_lpm (the router's tables before) in the same run.
  soak   {"bench":"soak","seconds":S,...,"rss_kb_start":A,"rss_kb_end":B,
         "hugepage_mb_start":C,"hugepage_mb_end":D,"buffers_leaked":0,
         "crashes":0}: SOAK_S seconds (default 600) of NF kills and
         restarts, LB mode, chain and flow-rule churn under traffic.
  flowmon {"bench":"flowmon","flows":F,"mpps":X}: 1M 64-byte packets over
         F = 1k or 1M flows, read from a file by net_pcap, through flowmon.
  nf_start {"bench":"nf_start","sandboxed":true|false,"p50_ms":X,
         "p99_ms":Y}: 20 starts each of an NF the manager launches
         (nf.start), sandboxed or not, from the command to the NF's first
         packet (bench/nf_start.py).
  lb     {"bench":"lb","replicas":R,"mpps":X,"max_share":S}: the same
         trace, R = 1, 2, 4 forward replicas of one service (hash mode, no
         RSS); max_share = the busiest replica's share of the packets. The
         manager's worker keeps a core; replicas share the others where
         there are fewer cores than replicas (lb_layout).
"""

from __future__ import annotations

import argparse
import itertools
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
sys.path.insert(0, str(REPO / "bench"))

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


def idle_once(seconds: float, flows: int = 0) -> float:
    m = Manager(TMP, ports=["net_null0,no-rx=1"], chain="1,2,3,4,port:0")
    try:
        nfs = [m.start_nf("forward", s) for s in range(1, 5)]
        items = list(itertools.islice(flow_items(["svc:1", "port:0"]),
                                      flows))
        with m.client() as c:
            for i in range(0, len(items), 300):
                c.call("flow.add", flows=items[i:i + 300])
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
    # The same with N_FLOWS exact rules waiting to expire (the control
    # thread's expiry passes).
    res = [idle_once(10.0, N_FLOWS) for _ in range(runs)]
    log(f"idle with {N_FLOWS} flows: {res}")
    emit({"bench": "idle", "flows": N_FLOWS, "cpu_pct": median(res),
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


# ---------------------------------------------------------------- traces
def udp_frame(src: bytes, dst: bytes, sport: int, dport: int) -> bytes:
    """A 60-byte Ethernet / IPv4 / UDP frame (checksums left 0)."""
    import struct
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 46, 0, 0, 64, 17, 0, src, dst)
    fr = (b"\x02\0\0\0\0\x01\x02\0\0\0\0\x02\x08\x00" + ip +
          struct.pack("!HHHH", sport, dport, 26, 0))
    return fr + bytes(60 - len(fr))


# ---------------------------------------------------------------- dpi
def dpi_trace() -> tuple[Path, int]:
    """The nDPI 4.2 test captures with Ethernet framing, one after the
    other in one pcap (times shifted so that each starts 1 s after the
    previous ended): the same packets for every mode."""
    from harness import CORPORA
    from pcaputil import linktype, write_pcap
    from scapy.utils import RawPcapReader

    def ts(m) -> float:
        if hasattr(m, "sec"):
            return m.sec + m.usec / 1e6
        return ((m.tshigh << 32) | m.tslow) / m.tsresol

    def records():
        t_next = 1_000_000_000.0
        for pc in sorted((CORPORA / "ndpi-4.2/pcap").glob("*")):
            if linktype(pc) != 1:
                continue
            with RawPcapReader(str(pc)) as r:
                recs = [(bytes(d), m) for d, m in r]
            if not recs:
                continue
            t0, last = ts(recs[0][1]), t_next
            for d, m in recs:
                last = max(last, t_next + ts(m) - t0)  # never backwards
                us = int(last) * 1_000_000 + int((last - int(last)) * 1e6)
                yield us, d, getattr(m, "wirelen", len(d))
            t_next = last + 1.0

    path = TMP / "dpi.pcap"
    return path, write_pcap(path, records())


def dpi_zeronf_once(trace: Path, n: int) -> float:
    from harness import wait_for
    m = Manager(TMP, ports=[f"net_pcap0,rx_pcap={trace}", "net_null0,no-rx=1"],
                chain="1,port:1", rx_paused=True,
                args=["--rx-timestamp", "--pool-size", "65535"])
    try:
        m.start_nf("dpi", 1, nf_args=[
            "--proto-dir", str(REPO / "nfs/dpi/ndpi-4.2"), "--capture-time",
            "--idle-s", "0"])
        t0 = time.monotonic()
        m.call("rx.set", enabled=True)
        wait_for(lambda: m.call("port.list")["ports"][1]["tx"] == n, 120,
                 "the trace through the dpi NF", interval=0.002)
        return n / (time.monotonic() - t0) / 1e6
    finally:
        m.shutdown()
        m.close()


def dpi_libpcap_once(trace: Path) -> float:
    from harness import BUILD
    out = subprocess.run([str(BUILD / "nfs/zeronf-dpi-pcap"), "-i", str(trace),
                          "-d", str(REPO / "nfs/dpi/ndpi-4.2"), "-t"],
                         check=True, capture_output=True, text=True,
                         timeout=300).stdout
    return json.loads(out.strip().splitlines()[-1])["mpps"]


def dpi_ndpireader_once(trace: Path) -> float:
    """ndpiReader's own measure: packets / its packet processing time."""
    d = REPO / "nfs/dpi/ndpi-4.2"
    out = subprocess.run(["ndpiReader", "-i", str(trace), "-t",
                          "-p", str(d / "protos.txt"),
                          "-c", str(d / "categories.txt")],
                         check=True, capture_output=True, text=True,
                         timeout=300).stdout
    m = re.search(r"nDPI throughput:\s+([\d.]+) ([KMG]?) ?pps", out)
    if m is None:
        raise RuntimeError(f"no throughput in ndpiReader output:\n{out}")
    return float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[
        m.group(2)] / 1e6


def bench_dpi(runs: int) -> None:
    """The same capture set through the dpi NF on ZeroNF (net_pcap ->
    manager -> NF -> net_null; time until the last packet left), the same
    classifier on libpcap (its read-and-classify loop), and ndpiReader
    (its packet processing time); interleaved runs."""
    trace, n = dpi_trace()
    res: dict[str, list[float]] = {"zeronf": [], "libpcap": [],
                                   "ndpireader": []}
    for _ in range(runs):
        res["zeronf"].append(dpi_zeronf_once(trace, n))
        res["libpcap"].append(dpi_libpcap_once(trace))
        res["ndpireader"].append(dpi_ndpireader_once(trace))
        log(f"dpi: {[(k, round(v[-1], 3)) for k, v in res.items()]}")
    for mode, v in res.items():
        emit({"bench": "dpi", "mode": mode, "mpps": median(v),
              "packets": n, "runs": [round(x, 4) for x in v]})


# ---------------------------------------------------------------- router
def router_inputs() -> tuple[Path, Path, int]:
    """The RouteViews table as a route file, and a trace of 65536 64-byte
    UDP packets to uniformly random IPv4 destinations."""
    import gzip
    import random
    from harness import CORPORA
    from pcaputil import write_pcap
    routes = TMP / "ipasn.txt"
    with gzip.open(CORPORA / "routing/ipasn_20140513.dat.gz", "rb") as f:
        routes.write_bytes(f.read())
    n = sum(1 for ln in routes.read_text().splitlines()
            if ln and not ln.startswith(";"))
    trace = TMP / "random_dst.pcap"
    rnd = random.Random(20140513)
    write_pcap(trace, (udp_frame(bytes([10, 0, 0, 1]),
                                 rnd.getrandbits(32).to_bytes(4, "big"),
                                 1024, 80) for _ in range(65536)))
    return routes, trace, n


def router_once(routes: Path, trace: Path, seconds: float) -> float:
    """Packets through the router NF per second (routed or dropped as
    no_route: about 40 % of random addresses have no route)."""
    m = Manager(TMP, ports=[f"net_pcap0,rx_pcap={trace},infinite_rx=1",
                            "net_null0,no-rx=1"],
                chain="1", rx_paused=True,
                args=["--mem", "1024", "--pool-size", "131071"])
    try:
        m.start_nf("router", 1, nf_args=["--routes", str(routes),
                                         "--default-port", "1"])
        m.call("rx.set", enabled=True)
        time.sleep(1.0)
        a, t0 = m.call("nf.list")["nfs"][0]["rx"], time.monotonic()
        time.sleep(seconds)
        b, t1 = m.call("nf.list")["nfs"][0]["rx"], time.monotonic()
        return (b - a) / (t1 - t0) / 1e6
    finally:
        m.shutdown()
        m.close()


def bench_router(runs: int) -> None:
    routes, trace, n = router_inputs()
    res = [router_once(routes, trace, 3.0) for _ in range(runs)]
    log(f"router: {res}")
    emit({"bench": "router", "prefixes": n, "mpps": median(res),
          "destinations": "random", "runs": [round(x, 4) for x in res]})


# ---------------------------------------------------------------- route_load
def synth_table(path: Path, n: int, seed: int = 2026) -> None:
    """n distinct IPv4 prefixes shaped like today's BGP table (about 60 %
    /24, then /22, /23, /21, /20 ...; a few shorter than /16), origin AS
    numbers of a 75,000-AS pool as next hops."""
    import random
    rnd = random.Random(seed)
    depths = [24] * 60 + [22] * 10 + [23] * 9 + [21] * 5 + [20] * 5 + \
        [19] * 3 + [16] * 2 + [18] * 2 + [17] * 2 + [15, 14, 13, 12]
    seen: set[tuple[int, int]] = set()
    with open(path, "w") as f:
        f.write("; synthetic table for the route_load bench\n")
        while len(seen) < n:
            d = rnd.choice(depths)
            a = rnd.randrange(1 << 24, 224 << 24) & (~0 << (32 - d))
            if (a, d) in seen:
                continue
            seen.add((a, d))
            f.write(f"{a >> 24}.{a >> 16 & 255}.{a >> 8 & 255}.{a & 255}"
                    f"/{d}\t{rnd.randrange(1, 75000)}\n")


def table_sample(routes: Path, path: Path, n: int = 5000) -> None:
    """n addresses: four in five inside a prefix of the table, the rest
    uniformly random."""
    import ipaddress
    import random
    rnd = random.Random(5000)
    pfx = [ln.split()[0] for ln in routes.read_text().splitlines()
           if ln and ln[0] not in "#;" and ":" not in ln]
    out = []
    for i in range(n):
        if i % 5:
            net = ipaddress.IPv4Network(rnd.choice(pfx), strict=False)
            out.append(str(net.network_address +
                           rnd.randrange(net.num_addresses)))
        else:
            out.append(str(ipaddress.IPv4Address(rnd.getrandbits(32))))
    path.write_text("\n".join(out) + "\n")


def bench_route_load(runs: int) -> None:
    """The router's tables loading the RouteViews table (512,621 prefixes,
    looked up on the independent 5000-address sample) and a synthetic
    1M-prefix table; lookups against rte_lpm in the same run
    (bench/route_bench.c: medians of 5 loads and 5 lookup rounds)."""
    import gzip
    from harness import BUILD, CORPORA
    del runs  # the C program takes its own medians
    tables = []
    rv = CORPORA / "routing"
    if rv.exists():
        routes = TMP / "ipasn.txt"
        with gzip.open(rv / "ipasn_20140513.dat.gz", "rb") as f:
            routes.write_bytes(f.read())
        sample = TMP / "rv_sample.txt"
        sample.write_text("\n".join(
            ln.split("\t")[0] for ln in
            (rv / "lpm_sample_5000_ipasn_20140513.tsv").read_text()
            .splitlines()[1:]) + "\n")
        tables.append((routes, sample))
    else:
        log("route_load: no ../shared/corpora/routing: RouteViews skipped")
    synth = TMP / "synth_1m.txt"
    synth_table(synth, 1_000_000)
    sample = TMP / "synth_sample.txt"
    table_sample(synth, sample)
    tables.append((synth, sample))
    for routes, sample in tables:
        r = subprocess.run([str(BUILD / "bench/zn-route-bench"),
                            str(routes), str(sample)], capture_output=True,
                           text=True, timeout=1200)
        log(r.stderr.strip())
        if r.returncode != 0:
            raise RuntimeError(f"zn-route-bench failed: {r.stderr}")
        for line in r.stdout.splitlines():
            if line.startswith("{"):
                emit(json.loads(line))


# ---------------------------------------------------------------- soak
def telemetry_json(name: str, cmd: str) -> dict:
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(f"{runtime_dir(name)}/dpdk_telemetry.v2")
    try:
        s.recv(4096)
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 20))
    finally:
        s.close()


def soak_sample(m: Manager) -> dict:
    """The manager's resident memory and its DPDK heap in use (the
    hugepages: packet pool, rings, tables, NFs' tables it holds)."""
    rss = 0
    for line in Path(f"/proc/{m.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    heap = telemetry_json(m.name, "/eal/heap_info,0")["/eal/heap_info"]
    return {"rss_kb": rss, "heap_mb": round(heap["Alloc_size"] / 2**20, 2)}


def bench_soak(runs: int) -> None:
    """SOAK_S seconds (default 600) of churn under traffic: every ~2 s an
    NF killed with -9 or stopped and started again (forward replicas, a
    monitor, flowmon with its flow table), the balancing mode or the
    default chain changed, 500 exact flow rules and a wildcard rule
    installed and removed. Start and end taken in the same state (all NFs
    up, traffic flowing, a minute in); the pool checked once traffic
    stops: buffers_leaked = buffers not back; crashes = the manager's
    exit or deaths we did not cause."""
    import random
    del runs
    seconds = float(os.environ.get("SOAK_S", "600"))
    rnd = random.Random(1)
    m, base = trace_manager([])
    kills = stops = actions = 0
    try:
        m.call("chain.set", hops=["svc:1", "svc:2", "svc:3", "port:1"])
        nfs = {"r0": ("forward", 1, []), "r1": ("forward", 1, []),
               "mon": ("monitor", 2, []),
               "fm": ("flowmon", 3, ["--capacity", "200000"])}
        live = {k: m.start_nf(kind, svc, k, nf_args=args)
                for k, (kind, svc, args) in nfs.items()}
        m.call("rx.set", enabled=True)
        time.sleep(min(60.0, seconds / 10))
        start, t_start = soak_sample(m), time.monotonic()
        tx0 = m.call("port.list")["ports"][1]["tx"]
        deadline = t_start + seconds
        modes = ["hash", "least_loaded", "weighted"]
        rule_ids: list[int] = []
        batch: list[dict] = []
        while time.monotonic() < deadline:
            act = actions % 5
            if act in (0, 1):  # an NF killed or stopped, then back
                name = rnd.choice(sorted(live))
                nf = live[name]
                nf.proc.signal(9 if act == 0 else 15)
                nf.proc.wait(20)
                kills += act == 0
                stops += act == 1
                kind, svc, args = nfs[name]
                live[name] = m.start_nf(kind, svc, name, nf_args=args)
            elif act == 2:
                mode = modes[actions // 5 % 3]
                kw = {"weights": {str(n.instance): rnd.randint(1, 5)
                                  for k, n in live.items()
                                  if nfs[k][1] == 1}} \
                    if mode == "weighted" else {}
                m.call("service.set", service=1, lb=mode, **kw)
                m.call("chain.set", hops=(
                    ["svc:1", "svc:2", "svc:3", "port:1"] if actions % 2
                    else ["svc:1", "svc:3", "port:1"]))
            elif act == 3:  # exact rules churned
                if batch:
                    m.call("flow.del", flows=[{"flow": f["flow"]}
                                              for f in batch])
                batch = [{"flow": {"proto": "udp",
                                   "src": f"10.0.{i >> 8 & 255}.{i & 255}",
                                   "dst": "10.1.0.1",
                                   "sport": 1024 + i % 50000, "dport": 80},
                          "chain": ["svc:2", "svc:1", "port:1"]}
                         for i in rnd.sample(range(N_FLOWS), 500)]
                m.call("flow.add", flows=batch)
            else:  # a wildcard rule in, the oldest out
                rule_ids.append(m.call("rule.add", match={
                    "proto": "udp", "dport": rnd.randint(1, 1000)},
                    chain=["svc:1", "port:1"], priority=5)["id"])
                if len(rule_ids) > 3:
                    m.call("rule.del", id=rule_ids.pop(0))
            actions += 1
            time.sleep(2.0)
        # the same state as at the start: every NF up, rules back to none
        if batch:
            m.call("flow.del", flows=[{"flow": f["flow"]} for f in batch])
        for rid in rule_ids:
            m.call("rule.del", id=rid)
        m.call("chain.set", hops=["svc:1", "svc:2", "svc:3", "port:1"])
        time.sleep(5.0)
        end = soak_sample(m)
        tx1 = m.call("port.list")["ports"][1]["tx"]
        mpps = (tx1 - tx0) / (time.monotonic() - t_start) / 1e6
        m.call("rx.set", enabled=False)
        st = m.wait_idle(timeout=60, baseline=base)
        leaked = st["status"]["pool"]["in_use"] - base
        died = st["status"]["registry"]["died"]
        crashes = (0 if m.proc.alive() else 1) + max(0, died - kills)
    finally:
        m.shutdown()
        m.close()
    log(f"soak: {actions} actions, {kills} kills, {stops} stops")
    emit({"bench": "soak", "seconds": round(seconds), "actions": actions,
          "nf_kills": kills, "nf_stops": stops,
          "rss_kb_start": start["rss_kb"], "rss_kb_end": end["rss_kb"],
          "hugepage_mb_start": start["heap_mb"],
          "hugepage_mb_end": end["heap_mb"], "buffers_leaked": leaked,
          "crashes": crashes, "mpps": round(mpps, 3)})


# ---------------------------------------------------------------- flowmon
FLOWMON_PKTS = 1_000_000


def flowmon_trace(flows: int) -> Path:
    """FLOWMON_PKTS 64-byte UDP packets cycling over `flows` flows."""
    from pcaputil import write_pcap
    path = TMP / f"flowmon{flows}.pcap"
    if not path.exists():
        # a microsecond apart
        write_pcap(path, ((1_600_000_000_000_000 + k, udp_frame(
            bytes([10, k % flows >> 16 & 255, k % flows >> 8 & 255,
                   k % flows & 255]), bytes([10, 255, 0, 1]),
            1024 + k % flows % 7, 53)) for k in range(FLOWMON_PKTS)))
    return path


def flowmon_once(flows: int) -> float:
    from harness import wait_for
    trace = flowmon_trace(flows)
    m = Manager(TMP, ports=[f"net_pcap0,rx_pcap={trace}", "net_null0,no-rx=1"],
                chain="1,port:1", rx_paused=True,
                args=["--rx-timestamp", "--mem", "1024"])
    try:
        m.start_nf("flowmon", 1, nf_args=["--capacity", str(1 << 20),
                                          "--capture-time", "--idle-s", "0"])
        t0 = time.monotonic()
        m.call("rx.set", enabled=True)
        wait_for(lambda: m.call("port.list")["ports"][1]["tx"] ==
                 FLOWMON_PKTS, 120, "the trace through flowmon",
                 interval=0.005)
        return FLOWMON_PKTS / (time.monotonic() - t0) / 1e6
    finally:
        m.shutdown()
        m.close()


def bench_flowmon(runs: int) -> None:
    """1M packets over F flows, replayed once from the file by net_pcap,
    through flowmon (its table holds up to 1M flows); mpps = packets /
    time until the last one left."""
    for flows in (1000, 1_000_000):
        res = [flowmon_once(flows) for _ in range(runs)]
        log(f"flowmon {flows}: {res}")
        emit({"bench": "flowmon", "flows": flows, "mpps": median(res),
              "packets": FLOWMON_PKTS, "runs": [round(x, 4) for x in res]})


# ---------------------------------------------------------------- flowdir, lb
N_FLOWS = 100_000


def flows_trace() -> Path:
    """N_FLOWS distinct UDP flows, one 60-byte frame each."""
    from pcaputil import write_pcap
    path = TMP / "flows100k.pcap"
    if not path.exists():
        write_pcap(path, (udp_frame(bytes([10, 0, i >> 8 & 255, i & 255]),
                                    bytes([10, 1, 0, 1]), 1024 + i % 50000,
                                    80) for i in range(N_FLOWS)))
    return path


def flow_items(chain: list[str]):
    for i in range(N_FLOWS):
        yield {"flow": {"proto": "udp", "src": f"10.0.{i >> 8 & 255}.{i & 255}",
                        "dst": "10.1.0.1", "sport": 1024 + i % 50000,
                        "dport": 80}, "chain": chain}


def trace_manager(args: list[str]) -> tuple[Manager, int]:
    m = Manager(TMP, ports=[f"net_pcap0,rx_pcap={flows_trace()},infinite_rx=1",
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


def flowdir_once(mode: str, seconds: float) -> float:
    # The worker keeps a core, as in lb: floating, runs of one build fell
    # in two groups (13 and 19 Mpps) by where the scheduler put the NF.
    mgr_args, nf_args = lb_layout(1)
    m, _ = trace_manager(mgr_args + (["--fdir-rehash"]
                                     if mode == "naive_rehash" else []))
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


def bench_nf_start(runs: int) -> None:
    from nf_start import bench_nf_start as run
    run(runs, TMP, emit, log)


BENCHES = {"chain": bench_chain, "p2p": bench_p2p, "idle": bench_idle,
           "dpi": bench_dpi, "router": bench_router,
           "route_load": bench_route_load, "soak": bench_soak,
           "flowmon": bench_flowmon,
           "flowtable": bench_flowtable, "flowdir": bench_flowdir,
           "lb": bench_lb, "nf_start": bench_nf_start}


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

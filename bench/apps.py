"""NF benchmarks on real inputs: dpi (against ndpiReader), router and
route_load (the RouteViews table), flowmon. Line formats: bench/run.py."""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from common import REPO, TMP, log, emit, median, udp_frame
from harness import Manager


# ---------------------------------------------------------------- dpi
COPIES = 8  # of the nDPI captures in the dpi bench's trace


def renumbered(frame: bytes, c: int) -> bytes:
    """@p frame with the second byte of its outer IPv4/IPv6 source and
    destination addresses XORed with @p c (the IPv4 header checksum
    redone): copy c of a flow is a flow of its own, both directions
    alike. Non-IP frames as they are."""
    import struct
    off = 12
    et = struct.unpack_from("!H", frame, off)[0] if len(frame) >= 14 else 0
    while et in (0x8100, 0x88A8, 0x9100) and len(frame) >= off + 6:
        off += 4
        et = struct.unpack_from("!H", frame, off)[0]
    ip, b = off + 2, bytearray(frame)
    if et == 0x0800 and len(b) >= ip + 20 and b[ip] >> 4 == 4:
        b[ip + 13] ^= c
        b[ip + 17] ^= c
        hl = (b[ip] & 15) * 4
        if len(b) >= ip + hl:
            b[ip + 10:ip + 12] = b"\0\0"
            s = sum(struct.unpack_from(f"!{hl // 2}H", b, ip))
            while s >> 16:
                s = (s & 0xFFFF) + (s >> 16)
            struct.pack_into("!H", b, ip + 10, ~s & 0xFFFF)
    elif et == 0x86DD and len(b) >= ip + 40:
        b[ip + 9] ^= c
        b[ip + 25] ^= c
    return bytes(b)


def dpi_trace(copies: int = COPIES) -> tuple[Path, int]:
    """The nDPI 4.2 test captures with Ethernet framing, one after the
    other in one pcap (times shifted so that each starts 1 s after the
    previous ended), @p copies times over, each copy's addresses
    renumbered (renumbered()): new flows all the way, as a link carries,
    and a run long enough to time (28,813 frames a copy). The same
    packets for every mode."""
    from harness import CORPORA
    from pcaputil import linktype, write_pcap
    from scapy.utils import RawPcapReader

    def ts(m) -> float:
        if hasattr(m, "sec"):
            return m.sec + m.usec / 1e6
        return ((m.tshigh << 32) | m.tslow) / m.tsresol

    caps = []
    for pc in sorted((CORPORA / "ndpi-4.2/pcap").glob("*")):
        if linktype(pc) != 1:
            continue
        with RawPcapReader(str(pc)) as r:
            recs = [(bytes(d), ts(m), getattr(m, "wirelen", len(d)))
                    for d, m in r]
        if recs:
            caps.append(recs)

    def records():
        t_next = 1_000_000_000.0
        for c in range(copies):
            for recs in caps:
                t0, last = recs[0][1], t_next
                for d, t, wire in recs:
                    last = max(last, t_next + t - t0)  # never backwards
                    us = int(last) * 1_000_000 + \
                        int((last - int(last)) * 1e6)
                    yield us, renumbered(d, c) if c else d, wire
                t_next = last + 1.0

    path = TMP / f"dpi{copies}.pcap"
    return path, write_pcap(path, records())


def dpi_zeronf_once(trace: Path, n: int, replicas: int = 1,
                    rss: bool = False) -> float:
    """@replicas dpi NFs of one service, each seeing whole flows (its
    results stay those of one): balanced by the manager's worker by flow
    hash as it reads the capture (net_pcap), or, with @p rss, each owning
    one RX queue of a ring port that holds the capture split by RSS
    before the clock starts (mgr/port/port_ring.c: a NIC's queues holding
    what arrived), one replica per CPU, no worker on the way."""
    from harness import wait_for
    cpus = sorted(os.sched_getaffinity(0))
    if rss:  # the whole capture in the pool and either queue at once
        size = 1 << max(10, (n - 1).bit_length())
        port0 = f"net_ring0,zn_ring_size={size},zn_load={trace}"
        args = ["--nf-rx-queues", str(replicas), "--mem", "1536",
                "--pool-size", str((1 << (n + n // 8).bit_length()) - 1)]
    else:
        port0, args = f"net_pcap0,rx_pcap={trace}", ["--pool-size", "65535"]
    m = Manager(TMP, ports=[port0, "net_null0,no-rx=1"], chain="1,port:1",
                rx_paused=True, args=["--rx-timestamp"] + args)
    try:
        for i in range(replicas):
            m.start_nf("dpi", 1, nf_args=[
                "--proto-dir", str(REPO / "nfs/dpi/ndpi-4.2"),
                "--capture-time", "--idle-s", "0"],
                lib_args=["--cpus", str(cpus[i % len(cpus)])] if rss
                else [])
        if rss:
            wait_for(lambda: all(o.get("instance") is not None for o in
                                 m.call("port.list")["ports"][0]["nf_rx"]
                                 ["owners"]), 30, "each queue owned")
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
    manager -> NF -> net_null; time until the last packet left; zeronf_2:
    two replicas of it, balanced by flow hash; zeronf_rss_2: two replicas
    owning the RSS queues of a port holding the capture), the same
    classifier on libpcap (its read-and-classify loop), and ndpiReader
    (its packet processing time); interleaved runs. Each line says its
    median against ndpiReader's (vs_ndpireader)."""
    trace, n = dpi_trace()
    res: dict[str, list[float]] = {"zeronf": [], "zeronf_2": [],
                                   "zeronf_rss_2": [],
                                   "libpcap": [], "ndpireader": []}
    for _ in range(runs):
        res["zeronf"].append(dpi_zeronf_once(trace, n))
        res["zeronf_2"].append(dpi_zeronf_once(trace, n, replicas=2))
        res["zeronf_rss_2"].append(dpi_zeronf_once(trace, n, replicas=2,
                                                   rss=True))
        res["libpcap"].append(dpi_libpcap_once(trace))
        res["ndpireader"].append(dpi_ndpireader_once(trace))
        log(f"dpi: {[(k, round(v[-1], 3)) for k, v in res.items()]}")
    ref = median(res["ndpireader"])
    for mode, v in res.items():
        emit({"bench": "dpi", "mode": mode, "mpps": median(v),
              "vs_ndpireader": round(median(v) / ref, 2) if ref else None,
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

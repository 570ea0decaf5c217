"""Benchmarks of the second NF suite (firewall, ...): 64-byte packets
replayed from memory (net_pcap, infinite_rx) through the NF, one instance
and a service of two replicas, to net_null. Line formats: bench/run.py."""
from __future__ import annotations

import random
import time
from pathlib import Path

from common import TMP, emit, log, median, udp_frame
from harness import Manager


def nf_mpps(kind: str, nf_args: list[str], trace: Path, replicas: int,
            seconds: float) -> float:
    """Packets a second through @replicas instances of NF @kind (the
    sum of what they received), measured over @seconds after 1 s."""
    m = Manager(TMP, ports=[f"net_pcap0,rx_pcap={trace},infinite_rx=1",
                            "net_null0,no-rx=1"],
                chain="1,port:1", rx_paused=True,
                args=["--mem", "1024", "--pool-size", "131071"])
    try:
        for i in range(replicas):
            m.start_nf(kind, 1, f"{kind}{i}", nf_args=nf_args)
        m.call("rx.set", enabled=True)
        time.sleep(1.0)

        def rx():
            return sum(n["rx"] for n in m.call("nf.list")["nfs"])
        a, t0 = rx(), time.monotonic()
        time.sleep(seconds)
        b, t1 = rx(), time.monotonic()
        return (b - a) / (t1 - t0) / 1e6
    finally:
        m.shutdown()
        m.close()


# ---------------------------------------------------------------- firewall
def firewall_rules(path: Path, n: int, seed: int = 10) -> None:
    """@n rules of a router's forward chain: established connections
    first, then n - 2 rules on random prefixes, ports and protocols (none
    matching the trace), then an accept for the trace's UDP."""
    rnd = random.Random(seed)
    lines = ["-P DROP", "--ctstate ESTABLISHED,RELATED -j ACCEPT"]
    while len(lines) < n:
        plen = rnd.choice((16, 20, 24, 28, 32))
        a = rnd.randrange(11 << 24, 223 << 24) & (~0 << (32 - plen))
        pfx = f"{a >> 24}.{a >> 16 & 255}.{a >> 8 & 255}.{a & 255}/{plen}"
        lo = rnd.randrange(1, 60000)
        hi = lo + rnd.choice((0, 0, 10, 1000))
        proto = rnd.choice(("tcp", "udp"))
        side = rnd.choice(("-s", "-d"))
        verdict = rnd.choice(("ACCEPT", "DROP"))
        lines.append(f"-p {proto} {side} {pfx} --dport {lo}:{hi} "
                     f"-j {verdict}")
    lines.append("-p udp -s 10.0.0.0/8 -j ACCEPT")
    path.write_text("\n".join(lines) + "\n")


def flows_trace(path: Path, flows: int = 4096, packets: int = 65536) -> None:
    """64-byte UDP packets of @flows flows, round robin."""
    from pcaputil import write_pcap
    write_pcap(path, (udp_frame(bytes([10, 0, (i % flows) >> 8,
                                       (i % flows) & 255]),
                                bytes([192, 0, 2, 1]),
                                1024 + i % flows, 53)
                      for i in range(packets)))


def bench_firewall(runs: int) -> None:
    trace = TMP / "fw_flows.pcap"
    flows_trace(trace)
    for n in (1000, 10000):
        rules = TMP / f"fw{n}.txt"
        firewall_rules(rules, n)
        for replicas in (1, 2):
            res = [nf_mpps("firewall", ["--rules", str(rules)], trace,
                           replicas, 3.0) for _ in range(runs)]
            log(f"firewall {n} rules x{replicas}: {res}")
            emit({"bench": "firewall", "rules": n, "replicas": replicas,
                  "flows": 4096, "mpps": median(res),
                  "runs": [round(x, 4) for x in res]})


# ---------------------------------------------------------------- ratelimit
def ratelimit_passed(conf: Path, trace: Path, seconds: float) -> tuple:
    """Packets a second the ratelimit NF passed, and took in, measured over
    @seconds after 1 s, the port replaying @trace as fast as it can."""
    m = Manager(TMP, ports=[f"net_pcap0,rx_pcap={trace},infinite_rx=1",
                            "net_null0,no-rx=1"],
                chain="1,port:1", rx_paused=True,
                args=["--mem", "1024", "--pool-size", "131071"])
    try:
        m.start_nf("ratelimit", 1, "rl", nf_args=["--config", str(conf)])
        m.call("rx.set", enabled=True)
        time.sleep(1.0)

        def passed():
            # what left by the output port (exact; the NF's counters are
            # published once a tick), what the NF took in
            return (m.call("port.list")["ports"][1]["tx"],
                    m.call("nf.list")["nfs"][0]["rx"])
        (a, ra), t0 = passed(), time.monotonic()
        time.sleep(seconds)
        (b, rb), t1 = passed(), time.monotonic()
        return (b - a) / (t1 - t0), (rb - ra) / (t1 - t0)
    finally:
        m.shutdown()
        m.close()


def bench_ratelimit(runs: int) -> None:
    import json
    trace = TMP / "rl_flows.pcap"
    flows_trace(trace)
    # accuracy: one class at a rate far below what is offered; its burst
    # 50 ms of it (a policer cannot give back more time than its bucket
    # holds: a stall of the NF longer than that is lost to the rate)
    for rate, burst, pps in (("100kpps", "5000p", 100e3),
                             ("1mpps", "50000p", 1e6),
                             ("100mbit", "625kb", 100e6 / (60 * 8))):
        conf = TMP / "rl.json"
        conf.write_text(json.dumps({"classes": [{"name": "c", "rate": rate,
                                                 "burst": burst}]}))
        res = [ratelimit_passed(conf, trace, 5.0) for _ in range(runs)]
        got = median([p for p, _ in res])
        log(f"ratelimit {rate}: {res}")
        emit({"bench": "ratelimit", "mode": "accuracy", "rate": rate,
              "burst": burst,
              "configured_pps": round(pps, 1), "measured_pps": round(got, 1),
              "offered_mpps": round(median([o for _, o in res]) / 1e6, 3),
              "error_pct": round(100 * abs(got - pps) / pps, 3),
              "target_pct": 2,
              "runs": [round(p, 1) for p, _ in res]})
    # throughput: a class per tenant and a bucket per flow, none binding
    conf = TMP / "rl_open.json"
    conf.write_text(json.dumps({"classes": [
        {"name": "t", "match": {"src": "10.0.0.0/8"}, "rate": "100mpps",
         "per": "flow", "per_rate": "1mpps"}]}))
    for replicas in (1, 2):
        res = [nf_mpps("ratelimit", ["--config", str(conf)], trace,
                       replicas, 3.0) for _ in range(runs)]
        log(f"ratelimit x{replicas}: {res}")
        emit({"bench": "ratelimit", "mode": "throughput",
              "replicas": replicas, "flows": 4096, "mpps": median(res),
              "runs": [round(x, 4) for x in res]})


# ---------------------------------------------------------------- nat
def bench_nat(runs: int) -> None:
    trace = TMP / "nat_flows.pcap"
    flows_trace(trace)
    args = ["--snat", "10.0.0.0/8=198.51.100.1"]
    for replicas in (1, 2):
        res = [nf_mpps("nat", args, trace, replicas, 3.0)
               for _ in range(runs)]
        log(f"nat x{replicas}: {res}")
        emit({"bench": "nat", "mode": "snat", "replicas": replicas,
              "flows": 4096, "mpps": median(res),
              "runs": [round(x, 4) for x in res]})


# ---------------------------------------------------------------- lb NF
def bench_lb_nf(runs: int) -> None:
    """The lb NF (Maglev, NAT mode): 64-byte UDP of 4096 flows to a VIP
    of 4 backends, each flow a connection, its packets rewritten."""
    trace = TMP / "lb_flows.pcap"
    flows_trace(trace)  # to 192.0.2.1:53
    args = ["--vip", "dns=192.0.2.1:53/udp"]
    for i in range(4):
        args += ["--backend", f"dns=b{i}@10.9.0.{11 + i}:5353"]
    for replicas in (1, 2):
        res = [nf_mpps("lb", args, trace, replicas, 3.0)
               for _ in range(runs)]
        log(f"lb NF x{replicas}: {res}")
        emit({"bench": "lb", "nf": "maglev", "mode": "nat",
              "replicas": replicas, "backends": 4, "flows": 4096,
              "mpps": median(res), "runs": [round(x, 4) for x in res]})

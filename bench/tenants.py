"""`make bench BENCH=tenants`: N = 1, 2, 4, 8 and 10 tenants (Europa's
virtual routers, its Fig. 6) on one port sliced by VLAN: each tenant has
its own trust group (packets copied into its pool on the way in), its own
forward NF and its own chain out of the sink port (sliced too). Per-tenant
and aggregate Mpps through the tenants' NFs.

Then fairness under a flood (tests/fairness.py's two tenants): blue's
generator through its own NF, red quiet and flooded in turn, three runs
each: blue's throughput and latency flooded against quiet (target: within
10 %), and the CPU share red's NF got while flooded (target: its 20 %
bound, 25 % at most). One line:
  {"bench":"tenant_fairness","blue_quiet":{"mpps","p50_ns","p90_ns"},
   "blue_flooded":{...},"latency_ratio":R,"target_latency_ratio":1.1,
   "red_cpu_share":S,"target_red_cpu_share":0.25}"""
from __future__ import annotations

import statistics
import struct
import time

from common import TMP, emit, log, median, udp_frame
from dataplane import lb_layout
from harness import Manager

COUNTS = (1, 2, 4, 8, 10)
FRAMES = 8000


def trace(n: int) -> str:
    """FRAMES 64-byte UDP frames, frame i tagged VLAN i % n + 1 (the same
    share for each tenant), 100 flows per tenant."""
    from pcaputil import write_pcap
    path = TMP / f"tenants{n}.pcap"
    if not path.exists():
        def frame(i: int) -> bytes:
            f = udp_frame(bytes([10, 0, i % n, (i // n) % 100]),
                          bytes([10, 1, 0, 1]), 1024 + (i // n) % 100, 80,
                          60)
            return f[:12] + struct.pack("!HH", 0x8100, i % n + 1) + f[12:]
        write_pcap(path, (frame(i) for i in range(FRAMES)))
    return str(path)


def tenants_once(n: int, seconds: float = 2.0) -> list[float]:
    """Mpps through each of the n tenants' NFs."""
    args: list[str] = []
    for k in range(n):
        args += ["--trust-group", f"g{k}:2047",
                 "--tenant", f"t{k}=g{k},services={10 + k}-{10 + k}",
                 "--slice", f"t{k}:0:vlan={k + 1}",
                 "--slice", f"t{k}:1:vlan={k + 1}"]
    mgr_args, nf_args = lb_layout(n)
    m = Manager(TMP, ports=[f"net_pcap0,rx_pcap={trace(n)},infinite_rx=1",
                            "net_null0,no-rx=1"],
                rx_paused=True, args=args + mgr_args + ["--mem", "512"])
    try:
        for k in range(n):
            m.start_nf("forward", 10 + k, f"t{k}",
                       lib_args=["--trust-group", f"g{k}"] + nf_args[k])
            m.call("chain.set", tenant=f"t{k}",
                   hops=[f"svc:{10 + k}", "port:1"])
        m.call("rx.set", enabled=True)
        time.sleep(1.0)  # warm up

        def out() -> list[int]:
            return [t["nfs"]["tx"] for t in
                    m.call("tenant.list")["tenants"]]
        t0, a = time.monotonic(), out()
        time.sleep(seconds)
        t1, b = time.monotonic(), out()
        return [(y - x) / (t1 - t0) / 1e6 for x, y in zip(a, b)]
    finally:
        m.shutdown()
        m.close()


def fairness_once(runs: int) -> dict:
    """Blue's reports quiet and flooded (runs each, alternating) and red's
    CPU share in each flooded run."""
    import fairness
    cores = fairness.cores()
    if cores is None:
        return {}
    mine, blues = cores
    m = Manager(TMP, **fairness.manager_kw(TMP, mine))
    try:
        red_pid = fairness.start_nfs(m, mine, blues)
        res: dict[bool, list[dict]] = {False: [], True: []}
        shares = []
        for i in range(2 * runs):
            flood = i % 2 == 1
            m.call("rx.set", enabled=flood)
            if flood:
                time.sleep(0.5)
            t0, c0 = time.monotonic(), fairness.cpu_seconds(red_pid)
            res[flood].append(fairness.blue_run(m, i, blues))
            if flood:
                shares.append((fairness.cpu_seconds(red_pid) - c0) /
                              (time.monotonic() - t0))
        m.call("rx.set", enabled=False)
        return {"res": res, "shares": shares}
    finally:
        m.shutdown()
        m.close()


def bench_fairness(runs: int) -> None:
    r = fairness_once(max(runs, 3))
    if not r:
        log("tenant fairness: needs 2 CPUs")
        return

    def med(flood: bool) -> dict:
        rs = r["res"][flood]
        return {"mpps": median([x["mpps"] for x in rs]),
                "p50_ns": median([x["latency_ns"]["p50"] for x in rs]),
                "p90_ns": median([x["latency_ns"]["p90"] for x in rs])}
    quiet, loud = med(False), med(True)
    log(f"tenant fairness: blue quiet {quiet}, flooded {loud}; red's CPU "
        f"share flooded {r['shares']}")
    emit({"bench": "tenant_fairness", "blue_quiet": quiet,
          "blue_flooded": loud,
          "latency_ratio": round(max(loud["p50_ns"] / quiet["p50_ns"],
                                     loud["p90_ns"] / quiet["p90_ns"]), 3)
          if quiet["p50_ns"] and quiet["p90_ns"] else None,
          "target_latency_ratio": 1.1,
          "red_cpu_share": round(max(r["shares"]), 3),
          "target_red_cpu_share": 0.25})


def bench_tenants(runs: int) -> None:
    for n in COUNTS:
        res = [tenants_once(n) for _ in range(runs)]
        log(f"tenants {n}: {res}")
        per = [median([r[k] for r in res]) for k in range(n)]
        agg = [sum(r) for r in res]
        emit({"bench": "tenants", "tenants": n, "mpps": median(agg),
              "per_tenant_mpps": per,
              "min_max": round(min(per) / max(per), 3) if max(per) else 0,
              "cv": round(statistics.pstdev(per) / statistics.mean(per), 3)
              if statistics.mean(per) else None,
              "runs": [round(x, 4) for x in agg]})
    bench_fairness(runs)

"""`make bench BENCH=tenants`: N = 1, 2, 4, 8 and 10 tenants (Europa's
virtual routers, its Fig. 6) on one port sliced by VLAN: each tenant has
its own trust group (packets copied into its pool on the way in), its own
forward NF and its own chain out of the sink port (sliced too). Per-tenant
and aggregate Mpps through the tenants' NFs."""
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

#!/usr/bin/env python3
"""ZeroNF demo (`make demo`): a manager with two net_pcap ports replaying
bundled real traces, a chain of NFs in separate processes, then a report of
what happened, checked against the input."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "python"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=str(REPO / "out"),
                    help="where the output pcap and logs go")
    a = ap.parse_args()
    os.environ["ZERONF_BUILD"] = str((REPO / a.build).resolve())

    from harness import Manager, wait_for  # noqa: E402
    from pcaputil import assert_same_per_flow, read_frames  # noqa: E402

    out = Path(a.out)
    out.mkdir(exist_ok=True)
    logs = Path(tempfile.mkdtemp(prefix="zeronf-demo-", dir=out))
    traces = [REPO / "data/pcap/wikipedia.pcap",
              REPO / "data/pcap/bittorrent.pcap"]
    out_pcap = out / "demo-out.pcap"
    frames_in = [f for t in traces for f in read_frames(t)]

    print("ZeroNF demo")
    print("===========")
    ports = [f"net_pcap0,rx_pcap={traces[0]},tx_pcap={out_pcap}",
             f"net_pcap1,rx_pcap={traces[1]}"]
    chain = "1,2,3,port:0"
    m = Manager(logs, ports=ports, chain=chain, rx_paused=True,
                name=f"demo{os.getpid()}")
    try:
        st = m.call("status")
        print(f"manager '{m.name}' (pid {st['pid']}, {st['dpdk']}): "
              f"{st['ports']} ports, {st['workers']} worker thread, "
              f"pool of {st['pool']['size']} buffers in hugepages")
        for p in m.call("port.list")["ports"]:
            print(f"  port {p['port']}: {p['name']} ({p['driver']})")
        print(f"  port 0 replays {traces[0].name} ({len(read_frames(traces[0]))}"
              f" packets) and writes {out_pcap.relative_to(REPO)}")
        print(f"  port 1 replays {traces[1].name} ({len(read_frames(traces[1]))}"
              " packets)")
        print(f"default chain: {' -> '.join(m.call('chain.get')['hops'])}")

        print("starting NF processes (DPDK secondaries):")
        m.start_nf("monitor", 1, "ingress-mon")
        m.start_nf("forward", 2, "fwd-a")
        m.start_nf("forward", 2, "fwd-b")
        report = logs / "dpi-flows.out"
        m.start_nf("dpi", 3, "dpi", nf_args=[
            "--report", str(report),
            "--proto-dir", str(REPO / "nfs/dpi/ndpi-4.2")])
        for n in m.call("nf.list")["nfs"]:
            print(f"  instance {n['instance']}: {n['name']:<12} service "
                  f"{n['service']}  pid {n['pid']}")
        print("  (service 2 has two replicas: flows are balanced between "
              "them by a\n   symmetric flow hash)")

        t0 = time.monotonic()
        m.call("rx.set", enabled=True)
        wait_for(lambda: m.call("port.list")["ports"][0]["tx"] >=
                 len(frames_in), 60, "all packets out")
        st = m.wait_idle()
        dt = time.monotonic() - t0
        print(f"\ntraffic: {len(frames_in)} packets in, "
              f"{st['ports'][0]['tx']} out of port 0 ({dt:.2f} s incl. "
              "settling)")
        print(f"{'NF':<12} {'svc':>3} {'rx':>6} {'tx':>6} {'sleeps':>7} "
              f"{'wakeups':>7}")
        for n in st["nfs"]:
            print(f"{n['name']:<12} {n['service']:>3} {n['rx']:>6} "
                  f"{n['tx']:>6} {n['sleeps']:>7} {n['wakeups']:>7}")
        mon = [n for n in st["nfs"] if n["name"] == "ingress-mon"][0]
        c = mon["counters"]
        print(f"ingress monitor: {c['ipv4']} IPv4, {c['ipv6']} IPv6, "
              f"{c['tcp']} TCP, {c['udp']} UDP, {c['other_l3']} other, "
              f"{c['bytes']} bytes")
        drops = {k: v for k, v in st["drops"].items() if v}
        print(f"drops by reason: {drops or 'none'}")
        print(f"packet buffers in use now: {st['status']['pool']['in_use']}")
    finally:
        rc = m.shutdown()
        m.close()
    frames_out = read_frames(out_pcap)
    try:
        assert_same_per_flow(frames_in, frames_out)
        verdict = "OK: exactly the input packets, in order within each flow"
    except AssertionError as e:
        verdict = f"MISMATCH: {e}"
    print(f"\noutput check ({out_pcap.name}): {verdict}")
    # The dpi NF wrote its flow report (ndpiReader's -w format) at exit.
    protos = []
    if report.exists():
        for line in report.read_text().splitlines():
            f = line.split("\t")
            if len(f) == 4 and f[1].isdigit() and f[3].isdigit():
                protos.append((int(f[2]), f[0], int(f[1]), int(f[3])))
    flows = sum(p[3] for p in protos)
    print(f"dpi (nDPI {len(protos)} protocols over {flows} flows; report: "
          f"{report.relative_to(REPO)}):")
    for b, name, pk, fl in sorted(protos, reverse=True)[:8]:
        print(f"  {name:<16} {fl:>4} flows {pk:>6} packets {b:>9} bytes")
    print(f"manager exit status {rc}; it removed its hugepage files and "
          f"runtime directory: {'yes' if not m.leftovers() else 'NO'}")
    print(f"logs: {logs.relative_to(REPO)}")
    return 0 if verdict.startswith("OK") and rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

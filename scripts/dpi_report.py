#!/usr/bin/env python3
"""`make dpi-report PCAP=in.pcap OUT=flows.out`: replay a capture through a
ZeroNF manager (net_pcap port, capture timestamps) into the dpi NF and
write its flow report, in ndpiReader's `-w` format, to OUT. The packet
tests run exactly this (tests/pkt/test_dpi.py)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROTO_DIR = REPO / "nfs/dpi/ndpi-4.2"


def replay(pcap: Path, tmp: Path, nfs: list[tuple[str, list[str]]],
           timeout: float = 60.0) -> list[dict]:
    """Replay pcap once through a manager (net_pcap, capture timestamps)
    and a chain of NFs [(kind, NF args)], each told the capture's link
    type; stop them (they write their output at exit). Returns each NF's
    counters."""
    sys.path.insert(0, str(REPO / "tests"))
    sys.path.insert(0, str(REPO / "python"))
    from harness import Manager, wait_for
    from pcaputil import linktype, read_frames

    n = len(read_frames(pcap))
    chain = ",".join(str(s) for s in range(1, len(nfs) + 1)) + ",port:1"
    m = Manager(tmp, ports=[f"net_pcap0,rx_pcap={pcap}", "net_null0,no-rx=1"],
                chain=chain, rx_paused=True, args=["--rx-timestamp"])
    try:
        started = [m.start_nf(kind, s, nf_args=args + [
            "--capture-time", "--dlt", str(linktype(pcap))])
            for s, (kind, args) in enumerate(nfs, 1)]
        m.call("rx.set", enabled=True)
        # Every frame in and through the chain (nothing is dropped on the
        # way: backpressure), and counted by each NF (synced 10/s).
        wait_for(lambda: m.call("port.list")["ports"][0]["rx"] == n and
                 m.call("port.list")["ports"][1]["tx"] == n,
                 timeout, f"{n} frames through the chain")
        wait_for(lambda: all(m.nf_by_pid(nf.proc.pid)["counters"].get(
            "packets") == n for nf in started), timeout, "NF counters")
        counters = [m.nf_by_pid(nf.proc.pid)["counters"] for nf in started]
        for nf in started:
            m.call("nf.stop", instance=nf.instance)
        for nf in started:
            if nf.proc.wait(timeout) != 0:
                raise RuntimeError(f"{nf.name} failed:\n{nf.proc.output()}")
        return counters
    finally:
        m.shutdown()
        m.close()


def dpi_report(pcap: Path, out: Path, tmp: Path,
               proto_dir: Path = PROTO_DIR, more: list | None = None,
               timeout: float = 60.0) -> list[dict]:
    """pcap through the dpi NF (then the NFs of `more`); its report to
    out. Returns the NFs' counters."""
    c = replay(pcap, tmp, [("dpi", ["--report", str(out), "--proto-dir",
                                    str(proto_dir), "--idle-s", "0"])] +
               (more or []), timeout)
    if not out.exists():
        raise RuntimeError("the dpi NF wrote no report")
    return c


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("pcap", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--build", default="build")
    ap.add_argument("--proto-dir", type=Path, default=PROTO_DIR)
    a = ap.parse_args()
    os.environ.setdefault("ZERONF_BUILD", str((REPO / a.build).resolve()))
    with tempfile.TemporaryDirectory(prefix="zeronf-dpi-") as tmp:
        c = dpi_report(a.pcap.resolve(), a.out.resolve(), Path(tmp),
                       a.proto_dir.resolve())
    print(f"{a.out}: {c[0]['flows']} flows, {c[0]['packets']} packets, "
          f"{c[0]['classified']} classified")
    return 0


if __name__ == "__main__":
    sys.exit(main())

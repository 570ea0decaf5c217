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
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROTO_DIR = REPO / "nfs/dpi/ndpi-4.2"


def dpi_report(pcap: Path, out: Path, tmp: Path,
               proto_dir: Path = PROTO_DIR, nf_args: list[str] | None = None,
               timeout: float = 60.0) -> dict:
    """Run pcap through a manager and the dpi NF; the report goes to out.
    Returns the NF's counters."""
    sys.path.insert(0, str(REPO / "tests"))
    sys.path.insert(0, str(REPO / "python"))
    from harness import Manager, wait_for
    from pcaputil import linktype, read_frames

    n = len(read_frames(pcap))
    m = Manager(tmp, ports=[f"net_pcap0,rx_pcap={pcap}", "net_null0,no-rx=1"],
                chain="1,port:1", rx_paused=True, args=["--rx-timestamp"])
    try:
        nf = m.start_nf("dpi", 1, nf_args=[
            "--report", str(out), "--proto-dir", str(proto_dir),
            "--capture-time", "--idle-s", "0",
            "--dlt", str(linktype(pcap))] + (nf_args or []))
        m.call("rx.set", enabled=True)
        # Every frame in, and through the NF (nothing is dropped on the
        # way: backpressure), before it writes its report at exit.
        wait_for(lambda: m.call("port.list")["ports"][0]["rx"] == n and
                 m.call("port.list")["ports"][1]["tx"] == n,
                 timeout, f"{n} frames through the dpi NF")
        wait_for(lambda: m.nf_by_pid(nf.proc.pid)["counters"].get(
            "packets") == n, timeout, "the NF's counters")  # synced 10/s
        counters = m.nf_by_pid(nf.proc.pid)["counters"]
        m.call("nf.stop", instance=nf.instance)
        nf.proc.wait(timeout)
        if not out.exists():
            raise RuntimeError(f"no report:\n{nf.proc.output()}")
        return counters
    finally:
        m.shutdown()
        m.close()


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
    print(f"{a.out}: {c.get('flows', 0)} flows, {c.get('packets', 0)} "
          f"packets, {c.get('classified', 0)} classified")
    return 0


if __name__ == "__main__":
    sys.exit(main())

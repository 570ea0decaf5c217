#!/usr/bin/env python3
"""ZeroNF demo (`make demo`): `zeronf up deploy/demo.yaml` (a manager with
two net_pcap ports replaying bundled real traces, a chain of NFs the
manager launches and supervises in separate processes), the traffic
through, `zeronf status`, `zeronf down`, then a report of what happened,
checked against the input."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "python"))

DEPLOY = REPO / "deploy/demo.yaml"


def zeronf(*args: str) -> int:
    """Run the CLI as a user would, its output shown."""
    print(f"$ zeronf {' '.join(args)}", flush=True)
    return subprocess.call([sys.executable, "-m", "zeronf", *args],
                           cwd=REPO)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default="build")
    a = ap.parse_args()
    os.environ["ZERONF_BUILD"] = str((REPO / a.build).resolve())

    from pcaputil import assert_same_per_flow, read_frames  # noqa: E402
    from zeronf import Client  # noqa: E402
    from zeronf.spec import load  # noqa: E402

    from zeronf.orchestrate import is_up  # noqa: E402
    # The file's name (its logs in out/demo-logs), unless a demo runs.
    name = "demo" if not is_up("demo") else f"demo{os.getpid()}"
    d = load(DEPLOY, name=name)
    out_pcap = REPO / "out/demo-out.pcap"
    report = d.log_dir / "dpi-flows.out"
    traces = [REPO / "data/pcap/wikipedia.pcap",
              REPO / "data/pcap/bittorrent.pcap"]
    frames_in = [f for t in traces for f in read_frames(t)]
    for f in (out_pcap, report):
        f.unlink(missing_ok=True)

    print("ZeroNF demo")
    print("===========")
    print(f"{DEPLOY.relative_to(REPO)}: port 0 replays {traces[0].name} "
          f"({len(read_frames(traces[0]))} packets) and writes "
          f"{out_pcap.relative_to(REPO)}; port 1 replays {traces[1].name} "
          f"({len(read_frames(traces[1]))} packets)\n")
    t0 = time.monotonic()
    if zeronf("up", str(DEPLOY.relative_to(REPO)), "--name", name) != 0:
        return 1
    rc = 1
    try:
        with Client(name) as c:
            deadline = time.monotonic() + 60
            while c.ports()[0]["tx"] < len(frames_in) and \
                    time.monotonic() < deadline:
                time.sleep(0.05)
        zeronf("-i", name, "wait", "--idle")
        dt = time.monotonic() - t0
        print()
        zeronf("-i", name, "status")
        with Client(name) as c:
            st = c.stats()
        print(f"\ntraffic: {len(frames_in)} packets in, "
              f"{st['ports'][0]['tx']} out of port 0 ({dt:.2f} s from "
              f"zeronf up, settling included)")
        mon = [n for n in st["nfs"] if n["name"] == "ingress-mon"][0]
        cnt = mon["counters"]
        print(f"ingress monitor: {cnt['ipv4']} IPv4, {cnt['ipv6']} IPv6, "
              f"{cnt['tcp']} TCP, {cnt['udp']} UDP, {cnt['other_l3']} other,"
              f" {cnt['bytes']} bytes")
        fwd = {n["name"]: n["rx"] for n in st["nfs"]
               if n["service"] == d.service("fwd").id}
        print(f"fwd replicas (flows balanced by a symmetric flow hash): "
              f"{fwd}")
        drops = {k: v for k, v in st["drops"].items() if v}
        print(f"drops by reason: {drops or 'none'}")
        print(f"packet buffers in use now: {st['status']['pool']['in_use']}")
    finally:
        print()
        rc = zeronf("down", name)
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
    for b, pname, pk, fl in sorted(protos, reverse=True)[:8]:
        print(f"  {pname:<16} {fl:>4} flows {pk:>6} packets {b:>9} bytes")
    from zeronf.client import runtime_dir
    left = Path(runtime_dir(name)).exists()
    print(f"zeronf down: exit status {rc}; the manager removed its hugepage "
          f"files and runtime directory: {'NO' if left else 'yes'}")
    print(f"logs (manager, each NF replica): {d.log_dir.relative_to(REPO)}")
    return 0 if verdict.startswith("OK") and rc == 0 and not left else 1


if __name__ == "__main__":
    sys.exit(main())

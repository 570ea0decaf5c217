#!/usr/bin/env python3
"""Which DPDK PMDs can transmit from a secondary process? (issue #12: an NF
transmitting on a port's TX queue of its own.)

For each vdev: dpdk-testpmd as the primary owns it with 2 queue pairs;
dpdk-testpmd as a secondary (--proc-id 1: queue 1) runs txonly for 2 s;
then what the secondary reports, and what arrived where the PMD writes
(the peer of a veth, the tap interface, the pcap file). Run as root:

  .venv/bin/python scripts/pmd_secondary_tx.py [null ring pcap af_packet tap]

Prints one JSON object per PMD. Leaves nothing behind (its interfaces,
DPDK files and temporary files are removed).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMON = ["--", "-i", "--rxq=2", "--txq=2", "--num-procs=2",
          "--total-num-mbufs=16384", "--forward-mode=txonly", "--nb-cores=1"]


def testpmd(prefix: str, secondary: bool, args: list[str]):
    cmd = ["dpdk-testpmd", "--lcores", "2@0,3@1" if secondary else "0@0,1@1",
           "--no-pci", f"--file-prefix={prefix}", "--log-level=error"]
    if secondary:
        cmd.append("--proc-type=secondary")
    return subprocess.Popen(cmd + args, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def tx_packets(out: str) -> int | None:
    vals = [ln.split("TX-packets:")[1].split()[0] for ln in out.splitlines()
            if "TX-packets:" in ln]
    return int(vals[-1]) if vals else None


def trial(name: str, vdev: str, arrived=None) -> dict:
    prefix = f"pmdtx{os.getpid()}"
    prim = testpmd(prefix, False, [f"--vdev={vdev}", *COMMON, "--proc-id=0"])
    time.sleep(3)
    res: dict = {"pmd": name, "devargs": vdev}
    if prim.poll() is not None:
        res.update(ok=False, why="the primary failed: " +
                   prim.stdout.read()[-300:].strip())
        return res
    before = arrived() if arrived else None
    sec = testpmd(prefix, True, [*COMMON, "--proc-id=1"])
    time.sleep(3)
    for cmd, pause in (("start\n", 2), ("stop\nshow port stats 0\nquit\n",
                                        0)):
        try:
            sec.stdin.write(cmd)
            sec.stdin.flush()
        except BrokenPipeError:  # it died: its output says why
            break
        time.sleep(pause)
    out, _ = sec.communicate(timeout=30)
    after = arrived() if arrived else None
    try:
        prim.communicate("quit\n", timeout=30)
    except (subprocess.TimeoutExpired, BrokenPipeError, ValueError):
        prim.kill()
    sent = tx_packets(out)
    res.update(secondary_exit=sec.returncode, secondary_tx=sent)
    if arrived:
        res["arrived"] = (after or 0) - (before or 0)
    res["ok"] = bool(sec.returncode == 0 and sent and
                     (not arrived or res["arrived"] > 0))
    if not res["ok"]:
        res["why"] = " | ".join(ln.strip() for ln in out.splitlines()
                                if "rror" in ln or "fail" in ln.lower()
                                or "Couldn" in ln)[-300:] or \
            f"secondary exit {sec.returncode}"
    shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)
    for f in Path("/mnt/huge").glob(f"{prefix}map_*"):
        f.unlink(missing_ok=True)
    return res


def counter(iface: str):
    def read() -> int:
        try:
            return int(Path(f"/sys/class/net/{iface}/statistics/rx_packets")
                       .read_text())
        except OSError:
            return 0
    return read


def main() -> int:
    which = sys.argv[1:] or ["null", "ring", "pcap", "af_packet", "tap"]
    tmp = Path(tempfile.mkdtemp(prefix="pt", dir="/tmp"))
    try:
        for w in which:
            if w == "null":
                r = trial("net_null", "net_null0")
            elif w == "ring":
                r = trial("net_ring", "net_ring0")
            elif w == "pcap":
                src = Path(__file__).resolve().parent.parent / \
                    "data/pcap/wikipedia.pcap"
                shutil.copy(src, tmp / "i")
                r = trial("net_pcap", f"net_pcap0,rx_pcap={tmp}/i,"
                          f"rx_pcap={tmp}/i,tx_pcap={tmp}/a,tx_pcap={tmp}/b")
            elif w == "af_packet":
                subprocess.run("ip link add ptxa type veth peer name ptxb && "
                               "ip link set ptxa up && ip link set ptxb up",
                               shell=True, check=True)
                try:
                    r = trial("net_af_packet",
                              "net_af_packet0,iface=ptxa,qpairs=2",
                              counter("ptxb"))
                finally:
                    subprocess.run(["ip", "link", "del", "ptxa"])
            elif w == "tap":
                r = trial("net_tap", "net_tap0,iface=ptxtap",
                          counter("ptxtap"))
            else:
                print(f"unknown PMD {w}", file=sys.stderr)
                return 2
            print(json.dumps(r), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

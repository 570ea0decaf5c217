"""Two tenants, one flooded (docs/security.md "Tenants"), as the fairness
test (tests/system/test_tenant_fairness.py: what is enforced) and the
fairness bench (bench/tenants.py, `BENCH=tenants`: what it costs blue in
throughput and latency) both set them up. Tenant red is held to 20 % of a
CPU (--tenant cpu=20) and the manager's core, and flooded from its slice
of port 0 (a capture replayed without pause, each packet costing its NF
20 us: 10 kpps at its share); tenant blue, on a core of its own, runs an
open-loop generator (the speed tester, 20 kpps) through its own forward
NF."""
from __future__ import annotations

import json
import os
from pathlib import Path

from harness import DATA, NF_BIN, scaled, wait_for
from pcaputil import read_frames, write_pcap

RED_CPU_PCT = 20


def cores() -> tuple[str, str] | None:
    """The manager's and red's core, and blue's; None: one CPU only."""
    cpus = sorted(os.sched_getaffinity(0))
    return (str(cpus[0]), str(cpus[-1])) if len(cpus) >= 2 else None


def manager_kw(tmp: Path, mine: str) -> dict:
    """What the manager is started with (Manager's or the fixture's
    keywords)."""
    frames = [f[:12] + b"\x81\x00\x00\x0a" + f[12:]
              for f in read_frames(DATA / "pcap/bittorrent.pcap")]
    write_pcap(tmp / "red.pcap", frames)
    return dict(ports=[f"net_pcap0,rx_pcap={tmp / 'red.pcap'},"
                       "infinite_rx=1", "net_null0,no-rx=1"],
                chain="20,21", rx_paused=True,
                args=["--cpus", mine,
                      "--trust-group", "red:4095",
                      "--trust-group", "blue:4095",
                      "--tenant", f"red=red,services=10-19,cpu={RED_CPU_PCT}",
                      "--tenant", "blue=blue,services=20-29",
                      "--slice", "red:0:vlan=10", "--slice", "red:1"])


def start_nfs(m, mine: str, blues: str) -> int:
    """Red's NF (launched: in red's cgroup) and blue's forward NF; red's
    NF's pid."""
    m.call("nf.start", name="red-nf", binary=str(NF_BIN["forward"]),
           service=10, trust_group="red", cpus=mine,
           args=["--cost-ns", "20000"])
    wait_for(lambda: any(n["name"] == "red-nf" and n["state"] == "running"
                         for n in m.call("nf.list")["nfs"]), scaled(20),
             "red's NF running")
    red_pid = next(n["pid"] for n in m.call("nf.list")["nfs"])
    m.call("chain.set", tenant="red", hops=["10", "port:1"])
    m.start_nf("forward", 20, "blue-fw",
               lib_args=["--trust-group", "blue", "--cpus", blues])
    return red_pid


def blue_run(m, i: int, blues: str, seconds: float = 2.0) -> dict:
    """One run of blue's generator (20 kpps): its report."""
    st = m.start_nf("speed-tester", 21, f"blue-st{i}",
                    nf_args=["-r", "20000", "-d", str(seconds), "-w", "0.5"],
                    lib_args=["--trust-group", "blue", "--cpus", blues])
    assert st.proc.wait(scaled(30)) == 0
    return json.loads([ln for ln in st.proc.output().splitlines()
                       if ln.startswith("{")][-1])


def cpu_seconds(pid: int) -> float:
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def _red_dir(instance: str) -> Path:
    cg = Path("/sys/fs/cgroup")
    if (cg / "cgroup.controllers").exists():  # v2
        return cg / "zeronf" / instance / "tenant-red"
    return cg / "cpu" / "zeronf" / instance / "tenant-red"


def red_cpu_max(instance: str) -> list[str]:
    """Tenant red's CPU bound as its cgroup says (v2 cpu.max; v1 the
    quota and period)."""
    d = _red_dir(instance)
    if (d / "cpu.max").exists():
        return (d / "cpu.max").read_text().split()
    return [(d / "cpu.cfs_quota_us").read_text().strip(),
            (d / "cpu.cfs_period_us").read_text().strip()]


def red_pids(instance: str) -> set[int]:
    """The processes in tenant red's cgroup and below it."""
    return {int(p) for f in _red_dir(instance).rglob("cgroup.procs")
            for p in f.read_text().split()}

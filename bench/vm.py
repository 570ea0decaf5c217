"""`make bench BENCH=vm`: NFs in VMs (docs/vm-nfs.md) against the same
NFs as host processes. A chain of N forward NFs (N = 1, 2) between the
speed tester's hands (a host NF; 512 packets circulating, 64 and 1500
bytes), all of trust group a: mode host (the forwards are host
processes) and guest_zero_copy (each forward in a QEMU guest of its own,
mapping the group's file as an ivshmem BAR). One line per mode, size and
N; ns_per_hop = 1e3 / mpps / N (a packet's time per NF). accel is the
VM's: tcg on a host whose KVM boots no stock kernel (this one), where
the figures say what emulation costs, not the design: the targets hold
for kvm (ZERONF_VM_ACCEL=kvm). Then the idle CPU of a guest NF (QEMU and
its helper, no traffic) against a host NF's."""
from __future__ import annotations

import json
import os
import time

from common import TMP, cpu_ticks, emit, log, median
from harness import Manager, wait_for

GROUP = ["--trust-group", "a:16383", "--mem", "512"]
WINDOW = 512
ACCEL = os.environ.get("ZERONF_VM_ACCEL", "tcg")


def start_guest(m: Manager, svc: int, poll_max_us: int | None = None) -> int:
    """Forward NF of service @svc in a VM; its helper's pid once
    running."""
    from zeronf import paths, vm
    p = vm.start_params(f"vm{svc}", paths.find_program("zeronf-forward"),
                        svc, "a", [], mem_mb=512, accel=ACCEL,
                        poll_max_us=poll_max_us)
    m.call("nf.start", **p)

    def up():
        return [n["pid"] for n in m.call("nf.list")["nfs"]
                if n["service"] == svc and n["state"] == "running"]
    wait_for(up, 120, f"the VM of service {svc} running")
    return up()[0]


def vm_once(mode: str, nfs: int, size: int, seconds: float = 3.0) -> float:
    hops = [str(s) for s in range(2, nfs + 2)] + ["1"]
    m = Manager(TMP, chain=",".join(hops), args=GROUP)
    try:
        for s in range(2, nfs + 2):
            if mode == "host":
                m.start_nf("forward", s, lib_args=["--trust-group", "a"])
            else:
                start_guest(m, s)
        st = m.start_nf("speed-tester", 1, lib_args=["--trust-group", "a"],
                        nf_args=["-n", str(WINDOW), "-S", str(size),
                                 "-d", str(seconds), "-w", "1"])
        st.proc.wait(seconds + 60)
        return json.loads([ln for ln in st.proc.output().splitlines()
                           if ln.startswith("{")][-1])["mpps"]
    finally:
        m.shutdown(timeout=60)
        m.close()


def idle_once(mode: str, seconds: float = 10.0) -> float:
    """CPU % of one idle forward NF: its process, or its VM (QEMU and
    the helper)."""
    m = Manager(TMP, chain="2,port:0", ports=["net_null0,no-rx=1"],
                args=GROUP)
    try:
        if mode == "host":
            pids = [m.start_nf("forward", 2,
                               lib_args=["--trust-group", "a"]).proc.pid]
        else:
            helper = start_guest(m, 2)
            with open(f"/proc/{helper}/task/{helper}/children") as f:
                pids = [helper] + [int(x) for x in f.read().split()]
        time.sleep(2.0)  # boot and start-up settle
        hz = os.sysconf("SC_CLK_TCK")
        t0, c0 = time.monotonic(), sum(cpu_ticks(p) for p in pids)
        time.sleep(seconds)
        t1, c1 = time.monotonic(), sum(cpu_ticks(p) for p in pids)
        return 100.0 * (c1 - c0) / hz / (t1 - t0)
    finally:
        m.shutdown(timeout=60)
        m.close()


def bench_vm(runs: int) -> None:
    for nfs in (1, 2):
        for size in (64, 1500):
            res: dict[str, list[float]] = {"host": [], "guest_zero_copy": []}
            for _ in range(runs):
                for mode in res:
                    res[mode].append(vm_once(mode, nfs, size))
            log(f"vm {nfs} NF(s), {size} B, {ACCEL}: {res}")
            for mode, v in res.items():
                mpps = median(v)
                emit({"bench": "vm", "mode": mode, "accel": ACCEL,
                      "nfs": nfs, "size": size, "mpps": mpps,
                      "ns_per_hop": round(1e3 / mpps / nfs, 1)
                      if mpps else None,
                      "runs": [round(x, 4) for x in v]})
    for mode in ("host", "guest_zero_copy"):
        v = [idle_once(mode) for _ in range(runs)]
        log(f"vm idle {mode}: {v}")
        emit({"bench": "vm_idle", "mode": mode, "accel": ACCEL,
              "cpu_pct": round(median(v), 2),
              "runs": [round(x, 2) for x in v]})

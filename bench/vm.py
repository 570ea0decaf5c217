"""`make bench BENCH=vm`: NFs in VMs (docs/vm-nfs.md) against the same
NFs as host processes and against VMs on the copying path. A chain of N
forward NFs (N = 1, 2) between the speed tester's hands (a host NF; 512
packets circulating, 64 and 1500 bytes): mode host (the forwards are
host processes of trust group a), guest_zero_copy (each forward in a
QEMU guest of its own, mapping a's file as an ivshmem BAR) and
guest_vhost (each an untrusted VM whose virtio-net NIC is a vhost-user
port of the manager, forwarding with zeronf-vmfwd: copies both ways).
One line per mode, size and N (ns_per_hop = 1e3 / mpps / N, a packet's
time per NF), then a vm_ratio line per N and size, then vm_idle: an
idle forward NF's CPU, its process or its VM (QEMU and helper). accel is
the VMs': --accel auto picks kvm where the host's KVM boots the guest
kernel, else tcg (this host), where the figures say what emulation
costs, not the design: the targets hold for kvm. ZERONF_VM_ACCEL=kvm|tcg
forces one."""
from __future__ import annotations

import json
import os
import time

from common import TMP, cpu_pct, emit, log, median
from harness import Manager, wait_for

GROUP = ["--trust-group", "a:16383", "--mem", "512"]
WINDOW = 512
ACCEL = os.environ.get("ZERONF_VM_ACCEL", "auto")


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


def vhost_once(nfs: int, size: int, seconds: float = 3.0) -> float:
    """The copying baseline: @nfs untrusted VMs, each zeronf-vmfwd on a
    virtio-net NIC that is a vhost-user port (net_vhost) of the manager;
    the tester's packets go out of port 0, come back in and go out of the
    next port (its chain), and from the last one back to the tester."""
    import subprocess
    from zeronf import vm
    socks = [TMP / f"vhost{i}.sock" for i in range(nfs)]
    m = Manager(TMP, ports=[f"net_vhost{i},iface={s},queues=1"
                            for i, s in enumerate(socks)],
                chain="1,port:0", args=["--mem", "512"])
    vms = []
    try:
        for i in range(nfs):
            m.call("chain.set", port=i,
                   hops=[f"port:{i + 1}" if i + 1 < nfs else "svc:1"])
        for i, s in enumerate(socks):
            argv = vm.vhost_argv(s, mem_mb=512, accel=ACCEL)
            argv[1:1] = ["-i", m.name, "-n", f"vhost{i}"]
            vms.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
        wait_for(lambda: all(p["link_up"] for p in
                             m.call("port.list")["ports"]), 60,
                 "the VMs' NICs up")
        time.sleep(3.0)  # their forwarders started (after the link)
        st = m.start_nf("speed-tester", 1,
                        nf_args=["-o", "0", "-n", str(WINDOW), "-S",
                                 str(size), "-d", str(seconds), "-w", "1"])
        st.proc.wait(seconds + 60)
        return json.loads([ln for ln in st.proc.output().splitlines()
                           if ln.startswith("{")][-1])["mpps"]
    finally:
        for p in vms:
            p.terminate()
        for p in vms:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
        m.shutdown(timeout=60)
        m.close()


def vm_once(mode: str, nfs: int, size: int, seconds: float = 3.0) -> float:
    if mode == "guest_vhost":
        return vhost_once(nfs, size, seconds)
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
        return cpu_pct(pids, seconds)
    finally:
        m.shutdown(timeout=60)
        m.close()


def bench_vm(runs: int) -> None:
    global ACCEL
    if ACCEL == "auto":  # the lines say which it was
        from zeronf import vm
        ACCEL = vm.resolve_accel()
        log(f"vm: --accel auto is {ACCEL} on this host")
    for nfs in (1, 2):
        for size in (64, 1500):
            res: dict[str, list[float]] = {"host": [], "guest_zero_copy": [],
                                           "guest_vhost": []}
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
            zc, vh = median(res["guest_zero_copy"]), median(res["guest_vhost"])
            emit({"bench": "vm_ratio", "accel": ACCEL, "nfs": nfs,
                  "size": size, "zero_copy_vs_host": round(
                      zc / median(res["host"]), 3),
                  "zero_copy_vs_vhost": round(zc / vh, 2) if vh else None})
    for mode in ("host", "guest_zero_copy"):
        v = [idle_once(mode) for _ in range(runs)]
        log(f"vm idle {mode}: {v}")
        emit({"bench": "vm_idle", "mode": mode, "accel": ACCEL,
              "cpu_pct": round(median(v), 2),
              "runs": [round(x, 2) for x in v]})

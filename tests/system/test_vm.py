"""NFs in VMs (tools/zeronf-vm.c, vm/zeronf-vminit.c, lib/nf/nf_guest.c;
docs/vm-nfs.md): a real QEMU guest (TCG here: /dev/kvm boots no stock
kernel on this host) running the host's own forward NF, which maps its
trust group's file as an ivshmem BAR and handles packets in place. The
manager launches and supervises it like any NF (zeronf vm start)."""

from __future__ import annotations

import os
import shutil
import signal
import time

import pytest

from harness import (DATA, conserved, traffic_ports, wait_for, zeronf_cli)
from pcaputil import assert_same_per_flow, read_frames
from zeronf import vm

PCAP = DATA / "pcap/wikipedia.pcap"
GROUP = ["--trust-group", "a:2047"]

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-x86_64") is None or vm.kernel() is None,
    reason="no QEMU or no guest kernel (scripts/setup.sh installs both)")


def vm_start(m, name, service, *nf_args, restart="on-failure"):
    r = zeronf_cli("-i", m.name, "vm", "start", name, "zeronf-forward",
                   "-s", service, "-g", "a", "--mem", "512", "--restart",
                   restart, *(["--", *nf_args] if nf_args else []))
    assert r.returncode == 0, r.stderr


def running(m, service):
    return [n for n in m.call("nf.list")["nfs"]
            if n["service"] == service and n["state"] == "running"]


def qemu_of(pid: int) -> int:
    """The QEMU process of helper @pid (its only child)."""
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        kids = [int(x) for x in f.read().split()]
    assert len(kids) == 1, kids
    return kids[0]


def test_a_chain_through_a_guest_nf_is_the_input(managers, tmp_path):
    """host NF -> guest NF -> host NF, all of group a: the capture comes
    out as it went in (per flow), copied once (port into the group) and
    never between the NFs, the guest's NF counts every packet, and a stop
    is a clean leave (the guest's init stops the NF; exit 0)."""
    out = tmp_path / "out.pcap"
    m = managers(ports=[f"net_pcap0,rx_pcap={PCAP},tx_pcap={out}"],
                 chain="1,2,3,port:0", rx_paused=True, args=GROUP)
    for svc in (1, 3):
        m.start_nf("forward", svc, lib_args=["--trust-group", "a"])
    vm_start(m, "g2", 2)
    wait_for(lambda: running(m, 2), 60, "the guest's NF running")
    guest = running(m, 2)[0]
    assert guest["trust_group"] == "a" and guest["name"] == "g2"
    launched = m.call("launch.list")["launched"][0]
    assert launched["binary"].endswith("/zeronf-vm")
    assert launched["instances"][0]["pid"] == guest["pid"]

    frames = read_frames(PCAP)
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["tx"] >= len(frames),
             60, "all packets out")
    st = m.wait_idle()
    n = len(frames)
    for nf in st["nfs"]:
        assert (nf["name"], nf["rx"], nf["tx"]) == (nf["name"], n, n)
    assert sum(st["drops"].values()) == 0
    g = m.call("group.list")["groups"][0]
    assert g["copied_in"] == n and g["pool"]["in_use"] == 0

    r = zeronf_cli("-i", m.name, "nf", "stop", "g2")
    assert r.returncode == 0, r.stderr
    wait_for(lambda: not m.call("launch.list")["launched"], 30,
             "the VM's NF removed")
    reg = m.stats()["status"]["registry"]
    assert reg["died"] == 0, reg  # it left: a leave, not a death
    assert m.shutdown() == 0
    assert_same_per_flow(frames, read_frames(out))


def test_a_killed_guest_loses_only_its_packets(managers):
    """kill -9 the guest's QEMU under load: its helper exits, the manager
    reclaims the slot (what the guest held counts as nf_exit), the
    launcher starts a new VM, and at idle every buffer of the group's
    pool is back; nothing else is lost (but what came for the service
    while it had no instance, counted as no_instance)."""
    m = managers(ports=traffic_ports(DATA / "pcap/bittorrent.pcap"),
                 chain="1,2,port:1", rx_paused=True, args=GROUP)
    base = m.pool()["in_use"]
    m.start_nf("forward", 1, lib_args=["--trust-group", "a"])
    vm_start(m, "g2", 2)
    wait_for(lambda: running(m, 2), 60, "the guest's NF running")
    helper = running(m, 2)[0]["pid"]
    m.call("rx.set", enabled=True)
    start = m.call("port.list")["ports"][1]["tx"]
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] > start + 2000,
             30, "traffic through the guest")
    os.kill(qemu_of(helper), signal.SIGKILL)
    wait_for(lambda: not os.path.exists(f"/proc/{helper}"), 10,
             "the helper gone with its VM")
    wait_for(lambda: running(m, 2) and running(m, 2)[0]["pid"] != helper,
             60, "a new VM's NF running")
    start = m.call("port.list")["ports"][1]["tx"]
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] > start + 2000,
             30, "traffic through the new guest")
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert st["status"]["registry"]["died"] == 1
    # What the guest held (nf_exit), and the packets for service 2 while
    # it had no instance (no_instance, until the new VM's NF joined).
    assert 0 < st["drops"]["nf_exit"] <= 2 * 1024
    assert dropped == st["drops"]["nf_exit"] + st["drops"]["no_instance"] \
        + st["drops"]["ingress_full"], st["drops"]
    assert st["status"]["pool"]["in_use"] == base
    assert m.call("group.list")["groups"][0]["pool"]["in_use"] == 0
    launched = m.call("launch.list")["launched"][0]
    assert launched["restarts"] == 1

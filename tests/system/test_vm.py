"""NFs in VMs (tools/zeronf-vm.c, vm/zeronf-vminit.c, lib/nf/nf_guest.c;
docs/vm-nfs.md): a real QEMU guest (TCG here: /dev/kvm boots no stock
kernel on this host) running the host's own forward NF, which maps its
trust group's file as an ivshmem BAR and handles packets in place. The
manager launches and supervises it like any NF (zeronf vm start)."""

from __future__ import annotations

import glob
import os
import shutil
import signal
from pathlib import Path

import pytest

from harness import (DATA, NF_BIN, conserved, traffic_ports, wait_for,
                     zeronf_cli)
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


def vm_launch(m, name, service, program, *nf_args):
    """nf.start of @program in a VM, as `zeronf vm start` makes it."""
    m.call("nf.start", **vm.start_params(name, program, service, "a",
                                         list(nf_args), mem_mb=512,
                                         restart="never"))


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
    # Each VM's initramfs (the image and its own files) was removed once
    # the guest was up: none left by the VM killed, none by the new one.
    assert not glob.glob(os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                      "zeronf-vm.*", "initrd"))


def replica_beside(managers, program, *nf_args, wait=True):
    """Service 1 with two replicas: an honest host NF and @program in a
    VM (all of group a); the chain 1, port 1; traffic ready (@wait: once
    the guest's NF runs)."""
    m = managers(ports=traffic_ports(DATA / "pcap/bittorrent.pcap"),
                 chain="1,port:1", rx_paused=True,
                 args=GROUP + ["--stall-ms", "200"])
    base = m.pool()["in_use"]
    honest = m.start_nf("forward", 1, "honest",
                        lib_args=["--trust-group", "a"])
    vm_launch(m, "guest", 1, program, *nf_args)
    if wait:
        wait_for(lambda: [n for n in running(m, 1)
                          if n["name"] == "guest"], 60,
                 "the guest's NF running")
    return m, base, honest


def honest_lost_none(m, honest, more=5000):
    """Traffic until the honest NF got @more packets; then all it got went
    out, none of it dropped."""
    m.call("rx.set", enabled=True)
    start = (honest.stats() or {}).get("rx", 0)
    wait_for(lambda: (honest.stats() or {}).get("rx", 0) > start + more,
             30, "the honest NF working")
    m.call("rx.set", enabled=False)

    def drained():
        h = honest.stats()
        return h if h and h["rx"] == h["tx"] else None
    h = wait_for(drained, 10, "the honest NF drained")
    assert sum(h["drops"].values()) == 0


def guest_gone(m, base):
    """The guest's VM killed: its slot reclaimed, every buffer back."""
    helper = next((n["pid"] for n in m.call("nf.list")["nfs"]
                   if n["name"] == "guest"), None)  # None: it crashed
    if helper is not None and os.path.exists(f"/proc/{helper}"):
        os.kill(qemu_of(helper), signal.SIGKILL)
    wait_for(lambda: not any(n["name"] == "guest"
                             for n in m.call("nf.list")["nfs"]), 15,
             "the guest reclaimed")
    st = m.wait_idle(baseline=base)
    assert m.call("group.list")["groups"][0]["pool"]["in_use"] == 0
    assert m.call("status")["ready"]
    assert m.shutdown() == 0
    return st


def test_a_hung_guest_stalls_only_its_own_packets(managers):
    """The guest's VM stopped (SIGSTOP to QEMU: a hung guest) while it is
    a replica beside an honest host NF: what the worker has for it waits,
    then drops as stalled; the honest NF loses nothing; the guest, let go
    on, takes packets again; killed, it leaves every buffer back."""
    m, base, honest = replica_beside(managers, NF_BIN["forward"])
    helper = next(n["pid"] for n in running(m, 1) if n["name"] == "guest")
    qemu = qemu_of(helper)
    os.kill(qemu, signal.SIGSTOP)
    try:
        honest_lost_none(m, honest)
        st = m.stats()
        assert st["drops"]["stalled"] > 0, st["drops"]
        guest = next(n for n in st["nfs"] if n["name"] == "guest")
    finally:
        os.kill(qemu, signal.SIGCONT)
    honest_lost_none(m, honest)
    wait_for(lambda: next(n for n in m.stats()["nfs"]
                          if n["name"] == "guest")["rx"] > guest["rx"],
             30, "the guest taking packets again")
    st = guest_gone(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert dropped == st["drops"]["stalled"] + st["drops"]["nf_exit"], \
        st["drops"]


def test_a_guest_writing_garbage_in_its_pool_harms_none(managers):
    """The vandal NF (tests/unit/nf_vandal.c --mode poolring) in a VM, first
    in the chain, writes garbage into the geometry of its group's pool's
    free ring every tick, while the manager copies every packet into the
    group for it and out again for the honest host NF (no group) next:
    the manager repairs the ring (its own geometry), the honest NF loses
    nothing, and once the VM is gone the pool is whole."""
    m = managers(ports=traffic_ports(DATA / "pcap/bittorrent.pcap"),
                 chain="2,1,port:1", rx_paused=True,
                 args=GROUP + ["--stall-ms", "200"])
    base = m.pool()["in_use"]
    honest = m.start_nf("forward", 1, "honest")
    vm_launch(m, "guest", 2, NF_BIN["test-vandal"], "--mode", "poolring")
    wait_for(lambda: next((n for n in m.stats()["nfs"]
                           if n["name"] == "guest"), {})
             .get("counters", {}).get("vandalised", 0) > 3, 60,
             "garbage written from the guest")
    honest_lost_none(m, honest, 20000)
    assert m.call("group.list")["ring_repairs"] > 0
    st = guest_gone(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert dropped == st["drops"]["nf_exit"] + st["drops"]["no_instance"]


def test_a_deployment_runs_a_service_in_vms(tmp_path):
    """A deployment file's service with `vm:` (zeronf up): its replica
    boots in a guest of the service's trust group and the chain goes
    through it; `apply` of the same file changes nothing (the VM's
    parameters compare equal); `down` leaves nothing. A service in VMs
    without a trust group is refused by `validate`, with its path."""
    from harness import unique_name
    from pcaputil import read_frames
    from zeronf import Client
    from zeronf.client import runtime_dir

    name = unique_name("v")
    trace = DATA / "pcap/bittorrent.pcap"
    body = f"""\
name: {name}
manager:
  log_dir: logs
  trust_groups: [{{name: a, buffers: 2047}}]
ports:
  - name: in
    devargs: net_pcap0,rx_pcap={trace}
  - name: out
    devargs: net_null0,no-rx=1
services:
  - name: fw
    trust_group: a
    nf: {{binary: zeronf-forward}}
    vm: {{mem_mb: 512, vcpus: 1}}
chain: [fw, port:out]
"""
    f = tmp_path / "vm.yaml"
    f.write_text(body)
    bad = tmp_path / "bad.yaml"
    bad.write_text(body.replace("    trust_group: a\n", ""))

    def cli(*a):
        return zeronf_cli(*a, timeout=120)
    r = cli("validate", bad)
    assert r.returncode == 2 and "services[0].vm" in r.stderr + r.stdout
    r = cli("up", f)
    try:
        assert r.returncode == 0, r.stderr + r.stdout
        with Client(name) as c:
            nfs = c.call("nf.list")["nfs"]
            assert [(n["name"], n["trust_group"]) for n in nfs] == \
                [("fw", "a")]
            assert c.call("launch.list")["launched"][0]["binary"] \
                .endswith("/zeronf-vm")
            n = len(read_frames(trace))
            wait_for(lambda: c.call("port.list")["ports"][1]["tx"] >= n,
                     30, "the trace through the guest")
        r = cli("apply", f)
        assert r.returncode == 0, r.stderr
        assert "already matches" in r.stdout, r.stdout
    finally:
        r = cli("down", name)
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(runtime_dir(name))


def test_an_untrusted_vm_on_a_vhost_user_port_forwards_by_copy(managers,
                                                              tmp_path):
    """The copying baseline (docs/vm-nfs.md): an untrusted VM (no trust
    group, no slot), launched and supervised by the manager (`zeronf vm
    start --vhost-user`), whose virtio-net NIC is the manager's vhost-user
    port 1 (net_vhost), running zeronf-vmfwd. The capture enters port 0,
    goes out of port 1 into the guest, comes back in on port 1 and leaves
    on port 2 (that port's chain): the output is the input, per flow. A
    VM asked for a socket the manager has no port at is refused."""
    out, sock = tmp_path / "out.pcap", tmp_path / "vhost.sock"
    m = managers(ports=[f"net_pcap0,rx_pcap={PCAP}",
                        f"net_vhost1,iface={sock},queues=1",
                        f"net_pcap2,tx_pcap={out}"],
                 chain="port:1", rx_paused=True)
    m.call("chain.set", port=1, hops=["port:2"])
    r = zeronf_cli("-i", m.name, "vm", "start", "untrusted", "zeronf-vmfwd",
                   "--vhost-user", tmp_path / "nothing.sock")
    assert r.returncode == 1 and "no vhost-user port at" in r.stderr
    r = zeronf_cli("-i", m.name, "vm", "start", "untrusted", "zeronf-vmfwd",
                   "--vhost-user", sock, "--mem", "512")
    assert r.returncode == 0, r.stderr
    log = Path(m.call("launch.list")["log_dir"]) / "untrusted.log"
    wait_for(lambda: log.exists() and "forwarding on eth0" in
             log.read_text(errors="replace"), 60, "the guest's forwarder up")
    assert not m.call("nf.list")["nfs"]  # it registers nothing
    frames = read_frames(PCAP)
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][2]["tx"] >= len(frames),
             60, "all packets through the guest")
    st = m.wait_idle()
    ports = st["ports"]
    assert ports[1]["tx"] == ports[1]["rx"] == len(frames)
    assert sum(st["drops"].values()) == 0, st["drops"]
    r = zeronf_cli("-i", m.name, "nf", "stop", "untrusted")
    assert r.returncode == 0, r.stderr
    wait_for(lambda: not m.call("launch.list")["launched"], 30,
             "the VM stopped")
    assert "frames " in log.read_text(errors="replace")  # a clean stop
    assert m.shutdown() == 0
    assert_same_per_flow(frames, read_frames(out))


def test_a_guest_writing_garbage_in_its_rings_harms_none(managers):
    """The vandal NF (--mode ring) in a VM writes garbage into its own RX
    and TX rings' headers in the group's file, before its first packet and
    every tick, beside an honest host replica of its service: the manager
    keeps its own side of every ring (mgr/trust/ring_guard.h), the honest NF
    loses nothing; the vandal may crash on its own garbage (its VM then
    powers off); once it is gone every buffer is back."""
    m, base, honest = replica_beside(managers, NF_BIN["test-vandal"],
                                     "--mode", "ring", wait=False)

    def garbage_or_gone():
        g = next((n for n in m.stats()["nfs"] if n["name"] == "guest"),
                 None)
        if g is not None:
            return g["counters"].get("vandalised", 0) > 3
        inst = m.call("launch.list")["launched"][0]["instances"][0]
        return inst["last_exit"] is not None  # it wrote, and crashed
    wait_for(garbage_or_gone, 60, "garbage written from the guest")
    honest_lost_none(m, honest)
    guest_gone(m, base)


def test_a_guest_cannot_reach_another_groups_packets(managers):
    """An NF of group a in a VM (tests/unit/nf_group.c) reads a packet of
    its group at the address a host NF of a put it at (one address space
    for the group, host and guest), and faults on a packet of group b:
    the guest maps a's file only."""
    m = managers(args=["--trust-group", "a:1023", "--trust-group",
                       "b:1023"])
    na = m.start_nf("test-group", 1, "host-a",
                    lib_args=["--trust-group", "a"])
    nb = m.start_nf("test-group", 2, "host-b",
                    lib_args=["--trust-group", "b"])
    vm_launch(m, "guest", 3, NF_BIN["test-group"])
    wait_for(lambda: running(m, 3), 60, "the guest's NF running")

    def call(nf, cmd, **args):
        return m.call("nf.call", instance=nf, command=cmd, args=args)
    slot = {n["name"]: n["instance"] for n in m.call("nf.list")["nfs"]}
    secret_a = call(slot["host-a"], "put", text="secret-of-a")
    secret_b = call(slot["host-b"], "put", text="secret-of-b")
    assert call(slot["guest"], "peek", addr=secret_a["addr"], len=11) == \
        {"text": "secret-of-a"}
    assert call(slot["guest"], "peek", addr=secret_b["addr"], len=11) == \
        {"fault": True}
    del na, nb


ROUTES = "0.0.0.0/0 1\n::/0 1\n"
FW_RULES = ("-P DROP\n--ctstate ESTABLISHED,RELATED -j ACCEPT\n"
            "-p tcp --syn -j ACCEPT\n-p udp --dport 1:1023 -j ACCEPT\n"
            "-p icmp -j ACCEPT\n")
# bursts larger than the capture: the same verdicts at any speed
RL_CONF = ('{"classes": [{"name": "web", "match": {"proto": "tcp"}, '
           '"rate": "1gbit", "burst": "10mb", "per": "flow", '
           '"per_rate": "1kpps", "per_burst": "1000p"}], '
           '"default": {"rate": "100pps", "burst": "1000p"}}')


@pytest.mark.parametrize("kind, nf_args", [
    ("monitor", []),
    ("dpi", []),
    ("filter", ["--syn-rate", "1", "--syn-burst", "3"]),
    ("router", ["--routes", "ROUTES", "--default-port", "1"]),
    ("firewall", ["--rules", "RULES"]),
    ("ratelimit", ["--config", "RLCONF"]),
    ("nat", ["--snat", "0.0.0.0/0=198.51.100.1"]),
    ("lb", ["--vip", "web=208.80.152.3:80", "--backend",
            "web=a@10.9.0.11:8080", "--backend", "web=b@10.9.0.12:8080"]),
])
def test_the_same_nf_in_a_guest_as_on_the_host(managers, tmp_path, kind,
                                               nf_args):
    """The sample NFs, unchanged (the same binaries), in a VM of group a
    and as a host process of a, each the only hop from port 0 to port 1:
    the same frames come out (per flow) and the NF counts the same. The
    router reads its routes file, the firewall its rules, the rate limiter
    its configuration, in the guest at the host's path (vm --file)."""
    routes = tmp_path / "routes.txt"
    routes.write_text(ROUTES)
    rules = tmp_path / "rules.txt"
    rules.write_text(FW_RULES)
    rlconf = tmp_path / "rl.json"
    rlconf.write_text(RL_CONF)
    files = {"ROUTES": routes, "RULES": rules, "RLCONF": rlconf}
    args = [str(files[a]) if a in files else a for a in nf_args]
    results = []
    for where in ("host", "guest"):
        out = tmp_path / f"{where}.pcap"
        m = managers(ports=[f"net_pcap0,rx_pcap={PCAP}",
                            f"net_pcap1,tx_pcap={out}"],
                     chain="1,port:1", rx_paused=True, args=GROUP)
        if where == "host":
            m.start_nf(kind, 1, "nf", nf_args=args,
                       lib_args=["--trust-group", "a"])
        else:
            m.call("nf.start", **vm.start_params(
                "nf", NF_BIN[kind], 1, "a", args, mem_mb=512,
                restart="never", files=list(files.values())))
            wait_for(lambda: running(m, 1), 60, "the guest's NF running")
        m.call("rx.set", enabled=True)
        n = len(read_frames(PCAP))
        wait_for(lambda: m.call("port.list")["ports"][0]["rx"] >= n, 30,
                 "the capture in")
        st = m.wait_idle()
        nf = st["nfs"][0]
        results.append((read_frames_after(m, out), nf["rx"], nf["tx"],
                        nf["counters"]))
    host, guest = results
    assert host[0], "the host NF passed nothing: a test of nothing"
    assert_same_per_flow(host[0], guest[0])
    assert host[1:] == guest[1:]


def read_frames_after(m, out):
    """The output capture, once the manager stopped (net_pcap closes it)."""
    assert m.shutdown() == 0
    return read_frames(out)


def test_zeronf_vm_takes_libzeronfs_options_from_its_table():
    """Issue 30: zeronf-vm retyped libzeronf's option table, so a new
    libzeronf option shifted its argument split unseen. It parses with the
    one table (lib/common/zn_nf_options.h): every libzeronf option is
    known to it, and one it has no use for is refused by name."""
    import subprocess
    from zeronf import paths
    prog = str(paths.find_program("zeronf-vm"))
    for opt, val in (("--wait", "3"), ("--guest", "x")):
        r = subprocess.run([prog, opt, val, "--", "--mem", "64"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode != 0
        assert r.stderr.startswith(f"zeronf-vm: {opt}: an option of NF "
                                   f"processes, not of zeronf-vm"), r.stderr

"""NFs never open, probe or configure the manager's ports (issue 10, defects
1 and 2); the one an NF transmits on itself (net_null, net_tap) it attaches,
and nothing else of it changes. A DPDK secondary's EAL probes the primary's virtual devices again
unless the primary keeps them to itself: net_pcap then reopens its files
from arguments cut to 63 characters (truncating outputs, even the input
capture when the cut path names it, or calling strtol(NULL) when the cut
falls after `infinite_rx`). Here every port kind the README lists keeps its
files and kernel state byte for byte while NFs start, stop and are killed,
and a capture written under traffic only ever grows."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from harness import DATA, wait_for
from netns import sh, unique_tag
from pcaputil import read_frames

TRACE = DATA / "pcap" / "wikipedia.pcap"


def files_state(d: Path) -> dict:
    """Every file under d but the processes' logs: size and SHA-256."""
    return {str(p.relative_to(d)): (p.stat().st_size,
                                    hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(d.rglob("*"))
            if p.is_file() and p.suffix != ".log"}


def link_state(ifname: str | None) -> dict | None:
    """What an NF probing a kernel-backed port could change: the link's
    flags, MTU, promiscuity, and the packet sockets bound to it."""
    if ifname is None:
        return None
    info = json.loads(sh("ip", "-d", "-j", "link", "show", "dev",
                         ifname).stdout)[0]
    idx = str(info["ifindex"])
    with open("/proc/net/packet") as f:
        socks = sum(1 for line in list(f)[1:] if line.split()[4] == idx)
    return {k: info.get(k) for k in ("flags", "mtu", "promiscuity",
                                     "operstate", "txqlen")} | {
        "packet_sockets": socks}


def nfs_come_and_go(m):
    """Three NFs of other services: one killed with -9, one stopped, one
    left running. Each must start: an NF that finds a port attached in
    its own process refuses to run."""
    a = m.start_nf("forward", 3, "a")
    b = m.start_nf("monitor", 4, "b")
    a.proc.signal(signal.SIGKILL)
    wait_for(lambda: m.nf_by_pid(a.proc.pid) is None, 5, "a gone")
    b.proc.signal(signal.SIGTERM)
    assert b.proc.wait(10) == 0
    c = m.start_nf("forward", 3, "c")
    return [a, b, c]


@pytest.fixture
def veth():
    """A veth pair in the root namespace (for AF_PACKET/AF_XDP ports)."""
    tag = unique_tag(7)
    a, b = f"zu{tag}a", f"zu{tag}b"
    sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
    for x in (a, b):
        sh("sysctl", "-q", "-w", f"net.ipv6.conf.{x}.disable_ipv6=1",
           check=False)
        sh("ip", "link", "set", x, "up")
    yield a
    sh("ip", "link", "del", a, check=False)


KINDS = ["pcap", "af_packet", "af_xdp", "tap", "ring", "null"]


@pytest.mark.parametrize("kind", KINDS)
def test_port_state_unchanged_while_nfs_come_and_go(managers, tmp_path,
                                                    kind, request):
    # Paths relative to the processes' directory: short enough that the
    # 63-character cut leaves them whole, so a probing NF hits the real
    # files (with long paths it wrote stray files instead: also seen).
    d = tmp_path / "ports"
    d.mkdir()
    (d / "in.pcap").write_bytes(TRACE.read_bytes())
    ifname = None
    # Port 1 of every manager replays the trace into a capture of its
    # own, so there is a written capture a probing NF would truncate.
    side = "net_pcap9,rx_pcap=ports/in.pcap,tx_pcap=ports/side.pcap"
    if kind == "pcap":
        port0 = "net_pcap0,rx_pcap=ports/in.pcap,tx_pcap=ports/out.pcap"
    elif kind in ("af_packet", "af_xdp"):
        ifname = request.getfixturevalue("veth")
        port0 = f"net_{kind}0,iface={ifname}"
    elif kind == "tap":
        ifname = f"zu{unique_tag(8)}"
        port0 = f"net_tap0,iface={ifname}"
    elif kind == "ring":
        port0 = "net_ring0"
    else:
        port0 = "net_null0,no-rx=1"
    out_port = 0 if kind == "pcap" else 1
    try:
        m = managers(ports=[port0, side], chain=f"port:{out_port}",
                     cwd=tmp_path, rx_paused=True)
    except RuntimeError as e:
        if kind == "af_xdp" and "af_xdp" in str(e).lower():
            pytest.skip(f"AF_XDP unavailable here: {str(e)[-300:]}")
        raise
    if kind == "tap":  # no IPv6 router solicitations from now on
        sh("sysctl", "-q", "-w", f"net.ipv6.conf.{ifname}.disable_ipv6=1")
    base = m.pool()["in_use"]  # what af_xdp and tap keep for RX
    m.call("rx.set", enabled=True)
    n = len(read_frames(TRACE)) * (2 if kind == "pcap" else 1)
    wait_for(lambda: m.call("port.list")["ports"][out_port]["tx"] >= n, 20,
             "the trace out")
    m.wait_idle(baseline=base)
    time.sleep(0.3)  # the kernel side of a tap or veth settles
    before = (files_state(tmp_path), link_state(ifname),
              m.call("port.list")["ports"])
    assert before[0]["ports/side.pcap" if out_port else "ports/out.pcap"][
        0] > 24, "the capture has packets"
    scans = m.call("status")["registry"].get("port_scans_refused")
    nfs = nfs_come_and_go(m)
    # The one thing that changes: which NFs hold a TX queue of a port
    # whose PMD lets NFs transmit themselves (net_null, net_tap:
    # docs/architecture.md "NF to port"). An NF attaches those ports only;
    # the gone NFs' queues come back once their slots are free.
    own_tx = kind in ("tap", "null")
    wait_for(lambda: [[n["name"] for n in p["nf_tx"]["nfs"]] for p in
                      m.call("port.list")["ports"]] ==
             ([["c"], []] if own_tx else [[], []]), 5, "queues held")
    after = (files_state(tmp_path), link_state(ifname),
             m.call("port.list")["ports"])
    for p in before[2] + after[2]:
        p.pop("nf_tx")
    assert after == before
    for nf in nfs:
        out = "\n".join(ln for ln in nf.proc.output().lower().splitlines()
                        if not (own_tx and "this nf transmits on tx queue"
                                in ln))
        for word in ("pcap", "tap", "af_packet", "xdp", "ring", "null",
                     "vdev", "probe"):
            assert word not in out, f"{nf.name} log mentions {word}:\n{out}"
    # NFs opened nothing in the ports' directory (a tap's queue fds: only
    # the NF that transmits on it)
    c = nfs[-1]
    fds = [os.readlink(f) for f in Path(f"/proc/{c.proc.pid}/fd").iterdir()]
    assert not [f for f in fds if str(tmp_path) in f and
                not f.endswith(".log") or ("tun" in f and kind != "tap")], \
        fds
    # the manager answered each NF's device scan with no device
    assert m.call("status")["registry"]["port_scans_refused"] == \
        scans + len(nfs)


def test_capture_under_traffic_only_grows(managers, tmp_path):
    """Traffic into a capture of its own port; NFs of another service start
    and stop five times: the output never shrinks and ends a valid capture
    of every packet the port sent."""
    out = tmp_path / "out.pcap"
    m = managers(ports=[f"net_pcap0,rx_pcap={TRACE},infinite_rx=1",
                        "net_pcap1,tx_pcap=out.pcap"],
                 chain="1,port:1", rx_paused=True, cwd=tmp_path)
    base = m.pool()["in_use"]
    m.start_nf("forward", 1, "fwd")
    m.call("rx.set", enabled=True)
    wait_for(lambda: out.exists() and out.stat().st_size > 200_000, 30,
             "output growing")
    sizes = [out.stat().st_size]
    head = out.read_bytes()[:100_000]
    for i in range(5):
        nf = m.start_nf("monitor", 2, f"other{i}")
        sizes.append(out.stat().st_size)
        (nf.proc.signal(signal.SIGKILL) if i % 2 else
         nf.proc.signal(signal.SIGTERM))
        wait_for(lambda: m.nf_by_pid(nf.proc.pid) is None, 5, "NF gone")
        sizes.append(out.stat().st_size)
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    assert sizes == sorted(sizes), f"output shrank: {sizes}"
    assert out.read_bytes()[:100_000] == head
    tx = st["ports"][1]["tx"]
    assert m.shutdown() == 0
    assert len(read_frames(out)) == tx > 0
    assert sorted(p.name for p in tmp_path.iterdir()
                  if p.suffix != ".log") == ["out.pcap"]


def _rel_dir(base: Path, n: int) -> Path:
    d = base / ("d" * n)
    d.mkdir()
    return d


def test_cut_devargs_name_the_input(managers, tmp_path):
    """The defect's worst case: `rx_pcap=D/in.pcap,tx_pcap=D/in.pcap.out.
    pcap` with D 15 characters long; cut to 63 characters the arguments
    read `...,tx_pcap=D/in.pcap`: a probing NF opened the INPUT for
    writing. Relative paths (manager and NFs in one directory) make the
    cut independent of where the test runs."""
    d = _rel_dir(tmp_path, 15)
    inp = d / "in.pcap"
    inp.write_bytes(TRACE.read_bytes())
    args = f"rx_pcap={d.name}/in.pcap,tx_pcap={d.name}/in.pcap.out.pcap"
    assert len(args) > 63 and args[:63].endswith(f"tx_pcap={d.name}/in.pcap")
    m = managers(ports=[f"net_pcap0,{args}"], chain="1,port:0",
                 rx_paused=True, cwd=tmp_path)
    before = files_state(d)
    m.start_nf("forward", 1)
    m.start_nf("forward", 2)
    assert files_state(d) == before
    assert inp.read_bytes() == TRACE.read_bytes()
    m.call("rx.set", enabled=True)
    n = len(read_frames(TRACE))
    wait_for(lambda: m.call("port.list")["ports"][0]["tx"] == n, 20,
             "the trace out")
    assert m.shutdown() == 0
    assert read_frames(d / "in.pcap.out.pcap") == read_frames(TRACE)
    assert sorted(p.name for p in d.iterdir()) == ["in.pcap",
                                                   "in.pcap.out.pcap"]
    assert sorted(p.name for p in tmp_path.iterdir()
                  if not p.name.endswith(".log")) == [d.name]


@pytest.mark.parametrize("tail", ["", ",tx_pcap=/dev/null"])
def test_cut_after_infinite_rx_does_not_crash_nfs(managers, tmp_path, tail):
    """Arguments cut right after `infinite_rx` (no `=1`): a probing NF's
    net_pcap called strtol(NULL) and crashed (75 and 93 characters with
    the port name, as pytest's temporary path made them on a fresh
    machine)."""
    d = _rel_dir(tmp_path, 35)
    (d / "in.pcap").write_bytes(TRACE.read_bytes())
    args = f"rx_pcap={d.name}/in.pcap,infinite_rx=1{tail}"
    assert args[:63].endswith(",infinite_rx") and len(args) > 63
    m = managers(ports=[f"net_pcap0,{args}", "net_null0,no-rx=1"],
                 chain="1,port:1", rx_paused=True, cwd=tmp_path)
    base = m.pool()["in_use"]
    nfs = [m.start_nf("forward", 1, f"f{i}") for i in range(2)]
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] > 10_000, 20,
             "traffic")
    m.call("rx.set", enabled=False)
    m.wait_idle(baseline=base)
    assert all(nf.proc.alive() for nf in nfs)
    assert (d / "in.pcap").read_bytes() == TRACE.read_bytes()


def test_secondary_never_sees_manager_ports(managers, tmp_path):
    """Any DPDK secondary (not only our NFs) is told of no device: DPDK's
    own dpdk-proc-info, run against the instance, lists no port and leaves
    the capture alone."""
    tool = "/usr/bin/dpdk-proc-info"
    if not os.path.exists(tool):
        pytest.skip("dpdk-proc-info not installed")
    out = tmp_path / "out.pcap"
    (tmp_path / "in.pcap").write_bytes(TRACE.read_bytes())
    m = managers(ports=["net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap"],
                 chain="port:0", rx_paused=True, cwd=tmp_path)
    m.call("rx.set", enabled=True)
    n = len(read_frames(TRACE))
    wait_for(lambda: m.call("port.list")["ports"][0]["tx"] == n, 20,
             "the trace out")
    size = out.stat().st_size
    r = subprocess.run([tool, "--file-prefix", m.name, "--log-level",
                        "error", "--", "--stats"], capture_output=True,
                       text=True, timeout=30, cwd=tmp_path)
    assert out.stat().st_size == size
    assert "net_pcap" not in r.stdout + r.stderr
    assert m.shutdown() == 0
    assert read_frames(out) == read_frames(TRACE)
    assert sorted(p.name for p in tmp_path.iterdir()
                  if p.suffix != ".log") == ["in.pcap", "out.pcap"]

"""Kernel TCP and UDP between two network namespaces, bridged by ZeroNF:
two net_af_packet or net_af_xdp ports on veths, or two net_tap ports whose
taps live in the namespaces; a chain of a monitor and a cross-connecting forward NF. The kernels' traffic must arrive intact; killing
the forward NF mid-transfer loses packets (counted), TCP recovers them."""

from __future__ import annotations

import signal
import sys
import textwrap
import time

import pytest

from harness import scaled, wait_for
from netns import Host, unique_tag

SERVER = textwrap.dedent("""
    import hashlib, socket, sys
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 5001)); s.listen(1); print("ready", flush=True)
    c, _ = s.accept(); h = hashlib.sha256(); n = 0
    while True:
        b = c.recv(65536)
        if not b: break
        h.update(b); n += len(b)
    print(n, h.hexdigest(), flush=True)
""")

CLIENT = textwrap.dedent("""
    import hashlib, os, socket, sys
    data = os.urandom(int(sys.argv[2]))
    s = socket.create_connection((sys.argv[1], 5001), timeout=60)
    s.sendall(data); s.shutdown(socket.SHUT_WR); s.recv(1)
    print(len(data), hashlib.sha256(data).hexdigest(), flush=True)
""")

UDP_RX = textwrap.dedent("""
    import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 5002)); s.settimeout(3); print("ready", flush=True)
    got = set()
    try:
        while True:
            got.add(int(s.recv(2048)[:8]))
    except socket.timeout:
        pass
    print(len(got), flush=True)
""")


@pytest.fixture
def hosts():
    tag = unique_tag(0)
    h = [Host(tag + "a", "10.231.0.1"), Host(tag + "b", "10.231.0.2")]
    yield h
    for x in h:
        x.close()


@pytest.fixture(params=["af_packet", "af_xdp", "tap"])
def bridge(request, managers, hosts):
    """Two ports, one per host, bridged by a chain of a monitor and a
    cross-connecting forward NF."""
    if request.param in ("af_packet", "af_xdp"):
        ports = [f"net_{request.param}{i},iface={h.attach_veth()}"
                 for i, h in enumerate(hosts)]
    else:
        ports = [f"net_tap{i},iface=zt{h.tag}" for i, h in enumerate(hosts)]
    m = managers(ports=ports, chain="1,2", rx_paused=True)
    if request.param == "tap":
        for h in hosts:
            h.adopt(f"zt{h.tag}")
    m.start_nf("monitor", 1)
    fwd = m.start_nf("forward", 2, nf_args=["--cross-connect"])
    m.call("rx.set", enabled=True)  # the hosts' first packets too
    return m, fwd


def tcp_transfer(hosts, nbytes, during=None):
    srv = hosts[1].popen(sys.executable, "-c", SERVER)
    assert srv.stdout.readline().strip() == "ready"
    cli = hosts[0].popen(sys.executable, "-c", CLIENT, hosts[1].addr,
                         str(nbytes))
    if during:
        during()
    sent = cli.communicate(timeout=120)[0].split()
    got = srv.communicate(timeout=30)[0].split()
    return sent, got


def test_tcp_and_udp_cross_zeronf(bridge, hosts):
    m, _ = bridge
    sent, got = tcp_transfer(hosts, 4 << 20)
    assert sent == got and int(got[0]) == 4 << 20
    # UDP: 500 datagrams; a bridge on an idle machine loses none.
    rx = hosts[1].popen(sys.executable, "-c", UDP_RX)
    assert rx.stdout.readline().strip() == "ready"
    hosts[0].run(sys.executable, "-c",
                 "import socket,time\n"
                 "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
                 "for i in range(500):\n"
                 "  s.sendto(b'%08d' % i + b'x'*500, ('10.231.0.2',5002))\n"
                 "  time.sleep(0.0005)\n")
    assert int(rx.communicate(timeout=30)[0].split()[-1]) == 500
    st = m.stats()
    mon = [n for n in st["nfs"] if n["service"] == 1][0]
    assert mon["counters"]["tcp"] > 1000 and mon["counters"]["udp"] >= 500
    assert mon["counters"]["arp"] >= 2
    assert sum(st["drops"].values()) == 0


def test_tcp_survives_nf_kill(bridge, hosts):
    m, fwd = bridge

    def kill_and_restart():
        # Kill while the transfer is in full swing.
        wait_for(lambda: fwd.stats()["rx"] > 3000, 30, "TCP flowing",
                 interval=0.005)
        fwd.proc.signal(signal.SIGKILL)
        wait_for(lambda: m.nf_by_pid(fwd.proc.pid) is None, scaled(10), "NF gone")
        time.sleep(0.2)
        m.start_nf("forward", 2, "fwd2", nf_args=["--cross-connect"])

    sent, got = tcp_transfer(hosts, 64 << 20, during=kill_and_restart)
    assert sent == got, "TCP data corrupted"
    st = m.stats()
    assert st["status"]["registry"]["died"] == 1
    # While no forward NF ran, packets were dropped and counted.
    assert st["drops"]["no_instance"] + st["drops"]["nf_exit"] > 0

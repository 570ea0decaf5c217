"""Chains across hosts (docs/multihost.md): two ZeroNF hosts, each a
manager with a port on a veth into a fabric bridge, a client namespace on
the first and a server namespace on the second; kernel TCP between them
crosses a chain of three NFs, one on the first host and two on the second,
the packets between hosts in NSH over VXLAN-GPE, plain VXLAN or Ethernet.
tcpdump on the fabric decodes what crossed; a kernel vxlan device is the
far end of a plain-VXLAN path; NFs are killed and peers go away under
load.
Long: one picture (two hosts, a fabric, a client and a server) and the
helpers that build and read it, which every test here shares; the
deployment-file tests are test_multihost_deploy.py."""
from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from harness import REPO, scaled, wait_for
from netns import Host, no_offloads, sh, unique_tag
from test_kernel_traffic import CLIENT, SERVER, tcp_transfer

TCPDUMP = shutil.which("tcpdump") or "/usr/bin/tcpdump"
NET = "10.233.0"       # client and server
FAB = "192.168.233"    # the fabric
# The fabric's MTU leaves room for the encapsulation of the hosts' 1500
# (as an overlay's underlay does: jumbo frames, or smaller inner MTUs)
FAB_MTU = 1600

# SPI 10 client -> server, 11 back; as host 1 and host 2 write them
FWD = {1: ["svc:1", "svc:2@2", "svc:3@2", "port:1@2"],
       2: ["svc:1@1", "svc:2", "svc:3", "port:1"]}
REV = {1: ["svc:3@2", "svc:2@2", "svc:1", "port:0"],
       2: ["svc:3", "svc:2", "svc:1@1", "port:0@1"]}


class Fabric:
    """A bridge in the root namespace and veths into it: a port per
    ZeroNF host (its other end in the bridge), or a namespace of its own
    (a kernel host on the fabric)."""

    def __init__(self, tag: str):
        self.tag = tag
        self.br = f"zf{tag}"
        self.links: list[str] = []
        self.bridge_end: dict[str, str] = {}  # a port's end in the bridge
        sh("ip", "link", "add", self.br, "mtu", str(FAB_MTU), "type",
           "bridge")
        sh("sysctl", "-q", "-w", f"net.ipv6.conf.{self.br}.disable_ipv6=1",
           check=False)
        sh("ip", "link", "set", self.br, "up")

    def port(self, i: int) -> str:
        """A veth pair: one end in the bridge, the other (returned) for a
        manager's AF_PACKET port."""
        dev, br_end = f"zq{self.tag}{i}", f"zr{self.tag}{i}"
        sh("ip", "link", "add", dev, "mtu", str(FAB_MTU), "type", "veth",
           "peer", "name", br_end, "mtu", str(FAB_MTU))
        for d in (dev, br_end):
            sh("sysctl", "-q", "-w", f"net.ipv6.conf.{d}.disable_ipv6=1",
               check=False)
            no_offloads(d)
        sh("ip", "link", "set", br_end, "master", self.br)
        sh("ip", "link", "set", br_end, "up")
        sh("ip", "link", "set", dev, "up")
        self.links.append(dev)
        self.bridge_end[dev] = br_end
        return dev

    @staticmethod
    def mac(dev: str) -> str:
        with open(f"/sys/class/net/{dev}/address") as f:
            return f.read().strip()

    def close(self) -> None:
        for d in self.links:
            sh("ip", "link", "del", d, check=False)
        sh("ip", "link", "del", self.br, check=False)


class Capture:
    """tcpdump decoding what crosses a device."""

    def __init__(self, dev: str):
        self.p = subprocess.Popen([TCPDUMP, "-i", dev, "-nn", "-vvv", "-l"],
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        # tcpdump says it listens once the capture is open
        line = self.p.stderr.readline()
        assert "listening" in line, line

    def records(self) -> list[str]:
        """One text per packet, as tcpdump decoded it."""
        time.sleep(0.3)
        self.p.send_signal(signal.SIGINT)
        text = self.p.communicate(timeout=30)[0]
        out, cur = [], []
        for line in text.splitlines():
            if re.match(r"\d\d:\d\d:\d\d\.", line) and cur:
                out.append("\n".join(cur))
                cur = []
            cur.append(line)
        if cur:
            out.append("\n".join(cur))
        return out


def start(managers, ports):
    """A manager on @p ports. DPDK 22.11's AF_PACKET driver names its
    fanout group by its process id XOR the interface's index: a second
    manager whose two numbers XOR to the first's is refused (EINVAL) the
    group. Another process id is another name."""
    for attempt in range(4):
        try:
            return managers(ports=ports, rx_paused=True)
        except RuntimeError as e:
            if "PACKET_FANOUT" not in str(e) or attempt == 3:
                raise


@pytest.fixture
def two_hosts(managers):
    """Host 1: client namespace on port 0, fabric on port 1; host 2:
    fabric on port 0, server namespace on port 1. Returned unconfigured
    but for the fabric itself: (managers, fabric devs, client, server,
    fabric)."""
    if not shutil.which("tcpdump"):
        pytest.skip("no tcpdump (scripts/setup.sh installs it)")
    tag = unique_tag(5)
    fab = Fabric(tag)
    cli, srv = Host(tag + "c", f"{NET}.1"), Host(tag + "s", f"{NET}.2")
    try:
        fa, fb = fab.port(1), fab.port(2)
        m1 = start(managers, [f"net_af_packet0,iface={cli.attach_veth()}",
                              f"net_af_packet1,iface={fa}"])
        m2 = start(managers, [f"net_af_packet0,iface={fb}",
                              f"net_af_packet1,iface={srv.attach_veth()}"])
        m1.call("fabric.set", port=1, host=1, ip=f"{FAB}.1")
        m2.call("fabric.set", port=0, host=2, ip=f"{FAB}.2")
        yield (m1, m2), (fa, fb), cli, srv, fab
    finally:
        cli.close()
        srv.close()
        fab.close()


def peer(m, host: int, ip: str, mac: str | None, **kw) -> None:
    """A peer (its MAC address learned by ARP when @p mac is None)."""
    kw.setdefault("mtu", FAB_MTU)
    if mac is not None:
        kw["mac"] = mac
    m.call("fabric.peer.set", host=host, ip=ip, **kw)


def chain_of_three(two_hosts, encap: str = "vxlan-gpe", mac: bool = True):
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    peer(m1, 2, f"{FAB}.2", Fabric.mac(fb) if mac else None, encap=encap,
         name="two")
    peer(m2, 1, f"{FAB}.1", Fabric.mac(fa) if mac else None, encap=encap,
         name="one")
    for m, h in ((m1, 1), (m2, 2)):
        assert m.call("path.set", spi=10, hops=FWD[h])["spi"] == 10
        assert m.call("path.set", spi=11, hops=REV[h])["spi"] == 11
    m1.call("chain.set", port=0, hops=FWD[1])
    m2.call("chain.set", port=1, hops=REV[2])
    nfs = [m1.start_nf("monitor", 1), m2.start_nf("monitor", 2),
           m2.start_nf("monitor", 3)]
    for m in (m1, m2):
        m.call("rx.set", enabled=True)
    return nfs


def transfer_ok(cli, srv, nbytes: int = 4 << 20, during=None) -> bool:
    sent, got = tcp_transfer([cli, srv], nbytes, during)
    return sent == got and int(got[0]) == nbytes


def peers(m) -> dict:
    return {p["host"]: p for p in m.call("fabric.show")["peers"]}


def kernel_tx_dropped(dev: str) -> int:
    with open(f"/sys/class/net/{dev}/statistics/tx_dropped") as f:
        return int(f.read())


def lost_on_the_way(two_hosts) -> tuple[int, int]:
    """What a counter says was lost between the hosts' fabric peers, host 1
    to host 2 and back: the sender's port dropped it (a stalled TX, the
    PMD's oerrors), a veth of the fabric could not hand it on (its
    tx_dropped: the receiving CPU's backlog was full) or the receiver's
    packet socket had no room in its ring (imissed: tests/system/
    test_afpacket_drops.py). A busy machine loses some there, as any
    network does; TCP sends them again. Nothing else may go missing. The
    counters count the hosts' ARP probes of each other too, which the
    peers' tx and rx do not: an upper bound of what went missing."""
    (m1, m2), (fa, fb), *_, fab = two_hosts

    def port(m, i):
        p = m.call("port.list")["ports"][i]
        return p["drops"].get("stalled", 0) + p["hw"]["oerrors"], \
            p["hw"]["imissed"]

    (out1, in1), (out2, in2) = port(m1, 1), port(m2, 0)
    ka = kernel_tx_dropped(fa) + kernel_tx_dropped(fab.bridge_end[fb])
    kb = kernel_tx_dropped(fb) + kernel_tx_dropped(fab.bridge_end[fa])
    return out1 + ka + in2, out2 + kb + in1


@pytest.mark.parametrize("encap", ["vxlan-gpe", "vxlan", "ethernet"])
def test_kernel_tcp_through_three_nfs_on_two_hosts(two_hosts, encap):
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    nfs = chain_of_three(two_hosts, encap)
    assert transfer_ok(cli, srv)
    # every NF saw the transfer, both ways
    for nf in nfs:
        c = nf.stats()["counters"]
        assert c["tcp"] > 2800, (nf.service, c)
    # what host 1 sent host 2 in NSH is what host 2 took from it, and back,
    # once what is on the wire between them (the last ACKs) has arrived
    # (what a counter says was lost on the way aside)
    def settled():
        p1, p2 = peers(m1)[2], peers(m2)[1]
        l12, l21 = lost_on_the_way(two_hosts)
        return (p1, p2) if \
            p2["rx"] <= p1["tx"] <= p2["rx"] + l12 and \
            p1["rx"] <= p2["tx"] <= p1["rx"] + l21 else None
    try:
        p1, p2 = wait_for(settled, 5, "the hosts' counts agree")
    except TimeoutError:
        p1, p2 = peers(m1)[2], peers(m2)[1]
        raise AssertionError((p1, p2, lost_on_the_way(two_hosts),
                              m1.stats()["drops"], m2.stats()["drops"],
                              m1.call("fabric.show")["ingress"],
                              m2.call("fabric.show")["ingress"])) from None
    assert p1["tx"] > 2800 and p2["tx"] > 100
    for m in (m1, m2):
        show = m.call("fabric.show")
        assert all(v == 0 for k, v in show["ingress"].items()
                   if k != "arp_answered"), show
        drops = m.stats()["drops"]
        assert not any(drops.get(k) for k in (
            "nsh_malformed", "nsh_no_path", "nsh_ttl", "nsh_mtu",
            "peer_down")), drops
    for m in (m1, m2):
        m.wait_idle()


def test_what_a_stopped_host_could_not_take_is_counted(two_hosts):
    """Host 2's manager stopped (SIGSTOP) while UDP crosses to it: its
    packet socket's ring fills and the kernel drops the rest. Every
    packet host 1 sent it is then either taken or counted as lost (host 2
    port's imissed); the bound above allows only the ARP probes host 1
    sent it meanwhile (lost_on_the_way counts those too)."""
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    chain_of_three(two_hosts, "ethernet")
    assert transfer_ok(cli, srv, 1 << 20)  # the hosts' ARP entries too

    def arrived():
        p1, p2 = peers(m1)[2], peers(m2)[1]
        lost = lost_on_the_way(two_hosts)[0]
        return (p1["tx"], p2["rx"], lost) \
            if p2["rx"] + lost >= p1["tx"] else None
    tx0, rx0, lost0 = wait_for(arrived, scaled(10),
                               "the transfer's last packets")
    probes0 = m1.call("fabric.show")["probes_sent"]

    def client_port():  # host 1's port from the client: taken, missed
        p = m1.call("port.list")["ports"][0]
        return p["rx"], p["hw"]["imissed"]
    took0 = client_port()[0]
    m2.proc.signal(signal.SIGSTOP)
    try:
        # 6 rounds of 500, each through host 1 before the next: host 1's
        # own ring (512 frames) holds a round, whatever its speed
        for _ in range(6):
            seen = sum(client_port())
            cli.run(sys.executable, "-c",
                    "import socket\n"
                    "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
                    "for i in range(500):\n"
                    f"  s.sendto(b'x'*300, ('{srv.addr}',5003))\n")
            wait_for(lambda: sum(client_port()) >= seen + 500, scaled(10),
                     "host 1 took the round")
            # and sent host 2 all it took (a monitor forwards everything)
            wait_for(lambda: peers(m1)[2]["tx"] - tx0 >=
                     client_port()[0] - took0, scaled(10),
                     "host 1 sent the round on")
        sent = peers(m1)[2]["tx"] - tx0
    finally:
        m2.proc.signal(signal.SIGCONT)
    assert sent > 1000, sent  # host 2's ring (512 frames) cannot hold it

    tx, rx, lost = wait_for(arrived, scaled(10), "host 2 took its ring")
    missing, lost = (tx - tx0) - (rx - rx0), lost - lost0
    probes = m1.call("fabric.show")["probes_sent"] - probes0
    assert 0 < missing <= lost <= missing + probes, (missing, lost, probes)
    assert m2.stats()["drops"].get("nsh_malformed") == 0


def test_tcpdump_sees_the_path_and_index_at_each_hop(two_hosts, tmp_path):
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    chain_of_three(two_hosts)
    # the wire of host 1: both ways
    cap = Capture(fab.bridge_end[fa])
    cli.run("ping", "-c", "3", "-i", "0.2", "-W", "2", f"{NET}.2")
    recs = cap.records()
    fwd = [r for r in recs if f"{FAB}.1." in r and f"> {FAB}.2.4790" in r]
    rev = [r for r in recs if f"{FAB}.2." in r and f"> {FAB}.1.4790" in r]
    assert fwd and rev, recs
    # host 1 ran hop 0 (svc 1): host 2 gets index 254 of path 10; back,
    # host 2 ran hops 0 and 1 (svc 3, svc 2): host 1 gets 253 of path 11
    for r in fwd:
        assert re.search(r"VXLAN-GPE, flags \[IP\]", r), r
        assert re.search(r"NSH, ver 0, flags \[none\], TTL 63, length 5, "
                         r"md type 2, next-protocol Ethernet, "
                         r"service-path-id 0x00000a, service-index 0xfe", r), r
    for r in rev:
        assert re.search(r"service-path-id 0x00000b, service-index 0xfd",
                         r), r
    inner = "\n".join(fwd)
    assert re.search(rf"{NET}\.1 > {NET}\.2: ICMP echo request", inner), inner
    assert re.search(rf"{NET}\.2 > {NET}\.1: ICMP echo reply",
                     "\n".join(rev)), rev


def test_a_path_that_comes_back_counts_down_its_ttl(two_hosts):
    """Path 12 starts on host 2 though host 1 classifies (index 255),
    then comes back to host 1 (index 254, TTL one less)."""
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    chain_of_three(two_hosts)
    back = {1: ["svc:2@2", "svc:1", "port:1@2"],
            2: ["svc:2", "svc:1@1", "port:1"]}
    for m, h in ((m1, 1), (m2, 2)):
        m.call("path.set", spi=12, hops=back[h])
    m1.call("chain.set", port=0, hops=back[1])
    cap = Capture(fab.bridge_end[fa])
    cli.run("ping", "-c", "2", "-i", "0.2", "-W", "2", f"{NET}.2")
    recs = cap.records()
    out = [r for r in recs if "service-path-id 0x00000c" in r]
    hops = {(re.search(rf"> {FAB}\.(\d)\.4790", r).group(1),
             re.search(r"TTL (\d+)", r).group(1),
             re.search(r"service-index (0x\w+)", r).group(1)) for r in out}
    # to host 2 for hop 0 (index 255), back to host 1 for hop 1, one TTL
    # less, to host 2 again for hop 2 (the port), one less again
    assert hops == {("2", "63", "0xff"), ("1", "62", "0xfe"),
                    ("2", "61", "0xfd")}, "\n".join(out)
    # host 2's packets back to host 1 carry the flow hash host 1 gave
    # them: the same UDP source port both ways of the fabric
    sport = {re.search(rf"{FAB}\.\d\.(\d+) >", r).group(1) for r in out
             if "echo request" in r}
    assert len(sport) == 1, out


def test_a_kernel_vxlan_device_ends_a_plain_vxlan_path(two_hosts):
    """Host 3 is a kernel: a namespace on the fabric with a vxlan device
    (VNI 42) whose address the client talks to. Host 1 sends it its
    chain's packets in plain VXLAN, the kernel decapsulates and answers
    in VXLAN, host 1 takes that off and sends it to the client."""
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    k = Host(fab.tag + "k", f"{FAB}.3")
    try:
        dev = f"zq{fab.tag}3"
        sh("ip", "link", "add", dev, "mtu", str(FAB_MTU), "type", "veth",
           "peer", "name", f"zr{fab.tag}3", "mtu", str(FAB_MTU))
        sh("ip", "link", "set", f"zr{fab.tag}3", "master", fab.br)
        sh("ip", "link", "set", f"zr{fab.tag}3", "up")
        k.adopt(dev)
        k.run("ip", "link", "add", "vx0", "type", "vxlan", "id", "42",
              "remote", f"{FAB}.1", "local", f"{FAB}.3", "dstport", "4789")
        k.run("ip", "addr", "add", f"{NET}.3/24", "dev", "vx0")
        k.run("ip", "link", "set", "vx0", "up")
        mac = k.run("cat", f"/sys/class/net/{dev}/address").stdout.strip()
        # its MAC address found by ARP
        peer(m1, 3, f"{FAB}.3", None, encap="vxlan", vni=42, nsh=False)
        m1.call("chain.set", port=0, hops=["svc:1", "port:0@3"])
        m1.call("chain.set", port=1, hops=["svc:1", "port:0"])
        nf = m1.start_nf("monitor", 1)
        m1.call("rx.set", enabled=True)
        k_srv = Host.__new__(Host)  # the server end: the kernel host
        k_srv.ns, k_srv.addr = k.ns, f"{NET}.3"
        assert transfer_ok(cli, k_srv)
        p3 = peers(m1)[3]
        assert p3["tx"] > 2800 and p3["rx"] > 100, p3
        assert nf.stats()["counters"]["tcp"] > 2800
        assert p3["mac_learned"] and p3["mac"].lower() == mac, p3
        # the kernel knows host 1's address (from host 1's probe, or its
        # own request, answered by host 1)
        fab_mac = m1.call("fabric.show")["fabric"]["mac"].lower()
        assert fab_mac in k.run("ip", "neigh", "show", f"{FAB}.1").stdout
        m1.wait_idle()
    finally:
        k.close()


def test_a_too_large_packet_is_a_counted_drop(two_hosts):
    """The peers' MTU says 1500: a 1500-byte IP packet does not fit with
    the tunnel's 70 bytes; it drops as nsh_mtu, small ones go."""
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    chain_of_three(two_hosts)
    peer(m1, 2, f"{FAB}.2", Fabric.mac(fb), mtu=1500)
    assert cli.run("ping", "-c", "2", "-i", "0.2", "-W", "2", "-s", "1400",
                   f"{NET}.2", check=False).returncode == 0
    assert cli.run("ping", "-c", "3", "-i", "0.2", "-W", "1", "-M", "do",
                   "-s", "1472", f"{NET}.2", check=False).returncode != 0
    assert peers(m1)[2]["drops"]["nsh_mtu"] == 3
    assert m1.stats()["drops"]["nsh_mtu"] == 3
    m1.wait_idle()


def test_what_names_no_path_here_is_counted_and_dropped(two_hosts):
    """NSH sent into host 2's fabric port from a namespace: an unknown
    path, index 0, an index at another host's hop, TTL 1, a stranger, a
    broken header: each counted under its reason, none forwarded."""
    from scapy.all import IP, UDP, Ether, Raw, sendp
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    chain_of_three(two_hosts)
    srv.run("ip", "link", "set", "lo", "up")
    dev = fab.port(3)
    peer(m2, 3, f"{FAB}.3", Fabric.mac(dev))
    inner = bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01") /
                  IP(src=f"{NET}.1", dst=f"{NET}.2") / UDP(dport=9) /
                  Raw(b"x" * 32))

    def nsh(spi, si, ttl=63, ver=0, length=6, md=1, np=3):
        base = (ver << 30) | (ttl << 22) | (length << 16) | (md << 8) | np
        return base.to_bytes(4, "big") + (spi << 8 | si).to_bytes(4, "big") \
            + bytes(16)

    def gpe(payload, src=f"{FAB}.3"):
        return Ether(dst=Fabric.mac(fb), src=Fabric.mac(dev)) / \
            IP(src=src, dst=f"{FAB}.2", flags="DF") / \
            UDP(sport=50000, dport=4790) / \
            Raw(bytes([0x0c, 0, 0, 4, 0, 0, 0, 0]) + payload)

    cases = {"nsh_no_path": [gpe(nsh(99, 254) + inner),   # unknown path
                             gpe(nsh(10, 0) + inner),     # index 0
                             gpe(nsh(10, 255) + inner),   # host 1's hop
                             gpe(nsh(10, 200) + inner)],  # past the path
             "nsh_ttl": [gpe(nsh(10, 254, ttl=1) + inner)],
             "nsh_malformed": [gpe(nsh(10, 254, ver=1) + inner),
                               gpe(nsh(10, 254, length=60) + inner),
                               gpe(nsh(10, 254, np=1) + inner)]}
    stranger = gpe(nsh(10, 254) + inner, src=f"{FAB}.9")
    before = m2.stats()["drops"]
    for pkts in cases.values():
        sendp(pkts, iface=dev, verbose=False)
    sendp([stranger], iface=dev, verbose=False)
    want = {k: before[k] + len(v) for k, v in cases.items()}
    want["nsh_no_path"] += 1  # the stranger's

    def counted():
        d = m2.stats()["drops"]
        return all(d[k] == v for k, v in want.items())
    wait_for(counted, scaled(10), f"drops {want}")
    ing = m2.call("fabric.show")["ingress"]
    assert ing["nsh_no_path"] == 4 and ing["nsh_stranger"] == 1, ing
    assert ing["nsh_ttl"] == 1 and ing["nsh_malformed"] == 3, ing
    # and the same packet as a peer's, well formed, goes through
    nf2 = [n for n in m2.call("nf.list")["nfs"] if n["service"] == 2][0]
    sendp([gpe(nsh(10, 254) + inner)], iface=dev, verbose=False)
    # (the server's answer, ICMP port unreachable, comes back through
    # service 2 too: at least one more)
    wait_for(lambda: [n for n in m2.call("nf.list")["nfs"]
                      if n["service"] == 2][0]["rx"] >= nf2["rx"] + 1,
             scaled(10), "the good one taken")
    m2.wait_idle()


def test_hops_on_no_peer_are_refused(two_hosts):
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    peer(m1, 2, f"{FAB}.2", Fabric.mac(fb))
    bad = {("svc:1", "svc:2@7"): "host 7 is no peer",
           ("svc:1", "svc:2@1"): "host 1 is this host",
           ("svc:1", "drop@2"): "drop",
           }
    for hops, why in bad.items():
        with pytest.raises(Exception, match=why):
            m1.call("chain.set", port=0, hops=list(hops))
    peer(m1, 3, f"{FAB}.3", "02:00:00:00:00:03", encap="vxlan", nsh=False)
    with pytest.raises(Exception, match="plain VXLAN end point"):
        m1.call("chain.set", port=0, hops=["svc:1@3", "port:0@3"])
    with pytest.raises(Exception, match="these hops are path 10"):
        m1.call("path.set", spi=10, hops=["svc:1", "port:0@2"])
        m1.call("path.set", spi=11, hops=["svc:1", "port:0@2"])
    m2.call("fabric.set", off=True)
    with pytest.raises(Exception, match="on no fabric"):
        m2.call("chain.set", port=0, hops=["svc:1@1"])


def test_an_nf_killed_on_the_far_host_under_load(two_hosts):
    """Host 2's first NF killed mid-transfer and started again: its
    packets are counted (no_instance, nf_exit), TCP recovers, both hosts'
    pools are whole after."""
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    nfs = chain_of_three(two_hosts)
    victim = nfs[1]

    def kill_and_restart():
        wait_for(lambda: victim.stats()["rx"] > 2000, scaled(30),
                 "TCP flowing", interval=0.005)
        victim.proc.signal(signal.SIGKILL)
        wait_for(lambda: m2.nf_by_pid(victim.proc.pid) is None, scaled(10),
                 "NF gone")
        time.sleep(0.2)
        m2.start_nf("monitor", 2, "again")

    assert transfer_ok(cli, srv, 32 << 20, during=kill_and_restart)
    d = m2.stats()["drops"]
    assert d["no_instance"] + d["nf_exit"] > 0, d
    assert m2.stats()["status"]["registry"]["died"] == 1
    for m in (m1, m2):
        m.wait_idle()


def test_a_peer_gone_under_load(two_hosts):
    """Host 2's manager killed mid-transfer: host 1 goes on sending its
    hops' packets (counted as sent to host 2) until its probes go
    unanswered for 3.5 s; then host 2 is down (an event says so) and they
    drop as peer_down; nothing is stuck. Host 2 back (another manager on
    its port, configured again): heard again, up, traffic crosses."""
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    chain_of_three(two_hosts)

    def kill_peer():
        wait_for(lambda: peers(m1)[2]["tx"] > 2000, scaled(30),
                 "TCP flowing", interval=0.005)
        m2.proc.kill()

    srv_p = srv.popen(sys.executable, "-c", SERVER)
    assert srv_p.stdout.readline().strip() == "ready"
    cli_p = cli.popen(sys.executable, "-c", CLIENT, srv.addr, str(64 << 20))
    kill_peer()
    tx = peers(m1)[2]["tx"]
    wait_for(lambda: peers(m1)[2]["tx"] > tx + 3, scaled(30),
             "TCP retransmitting into the void")
    wait_for(lambda: not peers(m1)[2]["alive"], scaled(30),
             "host 2 not heard")
    p2 = peers(m1)[2]
    assert not p2["up"] and not p2["down"], p2
    ev = [e for e in m1.call("event.list")["events"]
          if e["type"] == "fabric.peer_down"]
    assert ev and "host 2 (two)" in ev[0]["message"], ev
    wait_for(lambda: peers(m1)[2]["drops"]["peer_down"] > 0, scaled(30),
             "retransmissions counted as peer_down")
    assert m1.stats()["drops"]["peer_down"] == \
        peers(m1)[2]["drops"]["peer_down"]
    for p in (cli_p, srv_p):
        p.kill()
        p.wait(10)
    m1.wait_idle()


def test_peers_are_found_and_marked_down_by_arp(two_hosts):
    """Peers configured without MAC addresses: each host learns the
    other's from its answers to the probes, and traffic crosses; the
    operator's down holds whatever is heard; a peer's address nobody
    answers for is never up."""
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    chain_of_three(two_hosts, mac=False)
    assert cli.run("ping", "-c", "3", "-i", "0.2", "-W", "2", f"{NET}.2",
                   check=False).returncode == 0
    p2, p1 = peers(m1)[2], peers(m2)[1]
    assert p2["mac_learned"] and p2["mac"].lower() == Fabric.mac(fb), p2
    assert p1["mac_learned"] and p1["mac"].lower() == Fabric.mac(fa), p1
    # each asked, each answered
    for m in (m1, m2):
        show = m.call("fabric.show")
        assert show["probes_sent"] > 0 and show["arp_answers_taken"] > 0 \
            and show["ingress"]["arp_answered"] > 0, show
    peer(m1, 2, f"{FAB}.2", None, down=True)
    assert cli.run("ping", "-c", "2", "-i", "0.2", "-W", "1", f"{NET}.2",
                   check=False).returncode != 0
    assert peers(m1)[2]["drops"]["peer_down"] >= 2
    assert peers(m1)[2]["alive"] and not peers(m1)[2]["up"]
    peer(m1, 3, f"{FAB}.9", None)  # nobody there
    assert not peers(m1)[3]["up"] and peers(m1)[3]["mac"] is None


def zeronf(m, *args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "zeronf", "-i", m.name, *args],
                       cwd=REPO, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_the_cli_sets_up_a_host_and_status_shows_its_peers(two_hosts):
    """Host 1 set up with the CLI as a newcomer would (README's
    commands; its peer's MAC address found by ARP); host 2 by the
    methods; ping crosses; `zeronf status` shows the peer, up, and what it
    counted."""
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    zeronf(m1, "fabric", "peer", "2", "--ip", f"{FAB}.2", "--mtu",
           str(FAB_MTU), "--name", "two")
    peer(m2, 1, f"{FAB}.1", Fabric.mac(fa))
    zeronf(m1, "path", "10", ",".join(FWD[1]))
    zeronf(m1, "path", "11", *REV[1])
    m2.call("path.set", spi=10, hops=FWD[2])
    m2.call("path.set", spi=11, hops=REV[2])
    zeronf(m1, "chain", "--port", "0", ",".join(FWD[1]))
    m2.call("chain.set", port=1, hops=REV[2])
    m1.start_nf("monitor", 1)
    m2.start_nf("monitor", 2)
    m2.start_nf("monitor", 3)
    for m in (m1, m2):
        m.call("rx.set", enabled=True)
    assert cli.run("ping", "-c", "3", "-i", "0.2", "-W", "2", f"{NET}.2",
                   check=False).returncode == 0
    paths = zeronf(m1, "path")
    assert "10  svc:1,svc:2@2,svc:3@2,port:1@2" in paths, paths
    out = zeronf(m1, "status")
    assert re.search(rf"fabric +host 1 on port 1, {FAB}\.1 .*; 1 peers, "
                     r"1 up", out), out
    row = [ln for ln in out.splitlines() if " two " in ln]
    assert row and re.search(rf"2 +two +{FAB}\.2 +vxlan-gpe +{FAB_MTU} +up "
                             r"+[3-9]\d* +[3-9]", row[0]), out


def test_replicas_on_the_far_host_see_both_directions(two_hosts, tmp_path):
    """Host 2's first service is two flowmon replicas: 16 TCP connections
    through the chain, each balanced on host 2 by the flow hash host 1
    carried in NSH (or host 2's own for the answers): every connection is
    one replica's, with packets both ways, and both replicas have some."""
    (m1, m2), (fa, fb), cli, srv, fab = two_hosts
    peer(m1, 2, f"{FAB}.2", None)
    peer(m2, 1, f"{FAB}.1", None)
    for m, h in ((m1, 1), (m2, 2)):
        m.call("path.set", spi=10, hops=FWD[h])
        m.call("path.set", spi=11, hops=REV[h])
    m1.call("chain.set", port=0, hops=FWD[1])
    m2.call("chain.set", port=1, hops=REV[2])
    js = [tmp_path / f"r{i}.json" for i in range(2)]
    m1.start_nf("monitor", 1)
    reps = [m2.start_nf("flowmon", 2, f"fm{i}",
                        nf_args=["--json", str(js[i])]) for i in range(2)]
    m2.start_nf("monitor", 3)
    for m in (m1, m2):
        m.call("rx.set", enabled=True)
    for _ in range(16):
        assert transfer_ok(cli, srv, 64 << 10)
    for r in reps:  # their records are written as they stop
        m2.call("nf.stop", instance=r.instance)
    wait_for(lambda: all(p.exists() and p.stat().st_size > 0 for p in js),
             scaled(30), "both replicas' records")
    seen: dict[tuple, list] = {}
    for i, p in enumerate(js):
        for ln in p.read_text().splitlines():
            r = json.loads(ln)
            if 5001 in (r["sport"], r["dport"]):
                key = tuple(sorted([(r["src"], r["sport"]),
                                    (r["dst"], r["dport"])]))
                seen.setdefault(key, []).append((i, r["pkts"]))
    assert len(seen) == 16, seen
    for key, recs in seen.items():
        assert len(recs) == 1, (key, recs)  # one replica's
        _, pkts = recs[0]
        assert pkts[0] > 0 and pkts[1] > 0, (key, recs)  # both ways
    assert {recs[0][0] for recs in seen.values()} == {0, 1}

"""Bad input at the fabric port (mgr/fabric/fabric_hot.c): every frame of
tcpdump's test suite and 20,000 tunnel frames mutated from good ones
(VXLAN-GPE + NSH, VXLAN + NSH, Ethernet + NSH: random bytes rewritten in
the outer headers, the NSH and its context headers), replayed into a
manager's fabric port. No crash; every frame is accounted for (sent out
of the port or dropped under a named reason); the tunnel drops are
counted under nsh_*; the good frames among them go through; nothing is
left in the pool."""
from __future__ import annotations

import random
import struct

import pytest

from harness import CORPORA
from pcaputil import write_pcap
from test_malformed import merged_corpus

FAB_IP, PEER_IP = bytes([10, 9, 0, 1]), bytes([10, 9, 0, 2])
PEER_MAC = "02:00:00:00:00:02"


def ipv4(src: bytes, dst: bytes, proto: int, payload: bytes) -> bytes:
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000,
                    64, proto, 0, src, dst)
    s = sum(struct.unpack("!10H", h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return h[:10] + struct.pack("!H", ~s & 0xffff) + h[12:] + payload


def inner() -> bytes:
    udp = struct.pack("!HHHH", 1234, 9, 8 + 32, 0) + b"x" * 32
    return b"\x02\0\0\0\0\x0b\x02\0\0\0\0\x0a\x08\x00" + \
        ipv4(bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]), 17, udp)


def nsh(spi: int, si: int) -> bytes:
    # MD type 2, ZeroNF's flow header (class 0xfff6, type 1, 8 bytes)
    base = (63 << 22) | (5 << 16) | (2 << 8) | 3
    return struct.pack("!II", base, spi << 8 | si) + \
        struct.pack("!HBB", 0xfff6, 1, 8) + b"\x12\x34\x56\x78" + bytes(4)


def eth(dst: bytes, t: int) -> bytes:
    return dst + bytes.fromhex(PEER_MAC.replace(":", "")) + \
        struct.pack("!H", t)


def good(kind: int, fab_mac: bytes) -> bytes:
    if kind == 0:  # VXLAN-GPE, NSH
        udp = struct.pack("!HHHH", 50000, 4790, 0, 0) + \
            bytes([0x0c, 0, 0, 4, 0, 0, 0, 0]) + nsh(10, 254) + inner()
        return eth(fab_mac, 0x0800) + ipv4(PEER_IP, FAB_IP, 17, udp)
    if kind == 1:  # VXLAN, Ethernet 0x894F, NSH
        udp = struct.pack("!HHHH", 50000, 4789, 0, 0) + \
            bytes([0x08, 0, 0, 0, 0, 0, 0, 0]) + eth(fab_mac, 0x894F) + \
            nsh(10, 254) + inner()
        return eth(fab_mac, 0x0800) + ipv4(PEER_IP, FAB_IP, 17, udp)
    return eth(fab_mac, 0x894F) + nsh(10, 254) + inner()  # Ethernet


def test_bad_frames_at_the_fabric_port(managers, tmp_path):
    if not (CORPORA / "tcpdump-4.99.3/tests").exists():
        pytest.skip("corpus not present")
    corpus = tmp_path / "corpus.pcap"
    merged_corpus(corpus)
    # DPDK's pcap driver gives its first port 02:"pcap":00 (checked
    # below): the Ethernet kind is taken by it, the UDP kinds by their
    # IPv4 destination
    fab_mac = bytes.fromhex("027063617000")
    rnd = random.Random(31)
    frames = []
    for i in range(20000):
        f = bytearray(good(i % 3, fab_mac))
        if i % 10:  # one in ten left whole
            for _ in range(rnd.randint(1, 4)):
                f[rnd.randrange(14, len(f))] = rnd.getrandbits(8)
            if rnd.random() < 0.2:
                f = f[:rnd.randrange(14, len(f))]
        frames.append(bytes(f))
    mutated = tmp_path / "mutated.pcap"
    write_pcap(mutated, frames)
    out = tmp_path / "out.pcap"
    m = managers(ports=[f"net_pcap0,rx_pcap={mutated},tx_pcap={out}",
                        f"net_pcap1,rx_pcap={corpus}"], rx_paused=True)
    m.call("fabric.set", port=0, host=1, ip="10.9.0.1")
    assert m.call("fabric.show")["fabric"]["mac"].lower() == \
        "02:70:63:61:70:00"
    m.call("fabric.peer.set", host=2, ip="10.9.0.2", mac=PEER_MAC,
           encap="vxlan-gpe")
    m.call("fabric.peer.set", host=3, mac=PEER_MAC, encap="ethernet",
           ip="10.9.0.3")
    m.call("path.set", spi=10, hops=["svc:1@2", "svc:1", "port:0"])
    m.call("chain.set", port=0, hops=["drop"])  # what is not a tunnel
    m.call("chain.set", port=1, hops=["svc:1", "port:0"])
    m.start_nf("monitor", 1)
    m.call("rx.set", enabled=True)
    st = m.wait_idle(timeout=120)
    ports = m.call("port.list")["ports"]
    rx = sum(p["rx"] for p in ports)
    assert rx > 29000
    drops = m.stats()["drops"]
    show = m.call("fabric.show")  # the manager's own ARP, made and taken
    assert rx + show["probes_sent"] == sum(p["tx"] for p in ports) + \
        sum(drops.values()) + show["arp_answers_taken"], drops
    assert drops["nsh_malformed"] > 100 and drops["nsh_no_path"] > 100
    peers = {p["host"]: p for p in m.call("fabric.show")["peers"]}
    # the whole ones at least (one in ten of each kind)
    assert peers[2]["rx"] >= 1300 and peers[3]["rx"] >= 600, peers
    assert st["ports"]  # idle: the pool whole (wait_idle checks it)
    assert m.shutdown() == 0

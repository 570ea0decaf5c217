"""The router NF against ground truth: the 512,621-prefix RouteViews table
of 2014-05-13 (pyasn's ipasn file, origin AS as the next-hop id) loaded
into rte_lpm, and for each of the 5000 addresses of the independent
sample, a packet to it leaves with the next hop of the sample's reference
LPM (lpm_asn), or is dropped as no_route where it has none. Plus TTL
handling, IPv6 (rte_lpm6), Ethernet rewrite, bad input."""

from __future__ import annotations

import gzip
import ipaddress
import struct
import time

import pytest
from scapy.all import ARP, IP, UDP, Ether, IPv6, wrpcap

from harness import CORPORA, conserved, wait_for
from pcaputil import read_frames

ROUTING = CORPORA / "routing"
ETH = dict(src="02:00:00:00:00:aa", dst="02:00:00:00:00:bb")


def ipv4_csum_ok(hdr: bytes) -> bool:
    s = sum(struct.unpack(f"!{len(hdr) // 2}H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF


def run_router(managers, tmp_path, pkts, routes, nf_args, n_out_ports=1):
    src = tmp_path / "in.pcap"
    wrpcap(str(src), pkts)
    outs = [tmp_path / f"out{i}.pcap" for i in range(n_out_ports)]
    m = managers(ports=[f"net_pcap0,rx_pcap={src}"] +
                 [f"net_pcap{i + 1},tx_pcap={o}" for i, o in enumerate(outs)],
                 chain="1", rx_paused=True, args=["--mem", "1024"])
    m.start_nf("router", 1, nf_args=["--routes", str(routes)] + nf_args,
               wait=True)
    m.call("rx.set", enabled=True)
    n = len(pkts)
    wait_for(lambda: m.call("port.list")["ports"][0]["rx"] == n, 30,
             "all packets in")
    wait_for(lambda: sum(m.call("nf.list")["nfs"][0]["counters"].values())
             >= n, 30, "counters")  # ipv4/ipv6 count too: >= n
    c = m.call("nf.list")["nfs"][0]["counters"]
    macs = [p["mac"].lower() for p in m.call("port.list")["ports"]]
    st = m.wait_idle()
    assert m.shutdown() == 0
    return c, [read_frames(o) for o in outs], macs, st


@pytest.mark.skipif(not ROUTING.exists(), reason="no ../shared/corpora")
def test_routeviews_table_matches_reference_lpm(managers, tmp_path):
    routes = tmp_path / "ipasn.txt"
    with gzip.open(ROUTING / "ipasn_20140513.dat.gz", "rb") as f:
        routes.write_bytes(f.read())
    sample = []
    for line in (ROUTING / "lpm_sample_5000_ipasn_20140513.tsv") \
            .read_text().splitlines()[1:]:
        ip, _pyasn, _pfx, asn, _agree = line.split("\t")
        sample.append((ip, None if asn == "-" else int(asn)))
    assert len(sample) == 5000
    pkts = [Ether(**ETH) / IP(src="10.0.0.1", dst=ip, ttl=64) /
            UDP(sport=1000 + i % 5000, dport=53) / (b"x" * 18)
            for i, (ip, _) in enumerate(sample)]
    # Dropped and counted: TTL expiring, not IP, a malformed header.
    pkts += [Ether(**ETH) / IP(src="10.0.0.1", dst="8.8.8.8", ttl=1) / UDP()]
    pkts += [Ether(**ETH) / ARP()]
    bad = bytearray(bytes(Ether(**ETH) / IP(src="10.0.0.1", dst="8.8.8.8") /
                          UDP()))
    bad[14] = 0x43  # IHL 3
    pkts += [Ether(bytes(bad))]
    c, (out,), macs, st = run_router(managers, tmp_path, pkts, routes,
                                     ["--default-port", "1"])
    want = [(ip, asn) for ip, asn in sample if asn is not None]
    assert c["no_route"] == sum(1 for _, a in sample if a is None)
    assert c["routed"] == len(want) == len(out)
    assert (c["ttl_expired"], c["not_ip"], c["bad_ip"]) == (1, 1, 1)
    for (ip, asn), f in zip(want, out):
        assert f[:6] == bytes([2, 0]) + asn.to_bytes(4, "big"), (ip, asn)
        assert f[6:12].hex(":") == macs[1]
        assert f[14 + 16:14 + 20] == ipaddress.IPv4Address(ip).packed
        assert f[14 + 8] == 63                      # TTL decremented
        assert ipv4_csum_ok(f[14:34])               # checksum updated
    # Every packet accounted for: routed out, or dropped by reason.
    drops = st["drops"]
    assert drops["nf"] == len(pkts) - len(out)


def test_ipv6_and_next_hop_config(managers, tmp_path):
    routes = tmp_path / "routes.txt"
    routes.write_text("# test routes\n"
                      "2001:db8::/32 7\n"
                      "2001:db8:1::/48 8\n"
                      "2001:db8:1:2::/64 1\n"
                      "10.0.0.0/8 8\n"
                      "10.1.0.0/16 7\n"
                      "0.0.0.0/1 2\n")
    cases = [("2001:db8:9::1", 1), ("2001:db8:1:5::1", 2),
             ("2001:db8:1:2::9", 1), ("2001:db9::1", None),
             ("10.2.3.4", 2), ("10.1.2.3", 1), ("99.0.0.1", 2),
             ("200.0.0.1", None)]
    pkts = []
    for dst, _ in cases:
        ip = IPv6(src="2001:db8::5", dst=dst, hlim=9) if ":" in dst else \
            IP(src="10.0.0.1", dst=dst, ttl=9)
        pkts.append(Ether(**ETH) / ip / UDP(sport=5, dport=6) / b"zn")
    # next hop 7 -> port 1 to a given MAC, 8 -> port 2; id 1/2 = ports.
    c, outs, macs, _ = run_router(
        managers, tmp_path, pkts, routes,
        ["--next-hop", "7=1@02:aa:bb:cc:dd:ee", "--next-hop", "8=2"],
        n_out_ports=2)
    got = {1: outs[0], 2: outs[1]}
    for port in (1, 2):
        dsts = [f for f in got[port]]
        want = [p for p, (_, o) in zip(pkts, cases) if o == port]
        assert len(dsts) == len(want)
        for f, p in zip(dsts, want):
            assert f[6:12].hex(":") == macs[port]
            assert f[14 + 7 if p.haslayer(IPv6) else 14 + 8] == 8  # hop-1
    assert got[1][0][:6] == bytes.fromhex("02aabbccddee")  # nh 7 @MAC
    assert c["no_route"] == 2 and c["routed"] == 6


def test_bad_route_file_is_refused(managers, tmp_path):
    routes = tmp_path / "bad.txt"
    routes.write_text("10.0.0.0/8 1\n10.0.0.0/33 1\n")
    m = managers()
    nf = m.start_nf("router", 1, nf_args=["--routes", str(routes)],
                    wait=False)
    assert nf.proc.wait(20) != 0
    assert "bad.txt:2" in nf.proc.output()
    assert m.call("status")["registry"]["registered"] == 1  # then left


def test_live_route_changes_while_traffic_flows(managers, tmp_path):
    """Routes added and removed through the control socket (nf.call to the
    router's route.add / route.del / route.lookup) while packets to a
    routed and an unrouted /8 flow: each change takes effect at once
    (the commands run between bursts), nothing is lost uncounted."""
    from zeronf import ZeroNFError
    routes = tmp_path / "routes.txt"
    routes.write_text("10.0.0.0/8 1\n")
    pkts = []
    for i in range(1000):
        dst = "10.1.1.1" if i % 2 else "20.1.1.1"
        pkts.append(Ether(**ETH) / IP(src="10.0.0.1", dst=dst, ttl=64) /
                    UDP(sport=1000 + i, dport=53) / (b"x" * 18))
    src = tmp_path / "in.pcap"
    wrpcap(str(src), pkts)
    m = managers(ports=[f"net_pcap0,rx_pcap={src},infinite_rx=1",
                        "net_null1,no-rx=1"],
                 chain="1", rx_paused=True, args=["--mem", "512"])
    base = m.pool()["in_use"]
    nf = m.start_nf("router", 1, nf_args=["--routes", str(routes)])
    fwd = m.start_nf("forward", 2)
    me = nf.instance
    info = m.nf_by_pid(nf.proc.pid)
    assert sorted(info["commands"]) == ["route.add", "route.del",
                                        "route.lookup"]
    assert m.nf_by_pid(fwd.proc.pid)["commands"] == []

    def counters():
        return m.nf_by_pid(nf.proc.pid)["counters"]

    def settle():  # counters reach nf.list once per tick (~100 ms)
        time.sleep(0.35)
        return counters()

    def call(cmd, **args):
        return m.call("nf.call", instance=me, command=cmd, args=args)

    m.call("rx.set", enabled=True)
    wait_for(lambda: counters()["no_route"] > 20000, 30, "traffic")
    assert call("route.lookup", address="20.1.1.1") == {"next_hop": None}
    r = call("route.add", routes=[{"prefix": "20.0.0.0/8",
                                   "next_hop": 1}])
    assert r == {"added": 1, "replaced": 0, "ipv4": 2, "ipv6": 0}
    assert call("route.lookup", address="20.1.1.1") == {"next_hop": 1,
                                                        "port": 1}
    c1 = settle()
    c2 = settle()
    assert c2["no_route"] == c1["no_route"]          # all routed now
    assert c2["routed"] > c1["routed"] + 1000
    # replace, then remove: unrouted again
    r = call("route.add", routes=[{"prefix": "20.0.0.0/8", "next_hop": 1},
                                  {"prefix": "2001:db8::/32",
                                   "next_hop": 1}])
    assert (r["added"], r["replaced"], r["ipv6"]) == (1, 1, 1)
    assert call("route.lookup", address="2001:db8::1")["next_hop"] == 1
    assert call("route.del", prefixes=["20.0.0.0/8"]) == {
        "removed": 1, "ipv4": 1, "ipv6": 1}
    c3 = settle()
    c4 = settle()
    assert c4["no_route"] > c3["no_route"] + 1000
    # bad input: a clear error, the tables unchanged
    for cmd, args, code, text in [
            ("route.add", {"routes": [{"prefix": "20.0.0.0/33",
                                       "next_hop": 1}]}, -22, "routes[0]"),
            ("route.add", {"routes": [{"prefix": "020.0.0.0/8",
                                       "next_hop": 1}]}, -22, "bad prefix"),
            ("route.add", {"routes": [{"prefix": "20.0.0.0/8"}]}, -22,
             "next_hop"),
            ("route.add", {}, -22, "route.add wants"),
            ("route.del", {"prefixes": ["30.0.0.0/8"]}, -2, "no route"),
            ("route.lookup", {"address": "nope"}, -22, "address"),
            ("route.flush", {}, -95, "no command"),
    ]:
        with pytest.raises(ZeroNFError) as e:
            call(cmd, **args)
        assert e.value.code == code and text in str(e.value), (cmd, e.value)
    with pytest.raises(ZeroNFError) as e:
        m.call("nf.call", instance=fwd.instance, command="route.add")
    assert e.value.code == -95
    with pytest.raises(ZeroNFError) as e:
        m.call("nf.call", instance=95, command="route.add")
    assert e.value.code == -3
    with pytest.raises(ZeroNFError) as e:
        call("route.add", routes=[{"prefix": "1.0.0.0/8",
                                   "next_hop": 1}] * 400)
    assert e.value.code == -7  # more than the 8 KiB a command carries
    assert call("route.lookup", address="10.9.9.9")["next_hop"] == 1
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    c = counters()
    rx, tx, dropped = conserved(st)
    assert dropped == st["drops"]["nf"] == c["no_route"]
    assert c["routed"] + c["no_route"] == m.nf_by_pid(nf.proc.pid)["rx"]
    # the NF answers while idle (asleep on its doorbell)
    assert call("route.lookup", address="20.1.1.1") == {"next_hop": None}

"""The NAT NF against ground truth: tcprewrite's own expected outputs
(its stateless pseudo-NAT and port maps, shared/corpora/tcpreplay-4.4.3)
byte for byte, and the Linux kernel: the same TCP, UDP and ICMP
connections from private namespaces through the NF and through a kernel
router with masquerade, every one completing, the NF's translations the
kernel's conntrack table's (test_nat_kernel.py)."""

from __future__ import annotations

import pytest

from harness import CORPORA, wait_for
from pcaputil import read_frames

TCPREPLAY = CORPORA / "tcpreplay-4.4.3"


def sums_right(frame: bytes) -> bool:
    """Whether an IPv4 frame's header and TCP/UDP/ICMP checksums are
    right (recomputed by scapy the same)."""
    from scapy.all import ICMP, IP, TCP, UDP, Ether
    p = Ether(frame)
    if IP not in p:
        return True
    q = Ether(frame)
    q[IP].chksum = None
    for layer in (TCP, UDP, ICMP):
        if layer in q and not (layer is UDP and q[UDP].chksum == 0):
            q[layer].chksum = None
    q = Ether(bytes(q))
    return all(getattr(p[x], "chksum", None) == getattr(q[x], "chksum",
                                                       None)
               for x in (IP, TCP, UDP, ICMP) if x in p)


def run_nat(managers, tmp, src, nf_args):
    out = tmp / "out.pcap"
    m = managers(ports=[f"net_pcap0,rx_pcap={src}",
                        f"net_pcap1,tx_pcap={out}"],
                 chain="1,port:1", rx_paused=True)
    nf = m.start_nf("nat", 1, nf_args=nf_args)
    m.call("rx.set", enabled=True)
    n = len(read_frames(src))
    wait_for(lambda: m.call("port.list")["ports"][0]["rx"] == n, 30,
             "the capture in")
    m.wait_idle()
    st = m.call("nf.list")["nfs"][0]
    assert m.shutdown() == 0
    del nf
    return read_frames(out), st["counters"]


@pytest.mark.skipif(not TCPREPLAY.exists(), reason="no ../shared/corpora")
@pytest.mark.parametrize("expected, nf_args", [
    ("pnat", ["--netmap", "96.17.211.0/24=172.16.0.0/24"]),
    ("portmap", ["--portmap", "80=8080"]),
    ("range_portmap", ["--portmap", "1-100=49148"]),
])
def test_stateless_maps_match_tcprewrite(managers, tmp_path, expected,
                                         nf_args):
    got, c = run_nat(managers, tmp_path, TCPREPLAY / "test.pcap", nf_args)
    want = read_frames(TCPREPLAY / f"expected.rewrite_{expected}.pcap")
    orig = read_frames(TCPREPLAY / "test.pcap")
    assert len(got) == len(want) == len(orig)
    # tcprewrite also repairs frames on its own, whatever the option:
    # an IPv4 total length made to cover the frame's padding, a source
    # MAC made multicast for a multicast sender, MPLS payloads: not NAT,
    # left out (and the NF leaves those frames as they came)
    repaired = {i for i, (a, b) in enumerate(zip(orig, want))
                if a != b and (a[:12] != b[:12] or a[12:14] != b"\x08\x00"
                               or a[16:18] != b[16:18])}
    assert 0 < len(repaired) < 20, repaired
    for i in repaired:
        assert got[i][:12] == orig[i][:12]
    # and tcprewrite recomputes checksums, where the NF updates them (a
    # wrong one stays as wrong, as through a router): frames that came
    # with a wrong one are left out too
    wrong = {i for i, f in enumerate(orig) if not sums_right(f)}
    assert 0 < len(wrong) < 10, wrong
    repaired |= wrong
    compared = [i for i in range(len(orig)) if i not in repaired]
    rewritten = sum(1 for i in compared if orig[i] != want[i])
    diffs = [i for i in compared if got[i] != want[i]]
    assert rewritten > 40 and not diffs, diffs
    assert c["translated_out"] == sum(1 for a, b in zip(orig, got)
                                      if a != b)


ETH = dict(src="02:00:00:00:00:aa", dst="02:00:00:00:00:bb")
PUB, SRV = "198.51.100.1", "203.0.113.5"


def sums_of(frame: bytes) -> bool:
    """Every checksum of a frame right, an ICMP error's quoted ones too
    (where quoted whole)."""
    from scapy.all import ICMP, IP, UDP, Ether, IPerror, UDPerror
    p = Ether(frame)
    q = Ether(frame)
    q[IP].chksum = None
    for x in (UDP, ICMP, IPerror, UDPerror):
        if x in q:
            q[x].chksum = None
    q = Ether(bytes(q))
    return all(p[x].chksum == q[x].chksum
               for x in (IP, UDP, ICMP, IPerror, UDPerror) if x in p)


def test_snat_dnat_and_icmp_errors_both_ways(managers, tmp_path):
    from scapy.all import ICMP, IP, TCP, UDP, Ether, IPerror, UDPerror, \
        wrpcap
    out_udp = IP(src="10.0.0.7", dst=SRV) / UDP(sport=5000, dport=53) / \
        b"query"
    xl = IP(src=PUB, dst=SRV) / UDP(sport=5000, dport=53) / b"query"
    pkts = [
        Ether(**ETH) / out_udp,                                   # 0 out
        Ether(**ETH) / IP(src=SRV, dst=PUB) / UDP(sport=53, dport=5000) /
        b"answer",                                                # 1 in
        # 2: an error from the far side about what went out
        Ether(**ETH) / IP(src="192.0.2.254", dst=PUB) /
        ICMP(type=3, code=3) / IPerror(bytes(xl)),
        # 3: forwarded port in, 4: its answer out, 5: an error from the
        # inside host about a packet that came in forwarded
        Ether(**ETH) / IP(src=SRV, dst=PUB) / TCP(sport=33000, dport=80,
                                                  flags="S"),
        Ether(**ETH) / IP(src="10.0.0.9", dst=SRV) /
        TCP(sport=8080, dport=33000, flags="SA"),
        Ether(**ETH) / IP(src="10.0.0.9", dst=SRV) / ICMP(type=3, code=3) /
        IPerror(bytes(IP(src=SRV, dst="10.0.0.9") /
                      TCP(sport=33000, dport=8080, flags="S"))[:28]),
        # 6: to the public address, no session, no forwarding: dropped
        Ether(**ETH) / IP(src=SRV, dst=PUB) / UDP(sport=53, dport=9999),
        # 7: an error about no session: dropped
        Ether(**ETH) / IP(src=SRV, dst=PUB) / ICMP(type=3, code=3) /
        IPerror(bytes(IP(src=PUB, dst=SRV) / UDP(sport=7, dport=7))),
        # 8: neither inside nor public: passed as it is
        Ether(**ETH) / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(),
        # 9: the inside host's error about the answer it got (1)
        Ether(**ETH) / IP(src="10.0.0.7", dst=SRV) / ICMP(type=3, code=3) /
        IPerror(bytes(IP(src=SRV, dst="10.0.0.7") /
                      UDP(sport=53, dport=5000) / b"answer")),
    ]
    src = tmp_path / "in.pcap"
    wrpcap(str(src), pkts)
    got, c = run_nat(managers, tmp_path, src,
                     ["--snat", f"10.0.0.0/24={PUB}",
                      "--dnat", f"{PUB}:80=10.0.0.9:8080/tcp"])
    g = [Ether(f) for f in got]
    assert len(got) == 8, [x.summary() for x in g]
    assert all(sums_of(f) for f in got)
    assert (g[0][IP].src, g[0][UDP].sport) == (PUB, 5000)
    assert (g[1][IP].dst, g[1][UDP].dport) == ("10.0.0.7", 5000)
    assert g[2][IP].dst == "10.0.0.7"
    assert (g[2][IPerror].src, g[2][IPerror].sport) == ("10.0.0.7", 5000)
    assert (g[3][IP].dst, g[3][TCP].dport) == ("10.0.0.9", 8080)
    assert (g[4][IP].src, g[4][TCP].sport) == (PUB, 80)
    assert g[5][IP].src == PUB
    assert (g[5][IPerror].dst, g[5][IPerror].dport) == (PUB, 80)
    assert bytes(g[6]) == bytes(pkts[8])
    assert g[7][IP].src == PUB
    assert (g[7][IPerror].dst, g[7][UDPerror].dport) == (PUB, 5000)
    assert (c["translated_out"], c["translated_in"], c["icmp_errors"],
            c["no_session"], c["untranslated"]) == (2, 2, 3, 2, 1), c


def test_ports_run_out_and_sessions_fill_up_counted(managers, tmp_path):
    from scapy.all import IP, UDP, Ether, wrpcap
    pkts = [Ether(**ETH) / IP(src=f"10.0.0.{i + 1}", dst=SRV) /
            UDP(sport=4000, dport=53) for i in range(4)]
    src = tmp_path / "in.pcap"
    wrpcap(str(src), pkts)
    got, c = run_nat(managers, tmp_path, src,
                     ["--snat", f"10.0.0.0/24={PUB}:20000-20001"])
    assert (len(got), c["no_port"], c["sessions"]) == (2, 2, 2), c
    got, c = run_nat(managers, tmp_path, src,
                     ["--snat", f"10.0.0.0/24={PUB}", "--sessions", "3"])
    assert (len(got), c["table_full"]) == (3, 1), c


@pytest.mark.parametrize("args, why", [
    (["--snat", "10.0.0.0/24"], "--snat wants"),
    (["--snat", "10.0.0.0/33=1.2.3.4"], "--snat wants"),
    (["--dnat", "1.2.3.4=5.6.7.8:80"], "--dnat wants"),
    (["--netmap", "10.0.0.0/8=11.0.0.0/16"], "--netmap wants"),
    (["--portmap", "90-80=1"], "--portmap wants"),
    (["--sessions", "0", "--snat", "10.0.0.0/8=1.2.3.4"], "--sessions"),
    ([], "nothing to translate"),
])
def test_bad_options_stop_the_nf_saying_why(managers, tmp_path, args, why):
    m = managers(ports=["net_null0"], chain="1", rx_paused=True)
    with pytest.raises(RuntimeError) as e:
        m.start_nf("nat", 1, nf_args=args)
    assert why in str(e.value), str(e.value)

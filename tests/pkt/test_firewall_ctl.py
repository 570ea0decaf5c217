"""The firewall NF's own behaviour beyond the kernel comparison
(test_firewall.py): bad rule files refused at start and live, rule hits,
RELATED ICMP errors, connections expiring, a full connection table, the
connection table's commands, and the rule file as nftables from the CLI."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from scapy.all import ICMP, IP, TCP, UDP, Ether, IPerror, wrpcap

from harness import wait_for
from pcaputil import read_frames

ETH = dict(src="02:00:00:00:00:aa", dst="02:00:00:00:00:bb")
A, B = "10.0.0.1", "192.0.2.9"


def fw(managers, tmp, rules: str, pkts, nf_args=(), out=True):
    """A manager whose port 0 replays @pkts (paused until the NF is up)
    into the firewall, port 1 writing what passes; the manager, the NF
    and the output path."""
    (tmp / "rules.txt").write_text(rules)
    src, dst = tmp / "in.pcap", tmp / "out.pcap"
    wrpcap(str(src), pkts)
    m = managers(ports=[f"net_pcap0,rx_pcap={src}",
                        f"net_pcap1,tx_pcap={dst}"],
                 chain="1,port:1", rx_paused=True)
    nf = m.start_nf("firewall", 1, nf_args=["--rules",
                                            str(tmp / "rules.txt"),
                                            *nf_args])
    return m, nf, dst


def run_all(m, n: int) -> dict:
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["rx"] == n, 30,
             "the capture in")
    m.wait_idle()
    return m.call("nf.list")["nfs"][0]


def call(m, nf, cmd, **args):
    return m.call("nf.call", instance=nf.instance, command=cmd, args=args)


@pytest.mark.parametrize("text, line, why", [
    ("-P DROP\n-p tcp --dport 80 -j ACCEPT\n-p tcp --dport 99999 -j DROP\n",
     3, "--dport wants PORT"),
    ("--dport 80 -j ACCEPT\n", 1, "need -p tcp"),
    ("-p tcp -s 10.0.0.0/33 -j DROP\n", 1, "prefix length"),
    ("-p tcp -s 10.0.0.1 -d 2001:db8::1 -j DROP\n", 1, "an IPv6 address "
     "in an IPv4 rule"),
    ("-p tcp\n", 1, "no verdict"),
    ("-j REJECT\n", 1, "not ACCEPT or DROP"),
    ("-p icmp --icmp-type bogus -j DROP\n", 1, "--icmp-type wants"),
    ("--ctstate NEW,SLEEPY -j DROP\n", 1, "unknown 'SLEEPY'"),
    ("-p tcp --tcp-flags SYN ACK -j DROP\n", 1, "COMP has flags"),
])
def test_a_bad_rule_file_stops_the_nf_naming_the_line(managers, tmp_path,
                                                     text, line, why):
    (tmp_path / "rules.txt").write_text(text)
    m = managers(ports=["net_null0"], chain="1", rx_paused=True)
    with pytest.raises(RuntimeError) as e:
        m.start_nf("firewall", 1, nf_args=["--rules",
                                           str(tmp_path / "rules.txt")])
    msg = str(e.value)
    assert f"line {line}: " in msg and why in msg, msg
    assert str(tmp_path / "rules.txt") in msg


def test_rules_load_refuses_bad_rules_and_keeps_those_in_force(managers,
                                                               tmp_path):
    pkts = [Ether(**ETH) / IP(src=A, dst=B) / UDP(sport=5000, dport=53)]
    m, nf, dst = fw(managers, tmp_path, "-P DROP\n-p udp --dport 53 -j "
                    "ACCEPT\n", pkts)
    from zeronf.client import ZeroNFError
    with pytest.raises(ZeroNFError) as e:
        call(m, nf, "rules.load", rules="-P DROP\n-p udp --dport x -j "
             "ACCEPT\n")
    assert "line 2:" in str(e.value) and "rules in force stay" in \
        str(e.value)
    with pytest.raises(ZeroNFError) as e:
        call(m, nf, "rules.load", path=str(tmp_path / "missing.txt"))
    assert "No such file" in str(e.value)
    lst = call(m, nf, "rules.list")
    assert lst["total"] == 1 and lst["policy"] == "DROP"
    n = run_all(m, 1)
    assert n["counters"]["accepted"] == 1
    assert call(m, nf, "rules.list")["rules"][0]["hits"] == 1
    assert m.shutdown() == 0
    assert len(read_frames(dst)) == 1


def test_related_icmp_errors_pass_unrelated_ones_are_invalid(managers,
                                                            tmp_path):
    """A UDP datagram out, the port-unreachable error about it back (it
    quotes the datagram): RELATED, passed by the rule accepting related
    traffic only; the same error about a datagram never sent, and one
    sent back towards someone else: INVALID, dropped."""
    out_dgram = IP(src=A, dst=B) / UDP(sport=5000, dport=33434)
    other = IP(src=A, dst=B) / UDP(sport=5001, dport=33434)
    err = IP(src=B, dst=A) / ICMP(type=3, code=3)
    pkts = [Ether(**ETH) / out_dgram,
            Ether(**ETH) / err / IPerror(bytes(out_dgram)[:28]),
            Ether(**ETH) / err / IPerror(bytes(other)[:28]),
            Ether(**ETH) / IP(src=B, dst="10.9.9.9") / ICMP(type=3, code=3) /
            IPerror(bytes(out_dgram)[:28])]
    m, nf, dst = fw(managers, tmp_path,
                    "-P DROP\n--ctstate RELATED -j ACCEPT\n"
                    "-p udp -s 10.0.0.0/8 -j ACCEPT\n", pkts)
    n = run_all(m, len(pkts))
    c = n["counters"]
    assert (c["ct_new"], c["ct_related"], c["ct_invalid"]) == (1, 1, 2), c
    assert m.shutdown() == 0
    assert read_frames(dst) == [bytes(p) for p in pkts[:2]]


def test_connections_expire_after_their_timeout(managers, tmp_path):
    """With --ct-timeout udp=1 a datagram's connection is gone 1 s later:
    the reply that comes after that is NEW again (dropped by a rule set
    that accepts replies only), one that comes before passes."""
    q = Ether(**ETH) / IP(src=A, dst=B) / UDP(sport=5000, dport=53)
    r = Ether(**ETH) / IP(src=B, dst=A) / UDP(sport=53, dport=5000)
    rules = "-P DROP\n--ctstate ESTABLISHED -j ACCEPT\n" \
            "-s 10.0.0.0/8 -p udp -j ACCEPT\n"
    m, nf, dst = fw(managers, tmp_path, rules, [q],
                    nf_args=["--ct-timeout", "udp=1"])
    run_all(m, 1)
    assert call(m, nf, "ct.stats")["in_use"] == 1
    conns = call(m, nf, "ct.list")["connections"]
    assert conns[0]["src"] == A and conns[0]["dport"] == 53 and \
        not conns[0]["replied"]
    time.sleep(2.5)  # past the timeout: the sweep or the next packet
    wait_for(lambda: call(m, nf, "ct.stats")["in_use"] == 0, 30,
             "the connection swept")
    assert call(m, nf, "ct.stats")["expired"] == 1
    assert m.shutdown() == 0
    # and the other way: a reply inside the timeout passes
    m, nf, dst = fw(managers, tmp_path, rules, [q, r],
                    nf_args=["--ct-timeout", "udp=30"])
    n = run_all(m, 2)
    assert n["counters"]["ct_established"] == 1
    assert m.shutdown() == 0
    assert len(read_frames(dst)) == 2


def test_a_full_connection_table_drops_new_connections_and_counts(
        managers, tmp_path):
    pkts = [Ether(**ETH) / IP(src=A, dst=B) / TCP(sport=1000 + i, dport=80,
                                                 flags="S")
            for i in range(5)]
    pkts.append(Ether(**ETH) / IP(src=B, dst=A) / TCP(sport=80, dport=1000,
                                                      flags="SA"))
    m, nf, dst = fw(managers, tmp_path, "-P ACCEPT\n", pkts,
                    nf_args=["--ct-capacity", "2"])
    n = run_all(m, len(pkts))
    assert n["counters"]["ct_full"] == 3, n["counters"]
    assert n["counters"]["connections"] == 2
    assert call(m, nf, "ct.list")["in_use"] == 2
    # the first connection's SYN/ACK found it
    assert n["counters"]["ct_established"] == 1
    assert call(m, nf, "ct.flush") == {"flushed": 2}
    assert call(m, nf, "ct.stats")["in_use"] == 0
    assert m.shutdown() == 0
    assert len(read_frames(dst)) == 3


def test_the_cli_prints_the_rules_as_nftables(tmp_path):
    f = tmp_path / "r.txt"
    f.write_text("-P DROP\n--ctstate ESTABLISHED,RELATED -j ACCEPT\n"
                 "-p tcp --syn -s 10.1.2.3/8 --dport 22 -j ACCEPT\n")
    r = subprocess.run([sys.executable, "-m", "zeronf", "firewall-nft",
                        str(f)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert "policy drop;" in r.stdout
    assert "ct state { established,related } accept" in r.stdout
    assert "ip saddr 10.0.0.0/8" in r.stdout and "th dport 22" in r.stdout
    f.write_text("-p tcp --frobnicate -j DROP\n")
    r = subprocess.run([sys.executable, "-m", "zeronf", "firewall-nft",
                        str(f)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "line 1: unknown option" in r.stderr

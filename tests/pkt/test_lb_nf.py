"""The load balancer NF on crafted packets: NAT mode rewrites a client's
packets to its Maglev backend and the backend's replies back to the VIP
(every checksum right after), DSR mode changes only the destination MAC,
a backend down gets no new connection, none up drops (counted), bad
options refused. Connections staying on a backend marked down, with
real TCP: tests/system/test_lb_traffic.py; Maglev's spread and
disruption: tests/unit/test_maglev.c."""

from __future__ import annotations

import pytest
from scapy.all import IP, TCP, UDP, Ether, wrpcap

from harness import wait_for
from pcaputil import read_frames

ETH = dict(src="02:00:00:00:00:aa", dst="02:00:00:00:00:bb")
VIP = "10.9.0.100"
MACS = {"be1": "02:00:00:00:01:01", "be2": "02:00:00:00:01:02"}
ARGS = ["--vip", f"web={VIP}:80",
        "--backend", f"web=be1@10.9.0.11:8080,mac={MACS['be1']}",
        "--backend", f"web=be2@10.9.0.12:8080,mac={MACS['be2']}"]


def run_lb(managers, tmp, pkts, args, before=None):
    src, out = tmp / "in.pcap", tmp / "out.pcap"
    wrpcap(str(src), pkts)
    m = managers(ports=[f"net_pcap0,rx_pcap={src}",
                        f"net_pcap1,tx_pcap={out}"],
                 chain="1,port:1", rx_paused=True)
    nf = m.start_nf("lb", 1, nf_args=args)

    def call(cmd, **a):
        return m.call("nf.call", instance=nf.instance, command=cmd, args=a)
    if before:
        before(call)
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["rx"] == len(pkts),
             30, "the capture in")
    m.wait_idle()
    c = m.call("nf.list")["nfs"][0]["counters"]
    lst = call("backend.list", vip="web")
    assert m.shutdown() == 0
    return [Ether(f) for f in read_frames(out)], c, lst


def csums_right(p) -> bool:
    q = Ether(bytes(p))
    del q[IP].chksum
    del q[TCP].chksum
    q = Ether(bytes(q))
    return q[IP].chksum == p[IP].chksum and q[TCP].chksum == p[TCP].chksum


def test_nat_mode_both_ways(managers, tmp_path):
    clients = [("10.0.0.%d" % (i % 50 + 2), 40000 + i) for i in range(200)]
    pkts = [Ether(**ETH) / IP(src=a, dst=VIP) / TCP(sport=p, dport=80,
                                                    flags="S")
            for a, p in clients]
    got, c, lst = run_lb(managers, tmp_path, pkts, ARGS)
    assert len(got) == 200 and all(csums_right(p) for p in got)
    to = {}
    for (a, p), g in zip(clients, got):
        be = "be1" if g[IP].dst == "10.9.0.11" else "be2"
        assert g[TCP].dport == 8080 and g.dst == MACS[be]
        assert (g[IP].src, g[TCP].sport) == (a, p)
        to[(a, p)] = be
    n1 = sum(1 for b in to.values() if b == "be1")
    assert 60 < n1 < 140, n1  # Maglev spreads them
    assert c["new_conns"] == 200 and lst["conns"] == 200
    # the backends' replies (SYN/ACK) leave from the VIP
    replies = [Ether(**ETH) / IP(src="10.9.0.11" if to[(a, p)] == "be1"
                                 else "10.9.0.12", dst=a) /
               TCP(sport=8080, dport=p, flags="SA") for a, p in clients]
    got, c, lst = run_lb(managers, tmp_path, pkts + replies, ARGS)
    back = got[200:400]
    assert all((g[IP].src, g[TCP].sport) == (VIP, 80) and csums_right(g)
               for g in back)
    assert c["from_backend"] == 200 and c["new_conns"] == 200


def test_a_backend_down_gets_no_new_connection(managers, tmp_path):
    pkts = [Ether(**ETH) / IP(src="10.0.0.2", dst=VIP) /
            TCP(sport=30000 + i, dport=80, flags="S") for i in range(100)]

    def be1_down(call):
        r = call("backend.set", vip="web", backend="be1", up=False)
        assert [b["up"] for b in r["backends"]] == [False, True]
    got, c, lst = run_lb(managers, tmp_path, pkts, ARGS, before=be1_down)
    assert all(g[IP].dst == "10.9.0.12" for g in got) and len(got) == 100

    def all_down(call):
        for b in ("be1", "be2"):
            call("backend.set", vip="web", backend=b, up=False)
    got, c, lst = run_lb(managers, tmp_path, pkts, ARGS, before=all_down)
    assert got == [] and c["no_backend"] == 100


def test_dsr_mode_changes_only_the_mac(managers, tmp_path):
    pkts = [Ether(**ETH) / IP(src="10.0.0.2", dst=VIP) /
            UDP(sport=5000 + i, dport=80) / b"x" for i in range(50)]
    args = ["--mode", "dsr"] + [a.replace(":8080", "") for a in ARGS]
    args = [a.replace(f"{VIP}:80", f"{VIP}:80/udp") for a in args]
    got, c, lst = run_lb(managers, tmp_path, pkts, args)
    assert len(got) == 50
    for p, g in zip(pkts, got):
        assert bytes(g)[6:] == bytes(p)[6:] and g.dst in MACS.values()


@pytest.mark.parametrize("args, why", [
    ([], "no --vip"),
    (["--vip", "web=10.0.0.1:80"], "has no --backend"),
    (["--vip", "web=10.0.0.1"], "--vip wants"),
    (["--vip", "web=10.0.0.1:80", "--backend", "api=b@10.0.0.2"],
     "--backend wants"),
    (["--vip", "web=10.0.0.1:80", "--backend", "web=b@10.0.0.2,weight=0"],
     "--backend wants"),
    (["--vip", "web=10.0.0.1:80", "--backend", "web=b@10.0.0.2",
      "--table-size", "65536"], "--table-size wants a prime"),
    (["--mode", "dsr", "--vip", "web=10.0.0.1:80", "--backend",
      "web=b@10.0.0.2"], "has no mac="),
])
def test_bad_options_stop_the_nf_saying_why(managers, tmp_path, args, why):
    m = managers(ports=["net_null0"], chain="1", rx_paused=True)
    with pytest.raises(RuntimeError) as e:
        m.start_nf("lb", 1, nf_args=args)
    assert why in str(e.value), str(e.value)

"""Flow director: wildcard rules with priorities, exact rules, per-flow
chains, and rules installed by an NF, checked packet by packet.

Every chain under test ends at its own output port (a net_pcap file), so
the file a packet comes out of says which chain the manager chose. The
expected choice comes from an independent model of the documented
semantics: exact rule, else the highest-priority matching wildcard rule
(equal priorities: the older), else the default chain."""

from __future__ import annotations

import ipaddress
import random
import struct
import time

import pytest
from scapy.all import IP, IPv6, TCP, UDP, ICMP, ARP, Ether, Raw, wrpcap

from harness import tap_in_two_out, traffic_ports, wait_for
from pcaputil import read_frames

PROTO = {"tcp": 6, "udp": 17, "icmp": 1}
# Explicit addresses: scapy would otherwise try to resolve them (slowly).
ETH = dict(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")

# (match, priority, output port). Port 0 is the default chain.
RULES = [
    ({"proto": "tcp", "dst": "10.1.0.0/16"}, 10, 1),
    ({"proto": "tcp", "dst": "10.1.2.0/24", "dport": 80}, 20, 2),
    ({"dst": "10.1.2.0/24"}, 5, 3),
    ({"ip": 6, "src": "2001:db8::/32", "sport": "1000-2000"}, 10, 4),
    ({"proto": "udp", "dport": 53}, 30, "drop"),
    ({"dst": "10.1.0.0/16"}, 10, 4),          # ties with rule 0 for tcp
    ({"src": "192.168.0.0/16", "sport": "0-1023", "dport": "1024-65535"},
     15, 2),
    ({"ip": 6, "dst": "2001:db8:1::/48", "proto": "udp"}, 40, 3),
]
# Exact rules (one direction each): beat every wildcard rule.
EXACT = [
    (("tcp", "10.1.2.3", 5555, "10.1.2.9", 80), 3),
    (("udp", "2001:db8::5", 1500, "2001:db8:1::7", 4000), 1),
]


def rule_matches(match: dict, p: dict) -> bool:
    addrs = match.get("src", "") + match.get("dst", "")
    ver = match.get("ip", (6 if ":" in addrs else 4) if addrs else None)
    if ver is not None and p["ver"] != ver:   # no address, no ip: both
        return False
    if "proto" in match and PROTO[match["proto"]] != p["proto"]:
        return False
    for side in ("src", "dst"):
        if side in match and ipaddress.ip_address(p[side]) not in \
                ipaddress.ip_network(match[side]):
            return False
    for side, port in (("sport", p["sport"]), ("dport", p["dport"])):
        if side in match:
            r = match[side]
            lo, hi = (r, r) if isinstance(r, int) else map(int, r.split("-"))
            if not lo <= port <= hi:
                return False
    return True


def expected_out(p: dict | None, rules, exact):
    if p is None:
        return 0
    key = (p["proto_name"], p["src"], p["sport"], p["dst"], p["dport"])
    for k, out in exact:
        if k == key:
            return out
    best = None
    for match, prio, out in rules:          # in id order
        if rule_matches(match, p) and (best is None or prio > best[0]):
            best = (prio, out)
    return best[1] if best else 0


def make_traffic(n: int, seed: int = 7):
    """Packets aimed at the rules' edges; each carries its index in its
    payload so it can be found in the output."""
    rnd = random.Random(seed)
    v4 = ["10.1.2.9", "10.1.2.200", "10.1.3.1", "10.2.0.1", "192.168.4.4",
          "10.1.255.255", "10.0.255.255", "8.8.8.8"]
    v6 = ["2001:db8::5", "2001:db8:1::7", "2001:db8:1:ffff::1",
          "2001:db9::1", "fe80::1"]
    ports = [0, 53, 80, 81, 1000, 1023, 1024, 1500, 2000, 2001, 4000, 5555,
             65535]
    pkts, meta = [], []
    for i in range(n):
        kind = rnd.random()
        tag = Raw(struct.pack("!4sI", b"ZNFD", i))
        if kind < 0.03:
            pkts.append(Ether(**ETH) / ARP() / tag)
            meta.append(None)
            continue
        ver = 6 if kind < 0.3 else 4
        addrs = v6 if ver == 6 else v4
        src, dst = rnd.choice(addrs), rnd.choice(addrs)
        proto = rnd.choice(["tcp", "udp", "icmp"] if ver == 4 else
                           ["tcp", "udp"])
        sport, dport = rnd.choice(ports), rnd.choice(ports)
        if i % 17 == 0:                     # the exact flows themselves
            proto, src, sport, dst, dport = EXACT[(i // 17) % 2][0]
            ver = 6 if ":" in src else 4
        l3 = IPv6(src=src, dst=dst) if ver == 6 else IP(src=src, dst=dst)
        if proto == "icmp":
            l4, sport, dport = ICMP(), 0, 0
        elif proto == "tcp":
            l4 = TCP(sport=sport, dport=dport)
        else:
            l4 = UDP(sport=sport, dport=dport)
        pkts.append(Ether(**ETH) / l3 / l4 / tag)
        meta.append({"ver": ver, "proto": PROTO[proto], "proto_name": proto,
                     "src": src, "dst": dst, "sport": sport,
                     "dport": dport})
    return pkts, meta


def tag_of(frame: bytes) -> int | None:
    i = frame.rfind(b"ZNFD")
    return struct.unpack_from("!I", frame, i + 4)[0] if i >= 0 else None


def run_rules(managers, tmp_path, rules, exact, n=3000):
    pkts, meta = make_traffic(n)
    inp = tmp_path / "in.pcap"
    wrpcap(str(inp), pkts)
    outs = [tmp_path / f"out{i}.pcap" for i in range(5)]
    ports = [f"net_pcap0,rx_pcap={inp},tx_pcap={outs[0]}"] + \
        [f"net_pcap{i},tx_pcap={outs[i]}" for i in range(1, 5)]
    m = managers(ports=ports, chain="port:0", rx_paused=True)
    ids = []
    for match, prio, out in rules:
        hop = "drop" if out == "drop" else f"port:{out}"
        ids.append(m.call("rule.add", match=match, priority=prio,
                          chain=[hop])["id"])
    flows = [{"flow": {"proto": k[0], "src": k[1], "sport": k[2],
                       "dst": k[3], "dport": k[4]}, "chain": [f"port:{o}"]}
             for k, o in exact]
    if flows:
        assert m.call("flow.add", flows=flows)["added"] == len(flows)
    listed = m.call("rule.list")["rules"]
    assert [r["id"] for r in listed] == ids
    m.call("rx.set", enabled=True)
    want = [expected_out(p, rules, exact) for p in meta]
    n_out = sum(1 for w in want if w != "drop")
    wait_for(lambda: sum(p["tx"] for p in m.call("port.list")["ports"])
             >= n_out, 30, "all packets out")
    st = m.call("stats")
    assert m.shutdown() == 0
    got = {}
    for i, f in enumerate(outs):
        for fr in read_frames(f):
            got[tag_of(fr)] = i
    wrong = [(i, meta[i], want[i], got.get(i)) for i in range(n)
             if want[i] != "drop" and got.get(i) != want[i]]
    assert not wrong, f"{len(wrong)} misrouted, first: {wrong[:3]}"
    dropped = [i for i in range(n) if want[i] == "drop"]
    assert not [i for i in dropped if i in got]
    assert st["drops"]["chain"] == len(dropped)
    return st


def test_wildcard_and_exact_rules(managers, tmp_path):
    st = run_rules(managers, tmp_path, RULES, EXACT)
    assert st["fdir"]["rules"] == len(RULES)
    assert st["fdir"]["exact_hits"] > 0 and st["fdir"]["rule_hits"] > 0


def test_without_the_specific_rules(managers, tmp_path):
    # Same traffic, a different table: the model and the manager agree.
    run_rules(managers, tmp_path, RULES[2:], [])


def test_rule_table_changes(managers, tmp_path):
    pcap = tmp_path / "x.pcap"
    wrpcap(str(pcap), [Ether(**ETH) / IP() / UDP()])
    m = managers(ports=[f"net_pcap0,rx_pcap={pcap},tx_pcap=/dev/null"],
                 rx_paused=True)
    a = m.call("rule.add", match={"proto": "tcp"}, chain=["port:0"])["id"]
    b = m.call("rule.add", match={"ip": 6}, chain=["port:0"],
               priority=3)["id"]
    assert m.call("stats")["fdir"]["chains"] == 1   # one chain, shared
    m.call("rule.del", id=a)
    assert [r["id"] for r in m.call("rule.list")["rules"]] == [b]
    bad = [
        {"match": {"proto": "xyz"}, "chain": ["port:0"]},
        {"match": {"src": "10.0.0.0/33"}, "chain": ["port:0"]},
        {"match": {"src": "10.0.0.0/8", "dst": "::/0"}, "chain": ["port:0"]},
        {"match": {"sport": "9-3"}, "chain": ["port:0"]},
        {"match": {"color": 1}, "chain": ["port:0"]},
        {"match": {}, "chain": ["port:7"]},
        {"match": {}, "chain": []},
        {"match": {}, "chain": ["port:0"], "priority": 9000},
    ]
    for p in bad:
        with pytest.raises(Exception):
            m.call("rule.add", **p)
    with pytest.raises(Exception):
        m.call("rule.del", id=a)
    with pytest.raises(Exception):
        m.call("flow.add", flows=[{"flow": {"proto": "tcp",
                                            "src": "10.0.0.0/8",
                                            "dst": "1.1.1.1", "sport": 1,
                                            "dport": 2},
                                   "chain": ["port:0"]}])
    assert [r["id"] for r in m.call("rule.list")["rules"]] == [b]
    assert m.call("flow.list")["count"] == 0
    f = {"proto": 6, "src": "1.2.3.4", "dst": "5.6.7.8", "sport": 1,
         "dport": 2}
    assert m.call("flow.add", flows=[{"flow": f, "chain": ["drop"],
                                      "both": True}])["added"] == 2
    lst = m.call("flow.list")
    assert lst["count"] == 2 and lst["flows"][0]["chain"] == ["drop"]
    assert m.call("flow.del", flows=[{"flow": f, "both": True}]) == \
        {"deleted": 2, "missing": 0}


def test_exact_rules_expire_when_idle(managers, tmp_path):
    """--flow-idle-s 1: the rule of a flow without packets goes after one
    to about 1.1 s (expiry passes 16 times per timeout) and is counted;
    the rule of a flow whose packets keep coming stays."""
    busy = {"proto": "udp", "src": "10.0.0.1", "dst": "10.0.0.2",
            "sport": 1000, "dport": 80}
    idle = dict(busy, sport=1001)
    pcap = tmp_path / "busy.pcap"
    wrpcap(str(pcap), [Ether(**ETH) / IP(src=busy["src"], dst=busy["dst"]) /
                       UDP(sport=busy["sport"], dport=busy["dport"])])
    m = managers(ports=traffic_ports(pcap), chain="port:1", rx_paused=True,
                 args=["--flow-idle-s", "1"])
    t0 = time.monotonic()
    m.call("flow.add", flows=[{"flow": f, "chain": ["port:1"]}
                              for f in (busy, idle)])
    m.call("rx.set", enabled=True)

    def flows():
        return {(f["flow"]["sport"]) for f in m.call("flow.list")["flows"]}

    time.sleep(0.6)
    assert flows() == {1000, 1001}             # not before its time
    wait_for(lambda: flows() == {1000}, 3, "the idle flow's rule expired")
    gone = time.monotonic() - t0
    assert 0.9 <= gone <= 2.5, gone
    time.sleep(1.5)                            # > the timeout again
    fd = m.call("stats")["fdir"]
    assert flows() == {1000} and fd["flows_expired"] == 1, fd
    assert fd["exact_hits"] > 0 and fd["misses"] == 0, fd


def test_sixteen_hop_per_flow_chain(managers, tmp_path):
    """A per-flow chain of 16 NF hops (4 forward NFs, each visited 4
    times) then a port; other traffic takes the 1-hop default chain."""
    pkts, meta = make_traffic(1500)
    inp = tmp_path / "in.pcap"
    wrpcap(str(inp), pkts)
    outs = [tmp_path / "out0.pcap", tmp_path / "out1.pcap"]
    m = managers(ports=[f"net_pcap0,rx_pcap={inp},tx_pcap={outs[0]}",
                        f"net_pcap1,tx_pcap={outs[1]}"],
                 chain="1,port:0", rx_paused=True)
    for s in (1, 2, 3, 4):
        m.start_nf("forward", s)
    hops = [f"svc:{1 + i % 4}" for i in range(16)] + ["port:1"]
    m.call("rule.add", match={"proto": "tcp"}, chain=hops)
    m.call("rx.set", enabled=True)
    n_tcp = sum(1 for p in meta if p and p["proto"] == 6)
    wait_for(lambda: sum(p["tx"] for p in m.call("port.list")["ports"])
             >= len(pkts), 30, "all out")
    nfs = {n["service"]: n for n in m.call("nf.list")["nfs"]}
    assert m.shutdown() == 0
    tags1 = [tag_of(f) for f in read_frames(outs[1])]
    assert sorted(tags1) == [i for i, p in enumerate(meta)
                             if p and p["proto"] == 6]
    assert tags1 == sorted(tags1)            # in order (one flow source)
    assert len(read_frames(outs[0])) == len(pkts) - n_tcp
    # Services 2-4 saw only the TCP packets, 4 times each.
    for s in (2, 3, 4):
        assert nfs[s]["rx"] == 4 * n_tcp


def test_nf_installed_rule_takes_effect_next_packet(managers, tmp_path):
    """The steer NF installs a rule (both directions) at a connection's
    3rd packet; from the 4th on, the connection leaves by port 1.
    Packets are injected one at a time through a net_tap port."""
    m, s, outs = tap_in_two_out(managers, tmp_path, "t", "1,port:1")
    m.start_nf("steer", 1, nf_args=["--after", "3", "--chain", "port:2"])
    conns = [("10.9.0.1", 4000 + c, "10.9.0.2", 80) for c in range(4)]
    sent = []
    for k in range(8):
        for c, (a, pa, b, pb) in enumerate(conns):
            fwd = k % 2 == 0                 # alternate directions
            ip = IP(src=a, dst=b) / TCP(sport=pa, dport=pb) if fwd else \
                IP(src=b, dst=a) / TCP(sport=pb, dport=pa)
            tag = len(sent)
            s.send(bytes(Ether(**ETH) / ip /
                         Raw(struct.pack("!4sI", b"ZNFD", tag))))
            sent.append((c, k))
            time.sleep(0.02)
    s.close()
    wait_for(lambda: m.call("nf.list")["nfs"][0]["counters"]["steered"]
             == 4, 10, "4 connections steered")
    time.sleep(0.3)
    assert m.shutdown() == 0
    default = {tag_of(f) for f in read_frames(outs[0])} - {None}
    steered = {tag_of(f) for f in read_frames(outs[1])} - {None}
    for tag, (c, k) in enumerate(sent):
        assert (tag in steered) == (k >= 3), (c, k)
        assert (tag in default) == (k < 3), (c, k)

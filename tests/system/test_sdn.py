"""The manager's OpenFlow 1.3 endpoint (zeronf sdn, docs/sdn.md) against
real OpenFlow speakers: Debian's ovs-ofctl as the tool an operator points at a switch,
and os-ken's message classes (a controller's) over a raw connection for
what ovs-ofctl does not send (ROLE_REQUEST, a HELLO of another version,
garbage).

Long: one fixture and one peer for the whole message set, a test per
message family (the traffic through the table is test_sdn_traffic.py)."""
from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import threading

import pytest

from harness import REPO, free_port, scaled, wait_for

ofp = pytest.importorskip("os_ken.ofproto.ofproto_v1_3")
from os_ken.ofproto import ofproto_parser  # noqa: E402
from os_ken.ofproto import ofproto_v1_3_parser as parser  # noqa: E402

OFCTL = "/usr/bin/ovs-ofctl"


class DP:
    ofproto = ofp
    ofproto_parser = parser


@pytest.fixture
def switch(managers):
    """A manager with two named ports, one receiving (net_null makes
    packets), and its OpenFlow endpoint listening."""
    m = managers(ports=["net_null0", "net_null1,no-rx=1"],
                 chain="port:1", args=["--port-name", "0=lan",
                                       "--port-name", "1=wan"])
    port = free_port()
    start_endpoint(m, port)
    yield m, port


def zeronf_sdn(m, *args: str) -> dict:
    """`zeronf sdn ARGS` for manager @p m, as an operator types it: the
    endpoint's state it prints."""
    r = subprocess.run([sys.executable, "-m", "zeronf", "-i", m.name, "sdn",
                        *args], cwd=REPO, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def start_endpoint(m, port: int) -> dict:
    """`zeronf sdn --listen` for manager @p m on @p port: listening when
    it returns."""
    st = zeronf_sdn(m, "--listen", f"127.0.0.1:{port}")
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) == 0
    return st


def ofctl(port: int, cmd: str, *args: str) -> subprocess.CompletedProcess:
    opts = [a for a in args if a.startswith("--")]
    args = tuple(a for a in args if not a.startswith("--"))
    return subprocess.run([OFCTL, "-O", "OpenFlow13", *opts, cmd,
                           f"tcp:127.0.0.1:{port}", *args],
                          capture_output=True, text=True, timeout=30)


def test_ovs_ofctl_sees_the_switch(switch):
    m, port = switch
    r = ofctl(port, "show")
    assert r.returncode == 0, r.stderr
    # 48 bits of FNV-1a over the instance's name (docs/sdn.md)
    dpid = 0xcbf29ce484222325
    for b in m.name.encode():
        dpid = ((dpid ^ b) * 0x100000001b3) & 0xffffffffffffffff
    dpid &= 0xffffffffffff
    assert f"dpid:{dpid:016x}" in r.stdout, r.stdout
    assert "n_tables:1, n_buffers:256" in r.stdout
    # ZeroNF port P is OpenFlow port P + 1, by its name, with its MAC
    ports = m.call("port.list")["ports"]
    for p in ports:
        assert f" {p['port'] + 1}({p['name']}): addr:{p['mac'].lower()}" \
            in r.stdout, r.stdout
    r = ofctl(port, "dump-desc")
    assert f"DP Description: ZeroNF instance {m.name}" in r.stdout
    assert ofctl(port, "probe").returncode == 0  # ECHO answered
    r = ofctl(port, "dump-tables")
    assert "table 0:" in r.stdout, r.stdout


def test_port_counters_are_the_managers(switch):
    m, port = switch
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] > 1000,
             scaled(20), "traffic out of wan")
    before = {p["port"] + 1: p for p in m.call("port.list")["ports"]}
    r = ofctl(port, "dump-ports")
    after = {p["port"] + 1: p for p in m.call("port.list")["ports"]}
    assert r.returncode == 0 and "2 ports" in r.stdout, r.stdout
    lines = r.stdout.splitlines()
    for no in (1, 2):
        i = next(i for i, ln in enumerate(lines)
                 if ln.strip().startswith(f"port  {no}:"))
        rx = int(lines[i].split("rx pkts=")[1].split(",")[0])
        tx = int(lines[i + 1].split("tx pkts=")[1].split(",")[0])
        assert before[no]["rx"] <= rx <= after[no]["rx"]
        assert before[no]["tx"] <= tx <= after[no]["tx"]
    # one port, and one that is not there (the spec's BAD_PORT)
    r = ofctl(port, "dump-ports", "2")
    assert "port  2:" in r.stdout and "port  1:" not in r.stdout, r.stdout
    r = ofctl(port, "dump-ports", "7")
    assert "OFPBRC_BAD_PORT" in r.stdout + r.stderr


def flows(port: int, *args: str) -> list[str]:
    r = ofctl(port, "dump-flows", *args)
    assert r.returncode == 0, r.stderr
    return sorted(ln.strip() for ln in r.stdout.splitlines()[1:]
                  if ln.strip())


def test_ovs_ofctl_programs_the_table(switch):
    """add-flow, dump-flows, del-flows (strict and not, cookies,
    priorities, out_port) as an operator types them; traffic follows the
    entries; each entry counts its own packets."""
    m, port = switch
    # the table is on: what matches nothing drops, counted, and no
    # longer reaches the port the flow director's chain sends it to
    wait_for(lambda: m.call("of.table")["no_match_drops"] > 0, scaled(20),
             "misses counted")
    tx0 = m.call("port.list")["ports"][1]["tx"]
    seen = m.call("of.table")["no_match_drops"]
    wait_for(lambda: m.call("of.table")["no_match_drops"] > seen + 10000,
             scaled(20), "more misses")
    assert m.call("port.list")["ports"][1]["tx"] == tx0
    for f in ("priority=10,in_port=1,actions=output:2",
              "cookie=0x51,priority=20,ip,nw_src=10.0.0.0/8,actions=drop",
              "cookie=0x52,priority=20,tcp,tp_dst=80,actions=output:61441",
              "priority=0,actions=CONTROLLER:128"):
        r = ofctl(port, "add-flow", f)
        assert r.returncode == 0, (f, r.stderr)
    got = flows(port)
    assert len(got) == 4, got
    assert any("priority=10,in_port=1 actions=output:2" in x for x in got)
    assert any("cookie=0x52" in x and "tcp,tp_dst=80" in x and
               "actions=output:61441" in x for x in got), got
    # net_null's packets are zeros: not IP, from port 1: the first entry
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] > 1000,
             scaled(20), "traffic out of port 2")
    byp = {x.split("priority=")[1].split(",")[0].split(" ")[0]:
           int(x.split("n_packets=")[1].split(",")[0]) for x in flows(port)}
    assert byp["10"] > 1000 and byp["0"] == byp["20"] == 0, byp
    agg = ofctl(port, "dump-aggregate").stdout
    assert "flow_count=4" in agg, agg
    # non-strict delete by cookie: both cookie 0x5x entries
    assert ofctl(port, "del-flows", "cookie=0x50/0xf0").returncode == 0
    got = flows(port)
    assert len(got) == 2 and not any("cookie=0x5" in x for x in got), got
    # out_port filter: only the entry that outputs to port 2
    assert ofctl(port, "del-flows", "out_port=2").returncode == 0
    got = flows(port)
    assert len(got) == 1 and "CONTROLLER" in got[0], got
    # strict: a different priority selects nothing, the right one it
    assert ofctl(port, "del-flows", "--strict", "priority=1").returncode == 0
    assert len(flows(port)) == 1
    assert ofctl(port, "del-flows", "--strict", "priority=0").returncode == 0
    assert flows(port) == []
    tbl = ofctl(port, "dump-tables").stdout
    assert "active=0" in tbl, tbl


def test_a_thousand_flows_at_once(switch, tmp_path):
    """ovs-ofctl add-flows: 1,000 FLOW_MODs in one stream, more than one
    request to the manager can carry: every one in, none refused."""
    m, port = switch
    f = tmp_path / "flows"
    f.write_text("".join(
        f"priority=100,udp,in_port=1,nw_src=10.{i >> 8}.{i & 255}.1,"
        f"tp_dst={1000 + i},actions=output:2\n" for i in range(1000)))
    r = ofctl(port, "add-flows", str(f))
    assert r.returncode == 0, r.stderr
    t = m.call("of.table")
    assert t["active"] == 1000 and t["subtables"] == 1, t
    assert ofctl(port, "dump-aggregate").stdout.count("flow_count=1000") == 1
    assert ofctl(port, "del-flows").returncode == 0
    assert m.call("of.table")["active"] == 0


def test_flow_mod_errors_are_the_specs(switch):
    m, port = switch
    c = hello(port)

    def mod(match, actions=(), **kw):
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                             list(actions))]
        msg = parser.OFPFlowMod(DP, match=match, instructions=inst, **kw)
        c.send(msg)
        c.send(parser.OFPBarrierRequest(DP))
        r = c.recv()
        if isinstance(r, parser.OFPBarrierReply):
            return None
        assert isinstance(c.recv(), parser.OFPBarrierReply)
        return (r.type, r.code)

    out2 = [parser.OFPActionOutput(2)]
    # a field without its prerequisite; a field not matched here
    assert mod(parser.OFPMatch(tcp_dst=80), out2) == (
        ofp.OFPET_BAD_MATCH, ofp.OFPBMC_BAD_PREREQ)
    assert mod(parser.OFPMatch(mpls_label=3, eth_type=0x8847), out2) == (
        ofp.OFPET_BAD_MATCH, ofp.OFPBMC_BAD_FIELD)
    # another table; an action this switch does not do; no such port
    assert mod(parser.OFPMatch(), out2, table_id=3) == (
        ofp.OFPET_FLOW_MOD_FAILED, ofp.OFPFMFC_BAD_TABLE_ID)
    assert mod(parser.OFPMatch(in_port=1),
               [parser.OFPActionSetField(eth_dst="02:00:00:00:00:09")] +
               out2) == (
        ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_TYPE)
    assert mod(parser.OFPMatch(in_port=1), [parser.OFPActionOutput(9)]) == (
        ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_OUT_PORT)
    # CHECK_OVERLAP: an entry of the same priority that some packet
    # matches too is refused; another priority is not an overlap
    assert mod(parser.OFPMatch(in_port=1), out2, priority=5) is None
    assert mod(parser.OFPMatch(eth_type=0x800), out2, priority=5,
               flags=ofp.OFPFF_CHECK_OVERLAP) == (
        ofp.OFPET_FLOW_MOD_FAILED, ofp.OFPFMFC_OVERLAP)
    assert mod(parser.OFPMatch(eth_type=0x800), out2, priority=6,
               flags=ofp.OFPFF_CHECK_OVERLAP) is None
    # a slave may not change the table
    c.send(parser.OFPRoleRequest(DP, ofp.OFPCR_ROLE_SLAVE, 1))
    assert isinstance(c.recv(), parser.OFPRoleReply)
    assert mod(parser.OFPMatch(in_port=2), out2) == (
        ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_IS_SLAVE)
    c.close()
    got = m.call("of.flows")["flows"]
    assert sorted(f["priority"] for f in got) == [5, 6], got
    # nothing of the flow director's changed
    assert m.call("flow.list")["flows"] == []
    assert m.call("rule.list")["rules"] == []


def test_timeouts_remove_entries_and_say_so(switch):
    """Idle and hard timeouts, FLOW_REMOVED with the reason and the
    entry's counters to a controller that asked for them, and the delete
    reason for a delete."""
    m, port = switch
    c = hello(port)
    # a passive connection gets async messages once it asks
    c.send(parser.OFPSetAsync(DP, [0, 0], [0, 0], [0xf, 0]))
    out2 = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                         [parser.OFPActionOutput(2)])]
    rem = ofp.OFPFF_SEND_FLOW_REM
    # in_port=1 has traffic (net_null): only the hard timeout ends it;
    # in_port=2 has none: its idle timeout does
    c.send(parser.OFPFlowMod(DP, cookie=1, priority=9, hard_timeout=2,
                             idle_timeout=1, flags=rem,
                             match=parser.OFPMatch(in_port=1),
                             instructions=out2))
    c.send(parser.OFPFlowMod(DP, cookie=2, priority=9, idle_timeout=1,
                             flags=rem, match=parser.OFPMatch(in_port=2),
                             instructions=out2))
    c.send(parser.OFPFlowMod(DP, cookie=3, priority=8, flags=rem,
                             match=parser.OFPMatch(eth_type=0x806),
                             instructions=out2))
    c.send(parser.OFPFlowMod(DP, command=ofp.OFPFC_DELETE_STRICT,
                             priority=8, out_port=ofp.OFPP_ANY,
                             out_group=ofp.OFPG_ANY,
                             match=parser.OFPMatch(eth_type=0x806)))
    got = {}
    while len(got) < 3:
        r = c.recv()
        assert isinstance(r, parser.OFPFlowRemoved), r
        got[r.cookie] = r
    assert got[3].reason == ofp.OFPRR_DELETE
    assert got[2].reason == ofp.OFPRR_IDLE_TIMEOUT
    assert got[2].packet_count == 0
    assert got[1].reason == ofp.OFPRR_HARD_TIMEOUT
    assert got[1].packet_count > 0 and got[1].duration_sec >= 1
    assert dict(got[1].match._fields2) == {"in_port": 1}
    assert m.call("of.flows")["flows"] == []
    c.close()


class Conn:
    """A controller's side of one connection, messages os-ken's."""

    def __init__(self, port: int):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def send(self, msg) -> None:
        msg.serialize()
        self.s.sendall(bytes(msg.buf))

    def recv(self):
        while True:
            if len(self.buf) >= 8:
                v, t, n, x = ofproto_parser.header(self.buf)
                if len(self.buf) >= n:
                    raw, self.buf = self.buf[:n], self.buf[n:]
                    return ofproto_parser.msg(DP, v, t, n, x, raw)
            data = self.s.recv(65536)
            if not data:
                return None
            self.buf += data

    def close(self):
        self.s.close()


def hello(port: int) -> Conn:
    """A controller's connection to the endpoint on @p port, past the HELLO
    exchange (the endpoint's HELLO checked)."""
    c = Conn(port)
    assert isinstance(c.recv(), parser.OFPHello)
    c.send(parser.OFPHello(DP))
    return c


def test_hello_negotiates_1_3_and_refuses_other_versions(switch):
    m, port = switch
    c = Conn(port)
    hello = c.recv()
    assert isinstance(hello, parser.OFPHello)
    assert any(ofp.OFP_VERSION in e.versions for e in hello.elements)
    # a controller of OpenFlow 1.0 only: HELLO_FAILED, then closed
    c.s.sendall(bytes([1, ofp.OFPT_HELLO, 0, 8, 0, 0, 0, 9]))
    err = c.recv()
    assert isinstance(err, parser.OFPErrorMsg)
    assert (err.type, err.code) == (ofp.OFPET_HELLO_FAILED,
                                    ofp.OFPHFC_INCOMPATIBLE)
    assert c.recv() is None
    c.close()


def test_roles_and_stale_generations(switch):
    m, port = switch
    c = hello(port)
    # MASTER at generation 5
    c.send(parser.OFPRoleRequest(DP, ofp.OFPCR_ROLE_MASTER, 5))
    r = c.recv()
    assert isinstance(r, parser.OFPRoleReply)
    assert (r.role, r.generation_id) == (ofp.OFPCR_ROLE_MASTER, 5)
    # an older generation is stale; NOCHANGE reports what is
    c.send(parser.OFPRoleRequest(DP, ofp.OFPCR_ROLE_SLAVE, 4))
    e = c.recv()
    assert (e.type, e.code) == (ofp.OFPET_ROLE_REQUEST_FAILED,
                                ofp.OFPRRFC_STALE)
    c.send(parser.OFPRoleRequest(DP, ofp.OFPCR_ROLE_NOCHANGE, 0))
    r = c.recv()
    assert (r.role, r.generation_id) == (ofp.OFPCR_ROLE_MASTER, 5)
    # a barrier comes back after what was sent before it
    c.send(parser.OFPEchoRequest(DP, data=b"x"))
    c.send(parser.OFPBarrierRequest(DP))
    assert isinstance(c.recv(), parser.OFPEchoReply)
    assert isinstance(c.recv(), parser.OFPBarrierReply)
    c.close()


def test_garbage_closes_its_connection_only(switch):
    m, port = switch
    c = Conn(port)
    c.recv()
    c.send(parser.OFPHello(DP))
    c.s.sendall(bytes([4, 99, 0, 8, 0, 0, 0, 1]))  # no such type
    e = c.recv()
    assert (e.type, e.code) == (ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_TYPE)
    c.s.sendall(bytes([4, 0, 0, 4, 0, 0, 0, 1]))  # shorter than a header
    assert c.recv() is None
    c.close()
    assert ofctl(port, "show").returncode == 0  # the next one is served


ARP = bytes.fromhex("ffffffffffff020000000001" "0806" "0001080006040001"
                    "020000000001" "0a000001" "000000000000" "0a000002")


def test_packet_in_buffers_and_packet_out(switch):
    """A packet-in of max_len bytes keeps its packet for a buffer_id; a
    PACKET_OUT of that buffer sends it once (then the buffer is gone); a
    FLOW_MOD with a buffer_id sends its packet through the new entry.
    The packets come "from port 2", which receives nothing: net_null's
    packets from port 1 are recycled buffers, our ARP among them."""
    m, port = switch
    c = hello(port)
    c.send(parser.OFPSetAsync(DP, [0x7, 0], [0, 0], [0, 0]))
    wait_for(lambda: m.call("of.table")["controller"], scaled(10),
             "packet-ins on")
    to_ctl = [parser.OFPInstructionActions(
        ofp.OFPIT_APPLY_ACTIONS,
        [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, 20)])]
    c.send(parser.OFPFlowMod(DP, cookie=0x77, priority=50,
                             match=parser.OFPMatch(in_port=2,
                                                   eth_type=0x806),
                             instructions=to_ctl))

    def arp_in() -> parser.OFPPacketIn:
        # the ARP packet "from port 2", through the table: to us
        c.send(parser.OFPPacketOut(
            DP, buffer_id=ofp.OFP_NO_BUFFER, in_port=2, data=ARP,
            actions=[parser.OFPActionOutput(ofp.OFPP_TABLE)]))
        r = c.recv()
        assert isinstance(r, parser.OFPPacketIn), r
        return r

    def tx1() -> int:
        return m.call("port.list")["ports"][0]["tx"]

    pi = arp_in()
    assert pi.buffer_id != ofp.OFP_NO_BUFFER and pi.reason == \
        ofp.OFPR_ACTION and pi.cookie == 0x77
    assert pi.total_len == len(ARP) and pi.data == ARP[:20]
    assert pi.match["in_port"] == 2
    before = tx1()
    out1 = [parser.OFPActionOutput(1)]
    c.send(parser.OFPPacketOut(DP, buffer_id=pi.buffer_id, in_port=2,
                               actions=out1))
    wait_for(lambda: tx1() == before + 1, scaled(10), "the buffer sent")
    # the buffer is used: the spec's BUFFER_UNKNOWN, nothing sent
    c.send(parser.OFPPacketOut(DP, buffer_id=pi.buffer_id, in_port=2,
                               actions=out1))
    e = c.recv()
    assert (e.type, e.code) == (ofp.OFPET_BAD_REQUEST,
                                ofp.OFPBRC_BUFFER_UNKNOWN)
    # a FLOW_MOD that outputs ARP from port 2 to port 1, with a buffer:
    # that packet goes through it
    pi = arp_in()
    c.send(parser.OFPFlowMod(
        DP, priority=60, buffer_id=pi.buffer_id,
        match=parser.OFPMatch(in_port=2, eth_type=0x806),
        instructions=[parser.OFPInstructionActions(
            ofp.OFPIT_APPLY_ACTIONS, out1)]))
    c.send(parser.OFPBarrierRequest(DP))
    assert isinstance(c.recv(), parser.OFPBarrierReply)
    wait_for(lambda: tx1() == before + 2, scaled(10),
             "the flow mod's buffer sent")
    hit = [f for f in m.call("of.flows")["flows"] if f["priority"] == 60]
    assert hit[0]["packets"] == 1
    # whole packets when asked (no buffer); flood: every port but its own
    c.send(parser.OFPPacketOut(
        DP, buffer_id=ofp.OFP_NO_BUFFER, in_port=2, data=ARP,
        actions=[parser.OFPActionOutput(ofp.OFPP_FLOOD)]))
    c.send(parser.OFPBarrierRequest(DP))
    assert isinstance(c.recv(), parser.OFPBarrierReply)
    wait_for(lambda: tx1() == before + 3, scaled(10), "flooded")
    c.close()
    st = m.call("status")
    assert st["pool"]["in_use"] <= 2 * 1024  # net_null's own, no leak


def test_packet_outs_go_out_from_the_control_thread(switch):
    """A PACKET_OUT to a port is sent by the control thread on the port's
    queue 0 (mgr/port/port_ctltx.c: no worker to wake), the first one
    through a worker while the workers learn to lock that queue; here
    while the worker itself sends a stream of packets on the same queue.
    Every packet is counted once: ZeroNF's tx is what the device took."""
    m, port = switch
    c = hello(port)
    out2 = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                         [parser.OFPActionOutput(2)])]
    # the worker's stream: what net_null0 makes, out of port 2 (wan)
    c.send(parser.OFPFlowMod(DP, priority=10, match=parser.OFPMatch(
        in_port=1), instructions=out2))
    c.send(parser.OFPBarrierRequest(DP))
    assert isinstance(c.recv(), parser.OFPBarrierReply)

    def wan() -> dict:
        return m.call("port.list")["ports"][1]

    wait_for(lambda: wan()["tx"] > 1000, scaled(10), "the worker's stream")
    n = 300
    for i in range(n):
        c.send(parser.OFPPacketOut(
            DP, buffer_id=ofp.OFP_NO_BUFFER, in_port=ofp.OFPP_CONTROLLER,
            data=ARP, actions=[parser.OFPActionOutput(2)]))
        if i % 50 == 0:
            c.send(parser.OFPBarrierRequest(DP))
            assert isinstance(c.recv(), parser.OFPBarrierReply)
    c.send(parser.OFPBarrierRequest(DP))
    assert isinstance(c.recv(), parser.OFPBarrierReply)
    assert m.call("of.table")["packet_outs"] == n
    # the stream stops; every packet sent is the device's
    c.send(parser.OFPFlowMod(DP, command=ofp.OFPFC_DELETE,
                             table_id=ofp.OFPTT_ALL, out_port=ofp.OFPP_ANY,
                             out_group=ofp.OFPG_ANY,
                             match=parser.OFPMatch()))
    c.send(parser.OFPBarrierRequest(DP))
    assert isinstance(c.recv(), parser.OFPBarrierReply)
    last = {}

    def still() -> bool:
        nonlocal last
        w, prev = wan(), last
        last = w
        return w["tx"] == prev.get("tx")
    wait_for(still, scaled(10), "the stream stopped")
    w = wan()
    assert n - 1 <= w["tx_control"] <= n, w
    assert w["tx"] == w["hw"]["opackets"], w
    c.close()


def test_the_table_outlives_its_endpoint(switch):
    """The table is the manager's: the endpoint configured again (its
    connections closed, another address) and turned off keeps the
    entries, counters going on; off, the flow director classifies."""
    m, port = switch
    assert ofctl(port, "add-flow",
                 "priority=10,in_port=1,actions=output:2").returncode == 0
    wait_for(lambda: m.call("of.flows")["packets"] > 1000, scaled(20),
             "traffic on the entry")
    c = hello(port)
    c.send(parser.OFPSetAsync(DP, [0x7, 0], [0, 0], [0, 0]))
    wait_for(lambda: m.call("of.table")["controller"], scaled(10),
             "packet-ins taken")
    st = zeronf_sdn(m, "--status")
    assert [x["packet_ins"] for x in st["connections"]] == [True], st
    before = m.call("of.flows")["packets"]
    port2 = free_port()
    st = start_endpoint(m, port2)
    assert st["listen"] == f"127.0.0.1:{port2}" and not st["connections"]
    assert c.recv() is None  # closed
    c.close()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0
    t = m.call("of.table")
    assert t["on"] and not t["controller"]
    got = flows(port2)
    assert len(got) == 1 and "priority=10" in got[0], got
    assert int(got[0].split("n_packets=")[1].split(",")[0]) > before
    # off: the flow director's chain (port:1) again, the entry kept
    st = zeronf_sdn(m, "--off")
    assert not st["configured"] and st["listen"] is None
    t = m.call("of.table")
    assert not t["on"] and not t["controller"] and t["active"] == 1
    lookups = t["lookups"]
    tx = m.call("port.list")["ports"][1]["tx"]
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] > tx + 1000,
             scaled(20), "the flow director's chain")
    assert m.call("of.table")["lookups"] == lookups


def never_reading(m, c: "Conn", other=None) -> None:
    """Connection @p c (past HELLO) sends 20,000 requests and reads none
    of the replies until they are all sent: the manager queues its output
    up to 1 MiB, then stops reading it (its memory bounded) while
    @p other (a check that another connection is served) passes; then
    every request is answered, in order."""
    req = parser.OFPDescStatsRequest(DP, 0)
    req.serialize()
    n = 20000  # 21 MB of replies: more than the kernel's buffers hold
    sender = threading.Thread(target=c.s.sendall, args=(bytes(req.buf) * n,),
                              daemon=True)
    sender.start()

    def queued():
        conns = zeronf_sdn(m, "--status")["connections"]
        mine = [x for x in conns if x["queued"] > 0]
        return mine[0] if mine else None
    peak = wait_for(queued, scaled(20), "its output queued")
    assert peak["queued"] <= (1 << 20) + 65536, peak
    assert peak["msgs_in"] < n, peak  # not read past the pause
    if other is not None:
        other()
    # every request sent (in the kernel's buffers) before reading: one
    # thread at a time on the connection (an SSL object is not shared)
    sender.join(scaled(20))
    assert not sender.is_alive()
    got = 0
    c.s.settimeout(30)
    while got < n:
        r = c.recv()
        assert isinstance(r, parser.OFPDescStatsReply), r
        got += 1
    c.close()


def test_a_controller_that_does_not_read_slows_only_itself(switch):
    m, port = switch

    def another_served():
        assert ofctl(port, "show").returncode == 0
    never_reading(m, hello(port), another_served)


def test_garbage_messages_are_answered_and_harm_nothing(switch):
    """A hostile controller: thousands of messages of every type with
    random bodies (the codec's length and field checks, the endpoint's
    translation), then a barrier. Each gets its answer (an error or a
    reply), the barrier comes back, the manager and other connections go
    on, and no packet buffer is left behind."""
    m, port = switch
    rng = random.Random(31)
    c = hello(port)
    blob = bytearray()
    for xid in range(1, 4001):
        body = rng.randbytes(rng.choice((0, 8, 16, 40, 56, 64, 100, 200)))
        blob += bytes([4, rng.randrange(1, 40)]) + \
            (8 + len(body)).to_bytes(2, "big") + xid.to_bytes(4, "big") + body
    c.s.sendall(bytes(blob))
    barrier = parser.OFPBarrierRequest(DP)
    barrier.set_xid(99999)  # none of the random ones
    c.send(barrier)
    c.s.settimeout(30)
    while True:
        r = c.recv()
        assert r is not None, "closed on a well-framed message"
        if isinstance(r, parser.OFPBarrierReply) and r.xid == 99999:
            break
    c.close()
    assert ofctl(port, "show").returncode == 0
    assert m.call("status")["ready"]
    wait_for(lambda: m.call("status")["pool"]["in_use"] <= 2 * 1024,
             scaled(20), "packet-outs gone out, buffers freed")


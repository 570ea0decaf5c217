"""The OpenFlow 1.3 agent (zeronf sdn, docs/sdn.md) against real OpenFlow
speakers: Debian's ovs-ofctl as the tool an operator points at a switch,
and os-ken's message classes (a controller's) over a raw connection for
what ovs-ofctl does not send (ROLE_REQUEST, a HELLO of another version,
garbage)."""
from __future__ import annotations

import hashlib
import socket
import subprocess
import sys

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
def agent(managers):
    """A manager with two named ports, one receiving (net_null makes
    packets), and its agent listening."""
    m = managers(ports=["net_null0", "net_null1,no-rx=1"],
                 chain="port:1", args=["--port-name", "0=lan",
                                       "--port-name", "1=wan"])
    port = free_port()
    p = subprocess.Popen([sys.executable, "-m", "zeronf", "-i", m.name,
                          "sdn", "--listen", f"127.0.0.1:{port}"],
                         cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)

    def listening():
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0
    try:
        wait_for(listening, scaled(20), "the agent listening")
        yield m, port
    finally:
        p.terminate()
        p.wait(10)


def ofctl(port: int, cmd: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([OFCTL, "-O", "OpenFlow13", cmd,
                           f"tcp:127.0.0.1:{port}", *args],
                          capture_output=True, text=True, timeout=30)


def test_ovs_ofctl_sees_the_switch(agent):
    m, port = agent
    r = ofctl(port, "show")
    assert r.returncode == 0, r.stderr
    dpid = int.from_bytes(hashlib.sha256(m.name.encode()).digest()[:8],
                          "big") & 0xffffffffffff
    assert f"dpid:{dpid:016x}" in r.stdout, r.stdout
    assert "n_tables:1, n_buffers:0" in r.stdout
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


def test_port_counters_are_the_managers(agent):
    m, port = agent
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


def test_what_is_not_done_yet_is_refused_as_the_spec_says(agent):
    m, port = agent
    r = ofctl(port, "dump-flows")
    assert "OFPBRC_BAD_STAT" in r.stdout + r.stderr  # BAD_MULTIPART
    # ovs-ofctl asks for the table's features first: refused, it stops
    r = ofctl(port, "add-flow", "in_port=1,actions=output:2")
    assert r.returncode != 0
    # a controller's FLOW_MOD: the message type is not supported yet
    c = Conn(port)
    c.recv()
    c.send(parser.OFPHello(DP))
    match = parser.OFPMatch(in_port=1)
    inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                         [parser.OFPActionOutput(2)])]
    c.send(parser.OFPFlowMod(DP, match=match, instructions=inst))
    e = c.recv()
    assert (e.type, e.code) == (ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_TYPE)
    c.close()
    # nothing of the manager's changed
    assert m.call("flow.list")["flows"] == []
    assert m.call("rule.list")["rules"] == []


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


def test_hello_negotiates_1_3_and_refuses_other_versions(agent):
    m, port = agent
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


def test_roles_and_stale_generations(agent):
    m, port = agent
    c = Conn(port)
    assert isinstance(c.recv(), parser.OFPHello)
    c.send(parser.OFPHello(DP))
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


def test_garbage_closes_its_connection_only(agent):
    m, port = agent
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

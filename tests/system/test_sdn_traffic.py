"""An SDN controller steering real traffic through ZeroNF (docs/sdn.md):
os-ken (the maintained Ryu) running its stock simple_switch_13 learning
switch, and an application of ours that puts flows through ZeroNF services,
between two network-namespace hosts whose kernel TCP and UDP cross a
manager whose OpenFlow endpoint dials the controller. The
controller going away: fail-secure keeps the table, fail-standalone hands
packets to the flow director; the controller coming back takes over
again."""
from __future__ import annotations

import subprocess
import sys

import pytest

from harness import REPO, free_port, scaled, wait_for
from netns import Host, unique_tag
from test_kernel_traffic import UDP_RX, tcp_transfer

pytest.importorskip("os_ken.ofproto.ofproto_v1_3")

APPS = REPO / "tests" / "system" / "osken"


class Controller:
    """An os-ken process running @p app on a TCP port of its own."""

    def __init__(self, app: str, port: int | None = None):
        self.port = port or free_port()
        self.p = subprocess.Popen(
            [sys.executable, str(APPS / "run.py"), str(self.port),
             str(APPS / app)], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        assert self.p.stdout.readline().strip() == "listening"

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(10)


@pytest.fixture
def net(managers):
    """Two hosts on veths, a manager with a port on each, and a way to
    point its OpenFlow endpoint at controllers (all stopped at the end)."""
    tag = unique_tag(3)
    hosts = [Host(tag + "a", "10.232.0.1"), Host(tag + "b", "10.232.0.2")]
    procs: list = []

    class Net:
        def manager(self, **kw):
            ports = [f"net_af_packet{i},iface={h.attach_veth()}"
                     for i, h in enumerate(hosts)]
            self.m = managers(ports=ports, **kw)
            return self.m

        def controller(self, app: str, port: int | None = None):
            c = Controller(app, port)
            procs.append(c)
            return c

        def endpoint(self, ctl: Controller, *args: str):
            """`zeronf sdn --controller` (ARGS after it): once the
            controller is connected and has put its table-miss entry."""
            r = subprocess.run(
                [sys.executable, "-m", "zeronf", "-i", self.m.name, "sdn",
                 "--controller", f"tcp:127.0.0.1:{ctl.port}", *args],
                cwd=REPO, capture_output=True, text=True, timeout=30)
            assert r.returncode == 0, r.stderr
            wait_for(lambda: self.m.call("of.table")["controller"],
                     scaled(30), "the controller connected")
            # the controller's table-miss entry
            wait_for(lambda: self.m.call("of.table")["active"] >= 1,
                     scaled(30), "the table-miss entry")

    n = Net()
    n.hosts = hosts
    try:
        yield n
    finally:
        for p in procs:
            p.stop()
        for h in hosts:
            h.close()


def ping(h: Host, addr: str, n: int = 3) -> bool:
    return h.run("ping", "-c", str(n), "-i", "0.2", "-W", "2", addr,
                 check=False).returncode == 0


def transfer_ok(hosts, nbytes: int = 4 << 20) -> bool:
    sent, got = tcp_transfer(hosts, nbytes)
    return sent == got and int(got[0]) == nbytes


def test_simple_switch_13_learns_and_kernel_tcp_crosses(net):
    m = net.manager()
    net.endpoint(net.controller("simple_switch_13.py"))
    # what the hosts' kernels sent before the controller's table-miss
    # entry (IPv6 neighbour discovery) had no entry: not the test's
    t0 = m.call("of.table")
    a, b = net.hosts
    assert ping(a, b.addr)
    assert transfer_ok(net.hosts)
    flows = m.call("of.flows")["flows"]
    learned = [f for f in flows if f["priority"] == 1]
    miss = [f for f in flows if f["priority"] == 0]
    # one entry per direction, as simple_switch_13 writes them, and the
    # table-miss entry that sent the first packets up
    assert sorted(sorted(f["match"]) for f in learned) == \
        [["eth_dst", "eth_src", "in_port"]] * 2, flows
    assert sorted(f["match"]["in_port"] for f in learned) == [1, 2]
    assert miss and miss[0]["match"] == {} and \
        miss[0]["actions"]["type"] == "controller"
    t = m.call("of.table")
    assert t["punted"] >= 2 and t["punted"] == miss[0]["packets"]
    # the transfer went by the learned entries: 4 MiB is over 2800
    # full-sized segments one way
    assert sum(f["packets"] for f in learned) > 2800
    assert t["no_match_drops"] == t0["no_match_drops"] and \
        t["punt_drops"] == t0["punt_drops"], (t0, t)


def test_fail_secure_keeps_the_table_while_the_controller_is_gone(net):
    m = net.manager()
    ctl = net.controller("simple_switch_13.py")
    net.endpoint(ctl)
    a, b = net.hosts
    assert ping(a, b.addr) and transfer_ok(net.hosts)
    before = m.call("of.flows")["count"]
    ctl.stop()
    wait_for(lambda: not m.call("of.table")["controller"], scaled(30),
             "the endpoint sees the controller gone")
    assert m.call("of.table")["on"]  # fail-secure: the table stays
    # learned flows go on...
    assert transfer_ok(net.hosts)
    assert m.call("of.flows")["count"] == before
    # ...what needs the controller drops, counted (a host nobody knows)
    a.run("ip", "neigh", "replace", "10.232.0.9", "lladdr",
          "02:00:00:00:00:09", "dev", f"zh{a.tag}")
    drops = m.call("of.table")["punt_drops"]
    assert not ping(a, "10.232.0.9", 2)
    assert m.call("of.table")["punt_drops"] >= drops + 2
    assert m.call("stats")["drops"]["sdn_punt"] >= 2
    # the controller back (same address): the endpoint dials it again
    net.controller("simple_switch_13.py", ctl.port)
    wait_for(lambda: m.call("of.table")["controller"], scaled(30),
             "the endpoint back with the controller")
    assert ping(a, b.addr) and transfer_ok(net.hosts)


def test_fail_standalone_hands_packets_to_the_flow_director(net):
    # NORMAL here is the flow director's chain: a cross-connecting
    # forward NF between the two ports
    m = net.manager(chain="1")
    fwd = m.start_nf("forward", 1, nf_args=["--cross-connect"])
    ctl = net.controller("simple_switch_13.py")
    net.endpoint(ctl, "--fail", "standalone")
    a, b = net.hosts
    assert ping(a, b.addr) and transfer_ok(net.hosts)
    ctl.stop()
    wait_for(lambda: not m.call("of.table")["on"], scaled(30),
             "standalone: the table off")
    lookups = m.call("of.table")["lookups"]
    assert transfer_ok(net.hosts)
    # every packet went by the flow director: the table saw none
    assert m.call("of.table")["lookups"] == lookups
    nf = [n for n in m.call("nf.list")["nfs"] if n["service"] == 1][0]
    assert nf["rx"] > 2800, nf
    assert fwd


def test_custom_app_puts_flows_through_services(net):
    m = net.manager()
    dpi = m.start_nf("dpi", 1)
    filt = m.start_nf("filter", 2)
    net.endpoint(net.controller("steer_13.py"))
    a, b = net.hosts
    assert ping(a, b.addr)  # learns both hosts
    assert transfer_ok(net.hosts)  # TCP 5001: through the DPI
    rx = b.popen(sys.executable, "-c", UDP_RX)
    assert rx.stdout.readline().strip() == "ready"
    a.run(sys.executable, "-c",
          "import socket,time\n"
          "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
          "for i in range(200):\n"
          f"  s.sendto(b'%08d' % i + b'x'*200, ('{b.addr}',5002))\n"
          "  time.sleep(0.001)\n")
    assert int(rx.communicate(timeout=30)[0].split()[-1]) == 200
    nfs = {n["service"]: n for n in m.call("nf.list")["nfs"]}
    # the DPI saw the TCP transfer both ways, the filter the datagrams,
    # and neither saw the pings (switched by the learned entries)
    assert nfs[1]["rx"] > 2800
    assert 200 <= nfs[2]["rx"] < 220, nfs[2]
    steered = [f for f in m.call("of.flows")["flows"]
               if f["priority"] == 10 and f["packets"] > 0]
    steps = sorted(tuple(f["actions"]["steps"]) for f in steered)
    assert ("svc:1", "port:1") in steps and ("svc:1", "port:0") in steps
    assert ("svc:2", "port:1") in steps, steps
    assert dpi and filt


def test_port_status_when_a_link_goes_down(managers):
    """A port's link going down and up (a TAP's, whose driver reads the
    kernel's link state): PORT_STATUS (MODIFY) with its state, to a
    connection that asked for port status."""
    from os_ken.ofproto import ofproto_v1_3 as ofp
    from os_ken.ofproto import ofproto_v1_3_parser as parser
    from test_sdn import DP, hello, start_endpoint

    tap = f"zs{unique_tag(4)}"
    m = managers(ports=[f"net_tap0,iface={tap}", "net_null1,no-rx=1"])
    subprocess.run(["ip", "link", "set", tap, "up"], check=True)
    port = free_port()
    start_endpoint(m, port)
    c = hello(port)
    c.send(parser.OFPSetAsync(DP, [0, 0], [0x7, 0x7], [0, 0]))
    c.send(parser.OFPBarrierRequest(DP))
    assert isinstance(c.recv(), parser.OFPBarrierReply)
    wait_for(lambda: m.call("port.list")["ports"][0]["link_up"],
             scaled(20), "the tap up")
    subprocess.run(["ip", "link", "set", tap, "down"], check=True)
    r = c.recv()
    assert isinstance(r, parser.OFPPortStatus), r
    assert r.reason == ofp.OFPPR_MODIFY and r.desc.port_no == 1
    assert r.desc.state & ofp.OFPPS_LINK_DOWN
    subprocess.run(["ip", "link", "set", tap, "up"], check=True)
    r = c.recv()
    assert isinstance(r, parser.OFPPortStatus) and \
        r.desc.port_no == 1 and r.desc.state == ofp.OFPPS_LIVE, r
    c.close()


def group_stats(port: int) -> dict[int, list[int]]:
    """ovs-ofctl dump-group-stats: group id -> packets per bucket."""
    import re

    from test_sdn import ofctl
    r = ofctl(port, "dump-group-stats")
    assert r.returncode == 0, r.stderr
    out = {}
    for line in r.stdout.splitlines():
        g = re.search(r"group_id=(\d+)", line)
        if g:
            out[int(g.group(1))] = [int(x) for x in re.findall(
                r"bucket\d+:packet_count=(\d+)", line)]
    return out


def test_select_groups_balance_flows_both_ways_alike(net):
    """GROUP_MOD select groups as ZeroNF balances a service's replicas:
    two groups (one per direction) whose buckets are the same two
    services, then the egress port; each TCP connection between the
    namespace hosts takes one bucket, the same index both ways (the
    symmetric flow hash over the 256 slots the weights share out), and
    the connections spread over both. Kernel TCP completes every one;
    ovs-ofctl adds, dumps and deletes the groups."""
    from test_sdn import ofctl, start_endpoint
    m = net.manager()
    fwd = [m.start_nf("forward", 1), m.start_nf("forward", 2)]
    port = free_port()
    start_endpoint(m, port)
    for g, out in ((1, 2), (2, 1)):
        r = ofctl(port, "add-group",
                  f"group_id={g},type=select,"
                  f"bucket=weight:2,actions=output:61441,output:{out},"
                  f"bucket=weight:2,actions=output:61442,output:{out}")
        assert r.returncode == 0, r.stderr
    for f in ("priority=10,tcp,in_port=1,actions=group:1",
              "priority=10,tcp,in_port=2,actions=group:2",
              "priority=5,in_port=1,actions=output:2",
              "priority=5,in_port=2,actions=output:1"):
        assert ofctl(port, "add-flow", f).returncode == 0
    r = ofctl(port, "dump-groups")
    assert "group_id=1,type=select" in r.stdout and \
        "bucket=weight:2,actions=output:61441,output:2" in r.stdout, r.stdout
    r = ofctl(port, "dump-group-features")
    assert "select" in r.stdout and "indirect" in r.stdout, r.stdout
    a, b = net.hosts
    assert ping(a, b.addr)
    used = set()
    before = group_stats(port)
    for _ in range(16):
        sent, got = tcp_transfer(net.hosts, 64 << 10)
        assert sent == got and int(got[0]) == 64 << 10
        now = group_stats(port)
        grew = {g: [i for i, (x, y) in enumerate(zip(before[g], now[g]))
                    if y > x] for g in (1, 2)}
        # one bucket each way, the same one
        assert grew[1] == grew[2] and len(grew[1]) == 1, (before, now)
        used.add(grew[1][0])
        before = now
    assert used == {0, 1}, used
    nfs = {n["service"]: n for n in m.call("nf.list")["nfs"]}
    assert nfs[1]["rx"] > 0 and nfs[2]["rx"] > 0
    # deleting a group deletes the entries that use it
    assert ofctl(port, "del-groups", "group_id=1").returncode == 0
    flows = m.call("of.flows")["flows"]
    assert [f["actions"] for f in flows if f["priority"] == 10] == \
        [{"type": "group", "group_id": 2}], flows
    assert fwd

"""Packet tests of the trust boundary (mgr/trust/group.c, worker.c to_nf_pool):
a real pcap in through net_pcap, through forward NFs in trust groups, out
through tx_pcap. A packet reaches an NF only in that NF's pool: the
worker copies it there when it comes from elsewhere (the port's shared
pool, another group). The output holds exactly the input, in order per
flow; the copies are counted, and every pool is whole at the end."""

from __future__ import annotations

import pytest

from harness import CORPORA, DATA, wait_for
from pcaputil import assert_same_per_flow, read_frames

PCAP = DATA / "pcap/wikipedia.pcap"
GROUPS = ["--trust-group", "a:2047", "--trust-group", "b:2047"]


def replay(managers, tmp_path, groups, into, args=(), pcap=PCAP,
           cut=None):
    """The capture through NF 1 and NF 2 of `groups` (None: no group) and
    out again: the same packets per flow, and copies into a, b and the
    shared pool `into` times the packet count. Returns (stats, group.list)
    once idle."""
    out = tmp_path / "out.pcap"
    m = managers(ports=[f"net_pcap0,rx_pcap={pcap},tx_pcap={out}"],
                 chain="1,2,port:0", rx_paused=True, args=GROUPS + list(args))
    for svc, g in zip((1, 2), groups):
        m.start_nf("forward", svc,
                   lib_args=["--trust-group", g] if g else [])
    frames = read_frames(pcap)
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["tx"] >= len(frames),
             60, "all packets out")
    st = m.wait_idle()
    gl = m.call("group.list")
    st["port_group"] = m.call("port.list")["ports"][0]["trust_group"]
    assert m.shutdown() == 0
    assert_same_per_flow([f[:cut] for f in frames], read_frames(out))
    n = len(frames)
    got = ({g["name"]: g["copied_in"] for g in gl["groups"]},
           gl["copied_to_shared"])
    assert got == ({"a": into[0] * n, "b": into[1] * n}, into[2] * n)
    assert sum(st["drops"].values()) == 0
    return st, gl


@pytest.mark.parametrize("groups, into", [
    # NF 1's group, NF 2's -> copies into a, b, the shared pool
    (("a", "b"), (1, 1, 0)),    # port -> a -> b -> port
    (("a", "a"), (1, 0, 0)),    # one copy in, none between NFs
    (("a", None), (1, 0, 1)),   # back to the shared pool for NF 2
    ((None, "b"), (0, 1, 0)),
    ((None, None), (0, 0, 0)),  # no boundary: no copy
])
def test_packets_cross_a_trust_boundary_by_copy(managers, tmp_path, groups,
                                                into):
    st, gl = replay(managers, tmp_path, groups, into)
    n = len(read_frames(PCAP))
    if any(into):
        assert gl["ns_per_copy"] > 0
    # Every pool whole, nothing dropped, and NF 1 never handed a packet to
    # an NF of another group itself (no link across the boundary).
    assert all(g["pool"]["in_use"] == 0 for g in gl["groups"])
    nf1 = next(x for x in st["nfs"] if x["service"] == 1)
    if groups[0] != groups[1]:
        assert nf1["handoff"]["link_tx"] == 0
    for nf in st["nfs"]:
        assert nf["rx"] == n and nf["tx"] == n


def test_chained_packets_cross_by_copy(managers, tmp_path):
    """Frames past one buffer (waze.pcap: 35 of 597 up to 21,942 bytes,
    captured with TSO) arrive as chains of buffers (net_pcap) and are
    copied across two boundaries segment by segment (mgr/trust/copy_hot.c
    copy_checked: each segment's address, offset and length checked as
    read, the data taken from where the pool keeps it): the same bytes
    come out."""
    pcap = CORPORA / "ndpi-4.2/pcap/waze.pcap"
    if not pcap.exists():
        pytest.skip(f"{pcap} not present")
    frames = read_frames(pcap)
    assert sum(len(f) > 2048 for f in frames) >= 30
    # net_pcap keeps at most RTE_ETHER_MAX_JUMBO_FRAME_LEN (16,128) bytes
    # of a frame (3 of waze's are longer), with or without ZeroNF's copy.
    replay(managers, tmp_path, ("a", "b"), (1, 1, 0), pcap=pcap, cut=16128)


@pytest.mark.parametrize("handoff", ["direct", "worker"])
def test_chained_packets_through_a_groups_port(managers, tmp_path, handoff):
    """The same chains received by group a's own port (--port-group): its
    driver writes each segment through a header of the manager's paired
    with a buffer of a (mgr/trust/port_headers.h), the worker writes the buffers' own
    headers from them, chained; the worker sends each packet out (net_pcap
    takes no NF's TX queue) as its segments' headers. NFs handing packets
    to each other or every hop through the worker: the same bytes come
    out, with no copy."""
    pcap = CORPORA / "ndpi-4.2/pcap/waze.pcap"
    if not pcap.exists():
        pytest.skip(f"{pcap} not present")
    n = len(read_frames(pcap))
    _, gl = replay(managers, tmp_path, ("a", "a"), (0, 0, 0),
                   ["--port-group", "0=a", "--handoff", handoff],
                   pcap=pcap, cut=16128)
    assert gl["received_as_headers"] == gl["sent_as_headers"] == n


def test_kill9_of_a_group_nf_under_traffic(managers):
    """Replicas in group a under endless traffic (each packet copied into
    a's pool at delivery); kill -9 of one: what it held, in a's pool, is
    reclaimed (nf_exit drops); every pool is whole at the end."""
    import signal
    from harness import conserved, traffic_ports
    m = managers(ports=traffic_ports(DATA / "pcap/bittorrent.pcap"),
                 chain="1,port:1", rx_paused=True, args=GROUPS)
    base = m.pool()["in_use"]
    nfs = [m.start_nf("forward", 1, f"r{i}", lib_args=["--trust-group", "a"])
           for i in range(2)]
    m.call("rx.set", enabled=True)
    wait_for(lambda: all((nf.stats() or {}).get("rx", 0) > 2000
                         for nf in nfs), 30, "replicas receiving")
    nfs[0].proc.signal(signal.SIGKILL)
    nfs[0].proc.wait(5)
    wait_for(lambda: m.nf_by_pid(nfs[0].proc.pid) is None, 10, "reclaimed")
    wait_for(lambda: (nfs[1].stats() or {}).get("rx", 0) > 20000, 30,
             "the survivor receiving")
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped and dropped == st["drops"]["nf_exit"]
    a = m.call("group.list")["groups"][0]
    assert a["copied_in"] >= rx and a["pool"]["in_use"] == 0
    assert m.shutdown() == 0


@pytest.mark.parametrize("groups, into", [
    (("a", "a"), (0, 0, 0)),    # the port fills a's pool: no copy at all
    (("a", "b"), (0, 1, 0)),
    ((None, None), (0, 0, 1)),  # into the shared pool once, at ingress
])
def test_a_port_of_a_group_needs_no_copy(managers, tmp_path, groups, into):
    """--port-group 0=a: the port receives into a's pool."""
    st, _ = replay(managers, tmp_path, groups, into,
                   ["--port-group", "00=a"])
    assert st["port_group"] == "a"


@pytest.mark.parametrize("args, message", [
    (["--port-group", "0=c"], "--port-group 0=c: no --trust-group c"),
    (["--port-group", "1=a"], "names port 1 but only 1 port(s)"),
    (["--port-group", "0=a", "--port-group", "0=b"], "port 0 given twice"),
    (["--port-group", "a"], "PORT=GROUP, such as 0=red"),
    (["--port-group", "x=a"], "bad port 'x'"),
])
def test_bad_port_groups_are_refused(args, message):
    import subprocess
    from harness import MGR_BIN
    r = subprocess.run([str(MGR_BIN), "-i", "ztgbadp", "-p", "net_null0",
                        *GROUPS, *args], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode != 0 and message in r.stderr, r.stderr

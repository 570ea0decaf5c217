"""System tests of the NF -> NF hand-off (lib/nf/nf_tx.c, mgr/nf/link.c): NFs
put packets for the next NF on a link to it, without a worker. Real
manager, real NF processes, killed and stopped under load; every packet
that entered is accounted for and every buffer returns to the pool."""

from __future__ import annotations

import random
import signal
import time

import pytest

from harness import DATA, conserved, scaled, traffic_ports, wait_for

TRACE = DATA / "pcap/bittorrent.pcap"


def start(managers, chain, **kw):
    m = managers(ports=traffic_ports(TRACE), chain=chain, rx_paused=True,
                 **kw)
    return m, m.pool()["in_use"]  # net_pcap keeps its trace in buffers


def flowing(m, port=1, min_pkts=1000, timeout=20):
    start = m.call("port.list")["ports"][port]["tx"]
    wait_for(lambda: m.call("port.list")["ports"][port]["tx"] >=
             start + min_pkts, timeout, "traffic flowing")


def handed(m) -> dict[str, int]:
    """Packets each NF put on links, by name."""
    return {n["name"]: n["handoff"]["link_tx"]
            for n in m.call("nf.list")["nfs"]}


def stop_traffic(m, base):
    m.call("rx.set", enabled=False)
    return m.wait_idle(baseline=base)


@pytest.mark.parametrize("group", [None, "a"])
def test_chain_hops_go_nf_to_nf(managers, group):
    """In a chain of three, each NF hands its packets to the next one
    itself: the worker sees only ingress and the last hop's packets for
    the port. Nothing is lost, links are given back when NFs leave. With
    the three in trust group "a", the links are rings in the group's file
    (mgr/trust/group_home.c) and the worker copies ingress into the group's pool."""
    args = ["--trust-group", "a:4095"] if group else []
    lib = ["--trust-group", group] if group else []
    m, base = start(managers, "1,2,3,port:1", args=args)
    nfs = [m.start_nf("forward", s, lib_args=lib) for s in (1, 2, 3)]
    m.call("rx.set", enabled=True)
    # The first packets go through a worker until the link is there and
    # the worker has none of the sender's left (milliseconds; longer on a
    # loaded or sanitizer build); from then on every packet goes NF to NF.
    wait_for(lambda: all(n["handoff"]["link_tx"] > 0
                         for n in m.call("nf.list")["nfs"]
                         if n["service"] in (1, 2)), 30, "links in use")
    first = {n["service"]: n for n in m.call("nf.list")["nfs"]}
    flowing(m, min_pkts=500000, timeout=30)
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx > 0 and dropped == 0, st["drops"]
    by = {n["service"]: n for n in st["nfs"]}
    for s in (1, 2):
        h, h0 = by[s]["handoff"], first[s]["handoff"]
        assert h["links_out"] == 1, h
        assert h["to_worker"] == h0["to_worker"], (h, h0)
        assert h["link_tx"] + h["to_worker"] == by[s]["tx"], h
    assert by[2]["handoff"]["link_rx"] == by[1]["handoff"]["link_tx"]
    # The last hop sends to the port (net_null) on a TX queue of its own;
    # an NF of a group has none (the queues are in the EAL's memory,
    # which it does not map): the worker sends its packets.
    assert by[3]["handoff"]["link_tx"] == 0
    if group:
        assert by[3]["handoff"]["port_tx"] == 0
        assert by[3]["handoff"]["to_worker"] == by[3]["tx"] == rx
    else:
        assert by[3]["handoff"]["port_tx"] == by[3]["tx"] == rx
    assert by[3]["rx"] == rx
    assert st["status"]["links"] == 2 and st["status"]["handoff"] == "direct"
    for nf in nfs:
        m.call("nf.stop", instance=nf.instance)
        assert nf.proc.wait(10) == 0
    wait_for(lambda: m.call("status")["links"] == 0, 5, "links given back")
    if group:
        gl = m.call("group.list")["groups"][0]
        assert gl["pool"]["in_use"] == 0 and gl["copied_in"] == rx


def test_worker_handoff_mode_has_no_links(managers):
    """--handoff worker: every hop crosses a worker, as before (the
    benchmark baseline); the same traffic, the same accounting."""
    m, base = start(managers, "1,2,port:1", args=["--handoff", "worker"])
    for s in (1, 2):
        m.start_nf("forward", s)
    m.call("rx.set", enabled=True)
    flowing(m, min_pkts=5000)
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx > 0 and dropped == 0
    assert all(n["handoff"]["link_tx"] == 0 for n in st["nfs"])
    assert st["status"]["links"] == 0 and st["status"]["handoff"] == "worker"


@pytest.mark.parametrize("group", [None, "a"])
def test_kill9_mid_handoff_no_leak(managers, group):
    """kill -9 NFs of every hop of a chain, one at a time, while packets
    flow NF to NF: what a dead NF held or was handed is counted as
    nf_exit, nothing else is lost, no buffer leaks, and the links of the
    dead go back to the pool. With the NFs in trust group "a", their
    slots, rings and links are in the group's file and reused there."""
    args = ["--trust-group", "a:4095"] if group else []
    lib = ["--trust-group", group] if group else []
    m, base = start(managers, "1,2,3,port:1", args=args)
    # Two replicas per hop: a survivor always serves the hop (a service
    # without instances drops as no_instance, a different test).
    live = {s: [m.start_nf("forward", s, f"s{s}r{r}", lib_args=lib)
                for r in (0, 1)]
            for s in (1, 2, 3)}
    m.call("rx.set", enabled=True)
    flowing(m)
    rnd = random.Random(12)
    linked = 0
    for i in range(8):
        svc = (1, 2, 3, 2)[i % 4]
        linked = max(linked, sum(handed(m).values()))
        victim = live[svc].pop(rnd.randrange(len(live[svc])))
        time.sleep(rnd.uniform(0.02, 0.3))
        victim.proc.signal(signal.SIGKILL)
        victim.proc.wait(5)
        wait_for(lambda: m.nf_by_pid(victim.proc.pid) is None, scaled(10),
                 "dead NF removed")
        live[svc].append(m.start_nf("forward", svc, f"n{i}",
                                    lib_args=lib))
        flowing(m)
    assert linked > 10000  # packets really went NF to NF
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert dropped == st["drops"]["nf_exit"], st["drops"]
    assert st["status"]["registry"]["died"] == 8
    assert st["status"]["pool"]["in_use"] == base  # no buffer leaked
    # Links: at most one from each live sender to each live receiver.
    assert st["status"]["links"] <= 2 * 2 + 2 * 2
    if group:
        assert m.call("group.list")["groups"][0]["pool"]["in_use"] == 0


def test_cyclic_chain_under_overload(managers):
    """A chain that visits two NFs twice (1, 2, 1, 2), fed faster than it
    can go, with small rings: links 1->2 and 2->1 both fill. No deadlock:
    traffic keeps leaving for seconds, every packet is accounted for
    (whatever could not move for --stall-ms is counted 'stalled'), and
    the pool is whole."""
    m, base = start(managers, "1,2,1,2,port:1",
                    args=["--ring-size", "64", "--stall-ms", "500"])
    for s in (1, 2):
        m.start_nf("forward", s)
    m.call("rx.set", enabled=True)
    # Until both links are in use the hops 1 -> 2 -> 1 go through the
    # worker; a loop of waits through it (its stage for 1 waiting on 2's
    # full RX ring, 2 on its link to 1, 1 on its full TX ring) is found
    # too (the worker says whom its stage waits for): no freeze from the
    # first packet on.
    for _ in range(5):  # five seconds, a second at a time
        # Never a freeze for --stall-ms (500 ms here): a loop of waits is
        # found and broken within milliseconds.
        flowing(m, min_pkts=5000, timeout=0.4)
        time.sleep(1.0)
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert dropped == st["drops"]["stalled"], st["drops"]
    assert st["ports"][0]["rx_paused"] > 0  # it was overloaded
    by = {n["service"]: n for n in st["nfs"]}
    assert by[1]["handoff"]["link_tx"] > 0 and by[2]["handoff"]["link_tx"] > 0
    # Each packet that left went through each NF twice.
    assert by[1]["rx"] >= 2 * tx and by[2]["rx"] >= 2 * tx
    assert st["status"]["pool"]["in_use"] == base


def test_cyclic_chain_through_the_worker(managers):
    """The same loop of waits, every hop through a worker (--handoff
    worker; a direct chain's first milliseconds are the same): the worker
    publishes for which NF its stage of an NF waits, the NFs follow that
    too, and the loop is broken within milliseconds, not after --stall-ms
    (60 s here: a freeze would fail the test at once)."""
    m, base = start(managers, "1,2,1,2,port:1",
                    args=["--ring-size", "64", "--stall-ms", "60000",
                          "--handoff", "worker"])
    for s in (1, 2):
        m.start_nf("forward", s)
    m.call("rx.set", enabled=True)
    for _ in range(6):
        flowing(m, min_pkts=2000, timeout=0.5)
        time.sleep(0.5)
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert dropped == st["drops"]["stalled"], st["drops"]
    assert sum(n["handoff"]["loops_broken"] for n in st["nfs"]) > 0
    assert all(n["handoff"]["link_tx"] == 0 for n in st["nfs"])
    assert st["status"]["pool"]["in_use"] == base


def test_chain_change_under_traffic_direct(managers):
    """The chain is switched between 1,2,3 and 1,3,2 while packets go NF
    to NF: every NF reads one snapshot per burst, never half a chain; no
    packet is lost, each is counted once per visit."""
    m, base = start(managers, "1,2,3,port:1")
    for s in (1, 2, 3):
        m.start_nf("forward", s)
    m.call("rx.set", enabled=True)
    flowing(m)
    for i in range(30):
        hops = ["svc:1"] + (["svc:2", "svc:3"] if i % 2 else
                            ["svc:3", "svc:2"]) + ["port:1"]
        assert m.call("chain.set", hops=hops)["hops"] == hops
        time.sleep(0.03)
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    # A packet between two hops when the order flips may see its next
    # position in the new order (the chain is per packet position, as
    # with a worker): it leaves through the port either way, or is
    # counted, never lost.
    assert rx == tx + dropped
    assert set(st["drops"]) >= {"chain_end"}
    # ... or, when packets bounce between 2 and 3 across a flip and both
    # links fill, dropped as stalled by the NF that finds the loop of
    # waits (within a millisecond, not --stall-ms).
    assert dropped == (st["drops"]["chain_end"] + st["drops"]["hop_limit"] +
                       st["drops"]["stalled"]), st["drops"]
    by = {n["service"]: n for n in st["nfs"]}
    assert by[1]["rx"] == rx
    assert by[1]["handoff"]["links_out"] == 2  # to 2 and to 3
    assert st["status"]["pool"]["in_use"] == base


def test_dead_reader_never_blocks_routing(managers):
    """An NF that dies, or stops, inside its routing-table read (an RCU
    reader online) does not hold routing changes: after its death the
    chain changes without waiting for it (it is found dead, not killed as
    stuck); one that stays stopped there is killed once it held the read
    2 s and reported, and the change goes through."""
    m, base = start(managers, "1,2,port:1")
    m.start_nf("forward", 1)
    m.start_nf("forward", 2, "keep")
    hold = m.start_nf("test-rcu-hold", 2, "dies",
                      nf_args=["--mode", "die", "--after", "2000"])
    m.call("rx.set", enabled=True)
    hold.proc.wait(20)
    m.call("chain.set", hops=["svc:1", "svc:2", "port:1"])
    assert not any(e["type"] == "nf.killed"
                   for e in m.call("event.list", since=0)["events"])
    flowing(m)
    # the dead one reaped before the next joins: one order of events
    # (and of service 2's hash buckets, mgr/flow/lb.c) on any machine
    wait_for(lambda: "dies" not in [n["name"] for n in
                                    m.call("nf.list")["nfs"]],
             scaled(20), "the dead reader reaped")

    # armed once its join is done (the join's publish waits for its
    # readers: stopped inside it, it would be killed by its own join)
    stuck = m.start_nf("test-rcu-hold", 2, "stops",
                       nf_args=["--mode", "stop", "--after", "2000",
                                "--armed-by", "usr1"])
    wait_for(lambda: f"NF 'stops' (instance {stuck.instance}) joined "
             "service 2" in m.proc.output(), scaled(30), "its join done")
    stuck.proc.signal(signal.SIGUSR1)

    def state() -> str:  # of its process: T stopped, Z killed
        try:
            stat = open(f"/proc/{stuck.proc.pid}/stat").read()
        except FileNotFoundError:
            return "gone"
        return stat.split(")")[1].split()[0]
    # stopped, or (a failure, said with the manager's view) already killed
    try:
        wait_for(lambda: state() in ("T", "Z", "gone"), scaled(60),
                 "stopped in its read")
    except TimeoutError as e:
        raise AssertionError((str(e), state(), [
            (n["name"], n["state"], n["rx"])
            for n in m.call("nf.list")["nfs"]])) from None
    assert state() == "T", (state(), m.call("event.list", since=0))
    t0 = time.monotonic()
    m.call("chain.set", hops=["svc:1", "svc:2", "port:1"])
    took = time.monotonic() - t0
    assert took > 1.5, took  # it waited for the reader first
    assert stuck.proc.wait(scaled(5)) == -signal.SIGKILL
    ev = m.call("event.list", since=0)["events"]
    assert any(e["type"] == "nf.killed" and "stops" in e["message"]
               for e in ev), ev
    flowing(m)
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert dropped == st["drops"]["nf_exit"] + st["drops"]["stalled"]
    assert st["status"]["pool"]["in_use"] == base


def test_port_bound_nf_gets_a_link_when_the_chain_grows(managers):
    """An NF whose packets all leave through a port hands its bursts to
    the worker without reading them; when the chain grows an NF after it,
    it resolves again and hands packets to that NF directly."""
    m, base = start(managers, "1,port:1")
    m.start_nf("forward", 1)
    m.start_nf("forward", 2)
    m.call("rx.set", enabled=True)
    flowing(m, min_pkts=20000)
    h = m.call("nf.list")["nfs"][0]["handoff"]
    assert h["link_tx"] == 0 and h["links_out"] == 0
    m.call("chain.set", hops=["svc:1", "svc:2", "port:1"])
    wait_for(lambda: m.call("nf.list")["nfs"][0]["handoff"]["link_tx"] >
             10000, 20, "packets on the new link")
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx and dropped == 0
    by = {n["service"]: n for n in st["nfs"]}
    assert by[2]["rx"] > 0 and by[1]["rx"] == rx
    acts = by[1]["actions"]
    assert acts["next"] == by[1]["rx"], acts  # each counted once


def test_a_dead_nfs_ledger_naming_a_link_gone_is_no_error(managers):
    """Issue 29, item 7: mon hands packets to fwd over a link; mon leaves
    (the link is taken back), then fwd is killed: its ledger still names
    the link it last read from, now free. Reclaim read that ledger's ring
    ids whatever phase it was in and logged an ERR ("its ledger names
    link L, not one of its own: nothing of that burst freed") though
    nothing was lost; it reads the rings of the phase the NF died in
    only. No ERR, and the pool whole."""
    for i in range(3):
        m, base = start(managers, "1,2,port:1")
        mon = m.start_nf("forward", 1, "mon")
        fwd = m.start_nf("forward", 2, "fwd")
        m.call("rx.set", enabled=True)
        wait_for(lambda: handed(m).get("mon", 0) > 1000, 20, "handed on")
        m.call("rx.set", enabled=False)
        mon.proc.signal(signal.SIGTERM)
        assert mon.proc.wait(scaled(20)) == 0
        wait_for(lambda: m.call("status")["links"] == 0, scaled(10),
                 "the link taken back")
        fwd.proc.signal(signal.SIGKILL)
        fwd.proc.wait(scaled(10))
        wait_for(lambda: m.nf_by_pid(fwd.proc.pid) is None, scaled(10),
                 "fwd reclaimed")
        m.wait_idle(baseline=base)
        out = m.proc.output()
        assert "ledger names link" not in out and " ERR" not in out, \
            [ln for ln in out.splitlines() if "ERR" in ln]
        assert m.shutdown() == 0

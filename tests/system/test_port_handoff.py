"""System tests of the NF -> port hand-off (lib/nf/nf_tx.c to_port,
mgr/port/port_nftx.c): an NF transmits on a TX queue of its own on ports whose
PMD allows it from a secondary and frees in tx_burst (net_null, net_tap);
the worker never sees those packets. Real manager, real NFs, kill -9
under load; every packet accounted for, every buffer back."""

from __future__ import annotations

import random
import signal

import time
from pathlib import Path

from harness import DATA, conserved, run_then_idle, traffic_ports, wait_for

TRACE = DATA / "pcap/bittorrent.pcap"


def worker_port_tx(m, port: int) -> int:
    p = m.call("port.list")["ports"][port]
    return p["tx"] - p["nf_tx"]["tx"]


def carry(m, base: int, pkts: int) -> tuple[dict, int]:
    """run_then_idle, and the packets out."""
    st = run_then_idle(m, base, pkts)
    return st, conserved(st)[1]


def test_nf_transmits_on_its_own_queue(managers):
    """Port 1 (net_null) has TX queues for NFs; the NF that ends the
    chain attaches it and sends everything itself, the worker nothing.
    Port 0 (net_pcap) has none, and port.list says why."""
    m = managers(ports=traffic_ports(TRACE), chain="1,2,port:1",
                 rx_paused=True)
    base = m.pool()["in_use"]
    nfs = [m.start_nf("forward", s) for s in (1, 2)]
    ports = m.call("port.list")["ports"]
    assert ports[0]["nf_tx"]["queues"] == 0
    assert ports[0]["nf_tx"]["why_not"] == "driver not usable from an NF"
    nt = ports[1]["nf_tx"]
    assert nt["queues"] == 8 and nt["why_not"] is None
    assert ports[1]["tx_queues"] == nt["first_queue"] + 8
    assert sorted(n["instance"] for n in nt["nfs"]) == \
        sorted(nf.instance for nf in nfs)
    assert all(n["attached"] for n in nt["nfs"])
    assert len({n["queue"] for n in nt["nfs"]}) == 2  # one each
    st, tx = carry(m, base, 200000)
    by = {n["service"]: n for n in st["nfs"]}
    assert by[2]["handoff"]["port_tx"] == tx
    assert by[2]["handoff"]["ports"] == [1]
    assert by[2]["handoff"]["to_worker"] == 0
    assert by[1]["handoff"]["port_tx"] == 0  # it sends to an NF
    assert sum(by[2]["actions"].values()) == by[2]["actions"]["next"] == tx
    assert worker_port_tx(m, 1) == 0
    assert st["ports"][1]["hw"]["opackets"] == tx  # the PMD's own count
    # Its queue goes back when it leaves, and to the next NF.
    m.call("nf.stop", instance=nfs[1].instance)
    assert nfs[1].proc.wait(10) == 0
    wait_for(lambda: len(m.call("port.list")["ports"][1]["nf_tx"]["nfs"])
             == 1, 5, "queue given back")
    assert m.call("port.list")["ports"][1]["tx"] == tx  # kept in totals


def test_worker_mode_and_no_queues(managers):
    """--handoff worker and --nf-tx-queues 0: no NF queue, the workers
    transmit; the same accounting."""
    for args, why in ((["--handoff", "worker"], "--handoff worker"),
                      (["--nf-tx-queues", "0"], "--nf-tx-queues 0")):
        m = managers(ports=traffic_ports(TRACE), chain="1,port:1",
                     rx_paused=True, args=args)
        base = m.pool()["in_use"]
        m.start_nf("forward", 1)
        nt = m.call("port.list")["ports"][1]["nf_tx"]
        assert nt["queues"] == 0 and nt["why_not"] == why and not nt["nfs"]
        st, tx = carry(m, base, 5000)
        assert st["nfs"][0]["handoff"]["port_tx"] == 0
        assert worker_port_tx(m, 1) == tx
        assert m.shutdown() == 0


def test_more_nfs_than_queues(managers):
    """--nf-tx-queues 1 and two replicas: the first registered gets the
    queue, the other's packets go out through a worker; both deliver, in
    the same totals."""
    m = managers(ports=traffic_ports(TRACE), chain="1,port:1",
                 rx_paused=True, args=["--nf-tx-queues", "1"])
    base = m.pool()["in_use"]
    a = m.start_nf("forward", 1, "a")
    m.start_nf("forward", 1, "b")
    nt = m.call("port.list")["ports"][1]["nf_tx"]
    assert [n["instance"] for n in nt["nfs"]] == [a.instance]
    st, _ = carry(m, base, 100000)
    by = {n["name"]: n["handoff"] for n in st["nfs"]}
    assert by["a"]["port_tx"] > 0 and by["a"]["to_worker"] == 0
    assert by["b"]["port_tx"] == 0 and by["b"]["to_worker"] > 0
    assert worker_port_tx(m, 1) == by["b"]["to_worker"]


def test_queues_by_request(managers):
    """--nf-tx-queues-by-request (the cluster's managers, whose queues a
    device plugin hands out): only an NF that asks (ZERONF_TX_PORT_P=1)
    gets a queue, on the ports it asks; one that asks for what cannot be
    is told why in an event, and its packets go through a worker."""
    m = managers(ports=traffic_ports(TRACE), chain="1,port:1",
                 rx_paused=True,
                 args=["--nf-tx-queues", "1", "--nf-tx-queues-by-request"])
    base = m.pool()["in_use"]
    plain = m.start_nf("forward", 1, "plain")
    asks = m.start_nf("forward", 1, "asks", env={"ZERONF_TX_PORT_1": "1"})
    m.start_nf("forward", 1, "late", env={"ZERONF_TX_PORT_1": "1",
                                          "ZERONF_TX_PORT_0": "1"})
    nt = m.call("port.list")["ports"][1]["nf_tx"]
    assert [n["instance"] for n in nt["nfs"]] == [asks.instance], nt
    ev = [e["message"] for e in m.call("event.list")["events"]
          if e["type"] == "nf.txq"]
    assert ev == ["late: asked for a TX queue of port 0: it has none (the "
                  "workers transmit for it)",
                  "late: asked for a TX queue of port 1: none is free (the "
                  "workers transmit for it)"], ev
    st, _ = carry(m, base, 100000)
    by = {n["name"]: n["handoff"] for n in st["nfs"]}
    assert by["asks"]["to_worker"] == 0
    assert by["plain"]["port_tx"] == 0 and by["late"]["port_tx"] == 0
    # the queue goes back when its NF leaves, to the next that asks
    m.call("nf.stop", instance=asks.instance)
    assert asks.proc.wait(10) == 0
    again = m.start_nf("forward", 1, "again", env={"ZERONF_TX_PORT_1": "1"})
    wait_for(lambda: [n["instance"] for n in m.call("port.list")["ports"][1]
                      ["nf_tx"]["nfs"]] == [again.instance], 5,
             "the queue to the next that asks")
    assert plain.instance not in [
        n["instance"] for n in m.call("port.list")["ports"][1]["nf_tx"]["nfs"]]
    # a bad request is refused by the NF itself, saying why
    bad = m.start_nf("forward", 1, "bad", env={"ZERONF_TX_PORT_x": "1"},
                     wait=False)
    assert bad.proc.wait(10) != 0


def test_kill9_while_transmitting_no_leak(managers):
    """kill -9 replicas that transmit on their own queues, at random
    moments under load: what a dead NF held (including a burst inside
    tx_burst) is counted nf_exit or was sent, never both; no buffer
    leaks; the queues go to the replacements."""
    m = managers(ports=traffic_ports(TRACE), chain="1,port:1",
                 rx_paused=True)
    base = m.pool()["in_use"]
    live = [m.start_nf("forward", 1, f"r{r}") for r in (0, 1)]
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] > 10000, 20,
             "traffic")
    rnd = random.Random(7)
    for i in range(8):
        victim = live.pop(rnd.randrange(len(live)))
        time.sleep(rnd.uniform(0.02, 0.3))
        victim.proc.signal(signal.SIGKILL)
        victim.proc.wait(5)
        wait_for(lambda: m.nf_by_pid(victim.proc.pid) is None, 2.0,
                 "dead NF removed")
        live.append(m.start_nf("forward", 1, f"n{i}"))
        before = m.call("port.list")["ports"][1]["tx"]
        wait_for(lambda: m.call("port.list")["ports"][1]["tx"] > before +
                 1000, 20, "traffic again")
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert dropped == st["drops"]["nf_exit"], st["drops"]
    assert st["status"]["registry"]["died"] == 8
    assert st["status"]["pool"]["in_use"] == base
    nt = st["ports"][1]["nf_tx"]
    assert sorted(n["instance"] for n in nt["nfs"]) == \
        sorted(nf.instance for nf in live)
    # net_null frees a burst, then counts it: an NF killed in between
    # leaves the driver's count short by what it took in that call
    # (never more); ours counts them as sent.
    hw = st["ports"][1]["hw"]["opackets"]
    assert tx - nt["tx_at_exit"] <= hw <= tx, (hw, tx, nt["tx_at_exit"])
    assert nt["tx_at_exit"] <= 8 * 128  # 8 deaths, ZN_BURST each
    assert sum(n["handoff"]["port_tx"] for n in st["nfs"]) < tx  # the dead


def test_nf_transmits_on_a_tap(managers, tmp_path):
    """net_tap: the queue's file descriptor comes to the NF over the
    multi-process channel; every packet the NF sends arrives at the
    kernel interface."""
    tap = f"znpt{tmp_path.name[-8:]}".replace("_", "")[:14]
    m = managers(ports=[f"net_pcap0,rx_pcap={TRACE}", f"net_tap0,iface={tap}"],
                 chain="1,port:1", rx_paused=True)
    base = m.pool()["in_use"]  # the tap's RX queues keep buffers
    nf = m.start_nf("forward", 1)
    nt = m.call("port.list")["ports"][1]["nf_tx"]
    assert nt["queues"] >= 1 and nt["nfs"][0]["instance"] == nf.instance
    stat = Path(f"/sys/class/net/{tap}/statistics/rx_packets")
    before = int(stat.read_text())
    m.call("rx.set", enabled=True)
    st = m.wait_idle(baseline=base)
    rx, tx, dropped = conserved(st)
    assert rx == tx > 0 and dropped == 0, st["drops"]
    assert st["nfs"][0]["handoff"]["port_tx"] == tx
    assert worker_port_tx(m, 1) == 0
    wait_for(lambda: int(stat.read_text()) - before >= tx, 5,
             "frames at the tap")


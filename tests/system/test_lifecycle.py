"""System tests: real manager, real NF processes, started, stopped and
killed while traffic flows. Every packet that entered is accounted for
(out + counted drops), and every buffer returns to the pool."""

from __future__ import annotations

import random
import signal
import time

from pathlib import Path

from harness import DATA, conserved, scaled, traffic_ports, wait_for
from zeronf import runtime_dir

TRACE = DATA / "pcap/bittorrent.pcap"


def start_traffic(managers, chain, **kw):
    m = managers(ports=traffic_ports(TRACE), chain=chain, rx_paused=True,
                 **kw)
    baseline = m.pool()["in_use"]  # net_pcap keeps its trace in buffers
    return m, baseline


def flowing(m, port=1, min_pkts=1000, timeout=20):
    start = m.call("port.list")["ports"][port]["tx"]
    wait_for(lambda: m.call("port.list")["ports"][port]["tx"] >=
             start + min_pkts, timeout, "traffic flowing")


def stop_traffic(m, baseline):
    m.call("rx.set", enabled=False)
    return m.wait_idle(baseline=baseline)


def test_nf_stop_and_start_while_traffic_flows(managers):
    """Replicas leave (control socket, SIGTERM) and join under load:
    nothing is lost, not a single packet."""
    m, base = start_traffic(managers, "1,2,port:1")
    m.start_nf("forward", 1)
    a = m.start_nf("forward", 2, "a")
    b = m.start_nf("forward", 2, "b")
    m.call("rx.set", enabled=True)
    flowing(m)
    # Stop a through the control socket: it drains and exits cleanly.
    m.call("nf.stop", instance=a.instance)
    assert a.proc.wait(10) == 0
    flowing(m)
    # Stop b with SIGTERM: it asks to leave, drains, exits cleanly.
    m.start_nf("forward", 2, "c")
    flowing(m)
    b.proc.signal(signal.SIGTERM)
    assert b.proc.wait(10) == 0
    flowing(m)
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx > 0 and tx == rx and dropped == 0, st["drops"]
    reg = st["status"]["registry"]
    assert reg["exited"] == 2 and reg["died"] == 0
    assert [n["name"] for n in st["nfs"]] == ["forward1", "c"]


def test_kill9_nf_mid_traffic_no_leak(managers):
    """kill -9 replicas at random moments under load, five times: the
    survivors carry the traffic, the dead NFs' packets are counted as
    nf_exit drops, and once idle every buffer is back in the pool."""
    m, base = start_traffic(managers, "1,port:1")
    nfs = [m.start_nf("forward", 1, f"r{i}") for i in range(2)]
    m.call("rx.set", enabled=True)
    flowing(m)
    rnd = random.Random(7)
    dead = []
    for i in range(5):
        victim = nfs.pop(rnd.randrange(len(nfs)))
        dead.append(victim.proc.pid)
        time.sleep(rnd.uniform(0.05, 0.4))
        victim.proc.signal(signal.SIGKILL)
        victim.proc.wait(5)
        # Found dead within 100 ms.
        wait_for(lambda: m.nf_by_pid(victim.proc.pid) is None, 0.1 + 0.5,
                 "dead NF removed")
        flowing(m)
        nfs.append(m.start_nf("forward", 1, f"n{i}"))
        flowing(m)
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert dropped == st["drops"]["nf_exit"]
    assert st["status"]["registry"]["died"] == 5
    assert st["status"]["pool"]["in_use"] == base  # no buffer leaked
    # The dead NFs' EAL files (mp socket, memseg lists) were removed.
    files = [p.name for p in Path(runtime_dir(m.name)).iterdir()]
    for pid in dead:
        assert not [f for f in files if f"_{pid}" in f], (pid, files)


def test_a_dead_nf_is_detected_by_its_pidfd(managers):
    """The manager learns of an NF's death from its pidfd (in its epoll),
    not by polling: the death is reclaimed however long the NF is gone
    unpolled. How soon: `make bench BENCH=nf_start`'s nf_death line
    (target 100 ms)."""
    m = managers()
    nf = m.start_nf("forward", 1)
    nf.proc.signal(signal.SIGKILL)
    wait_for(lambda: m.nf_by_pid(nf.proc.pid) is None, scaled(5),
             "NF gone")
    st = m.call("status")
    assert st["registry"]["died"] == 1
    assert "died" in m.proc.output()


def test_kill9_manager_nfs_exit_and_restart_works(managers, tmp_path):
    m = managers()
    nfs = [m.start_nf("forward", s) for s in (1, 2)]
    m.proc.signal(signal.SIGKILL)
    for nf in nfs:
        assert nf.proc.wait(scaled(5)) == 3  # exit status: manager gone
    for nf in nfs:
        assert "manager" in nf.proc.output() and "gone" in nf.proc.output()
    # Stale state of the dead manager is there...
    assert m.leftovers()
    # ...and a new manager with the same name cleans it and starts.
    m2 = managers(name=m.name, chain="1,port:0",
                  ports=[f"net_pcap0,rx_pcap={TRACE},"
                         f"tx_pcap={tmp_path / 'o.pcap'}"], rx_paused=True)
    assert "removed stale state" in m2.proc.output()
    m2.start_nf("forward", 1)
    m2.call("rx.set", enabled=True)
    wait_for(lambda: m2.call("port.list")["ports"][0]["tx"] == 299, 20,
             "restarted manager forwards")
    assert m2.shutdown() == 0
    assert m2.leftovers() == []


def test_restart_refused_while_old_nf_hangs(managers):
    """A previous manager died and one of its NFs is stuck (stopped): the
    new manager refuses, naming the pid, instead of wiping state in use."""
    m = managers()
    nf = m.start_nf("forward", 1)
    nf.proc.signal(signal.SIGSTOP)
    m.proc.signal(signal.SIGKILL)
    m.proc.wait(5)
    m2 = managers(name=m.name, wait=False)
    assert m2.proc.wait(15) == 1
    out = m2.proc.output()
    assert "still running" in out and str(nf.proc.pid) in out
    nf.proc.signal(signal.SIGCONT)
    assert nf.proc.wait(5) == 3
    m3 = managers(name=m.name)
    assert "removed stale state" in m3.proc.output()


def test_two_managers_side_by_side(managers, tmp_path):
    from pcaputil import assert_same_per_flow, read_frames
    ms = []
    for i, trace in enumerate([DATA / "pcap/wikipedia.pcap",
                               DATA / "pcap/skype-conference-call.pcap"]):
        out = tmp_path / f"out{i}.pcap"
        m = managers(ports=[f"net_pcap0,rx_pcap={trace},tx_pcap={out}"],
                     chain="1,2,port:0", rx_paused=True)
        m.start_nf("forward", 1)
        m.start_nf("monitor", 2)
        ms.append((m, trace, out))
    # Same service ids, same NF names, separate instances.
    for m, _, _ in ms:
        m.call("rx.set", enabled=True)
    for m, trace, out in ms:
        n = len(read_frames(trace))
        wait_for(lambda: m.call("port.list")["ports"][0]["tx"] == n, 20,
                 "forwarded")
        assert m.shutdown() == 0
        assert_same_per_flow(read_frames(trace), read_frames(out))


def test_same_name_twice_refused(managers):
    m = managers()
    m2 = managers(name=m.name, wait=False)
    assert m2.proc.wait(10) == 1
    assert "already running" in m2.proc.output()
    assert m.call("status")["ready"]  # the first one is unharmed


def test_eight_nfs_on_two_cores(managers):
    """Eight NF processes and the manager share two cores: all of them
    process packets, they sleep when idle, and nothing is lost."""
    m, base = start_traffic(managers, ",".join(str(s) for s in range(1, 9))
                            + ",port:1")
    for s in range(1, 9):
        m.start_nf("forward", s)
    m.call("rx.set", enabled=True)
    flowing(m, min_pkts=50000, timeout=30)
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx and dropped == 0
    assert all(n["rx"] == rx for n in st["nfs"])
    # Idle now: every NF went to sleep rather than spinning.
    time.sleep(0.5)
    before = {n["name"]: n["sleeps"] for n in m.call("nf.list")["nfs"]}
    time.sleep(1.0)
    after = {n["name"]: n["sleeps"] for n in m.call("nf.list")["nfs"]}
    for name in before:
        # An idle NF wakes about 10 times a second to check the manager.
        assert 3 <= after[name] - before[name] <= 30, (name, before, after)


def test_chain_change_while_traffic_flows(managers):
    m, base = start_traffic(managers, "1,2,port:1")
    for s in (1, 2, 3):
        m.start_nf("forward", s)
    m.call("rx.set", enabled=True)
    for i in range(20):
        hops = ["svc:1", f"svc:{2 + i % 2}", "port:1"]
        assert m.call("chain.set", hops=hops)["hops"] == hops
        time.sleep(0.05)
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx and dropped == 0
    nfs = {n["service"]: n for n in st["nfs"]}
    assert nfs[1]["rx"] == rx
    assert nfs[2]["rx"] + nfs[3]["rx"] == rx
    assert nfs[2]["rx"] > 0 and nfs[3]["rx"] > 0


def test_ingress_drop_policy_counts_overload(managers):
    """With --ingress drop, a source faster than the chain is cut at
    ingress and counted there as ingress_full; inside the chain nothing is
    lost. With the default (backpressure) the port is simply polled less:
    nothing is dropped at all and the pauses are counted."""
    for policy in ("drop", "backpressure"):
        m, base = start_traffic(managers, "1,2,3,port:1",
                                args=["--ingress", policy, "--ring-size",
                                      "64"])
        for s in (1, 2, 3):
            m.start_nf("forward", s)
        m.call("rx.set", enabled=True)
        flowing(m, min_pkts=20000)
        st = stop_traffic(m, base)
        rx, tx, dropped = conserved(st)
        assert rx == tx + dropped
        if policy == "drop":
            assert dropped == st["drops"]["ingress_full"] > 0
            assert st["ports"][0]["drops"]["ingress_full"] == dropped
        else:
            assert dropped == 0 and st["ports"][0]["rx_paused"] > 0
        assert m.shutdown() == 0


def test_hung_nf_is_bypassed_by_stall_drops(managers):
    """An NF that stops consuming (SIGSTOP: alive, not dead) fills its
    rings; after --stall-ms the packets waiting for it are dropped as
    'stalled' rather than freezing the whole node. When it resumes,
    traffic flows again; every packet is accounted for."""
    m, base = start_traffic(managers, "1,2,port:1",
                            args=["--stall-ms", "300"])
    m.start_nf("forward", 1)
    hung = m.start_nf("forward", 2)
    m.call("rx.set", enabled=True)
    flowing(m)
    hung.proc.signal(signal.SIGSTOP)
    wait_for(lambda: m.stats()["drops"]["stalled"] > 1000, 20,
             "stall drops")
    assert m.call("status")["ready"]  # the control plane is unaffected
    hung.proc.signal(signal.SIGCONT)
    flowing(m)
    st = stop_traffic(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert dropped == st["drops"]["stalled"]

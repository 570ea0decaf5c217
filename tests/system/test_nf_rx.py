"""System tests of NFs that own port RX queues (run to completion at
ingress: mgr/port/port_nfrx.c, lib/nf/nf_port.c zn_nf_ports_rx): the
replicas of a port's first service poll its RX queues themselves, the
workers never see what enters there; the queues change hands (nobody
polls one twice) when replicas come and go, when the chain changes and
when a flow director rule appears; kill -9 under load loses nothing the
NF did not hold. Real manager, real NFs, net_null ports (the PMD whose
rx_burst keeps nothing between calls)."""

from __future__ import annotations

import random
import signal
import time

from harness import DATA, conserved, run_then_idle, traffic_ports, wait_for

NULL_PORTS = ["net_null0", "net_null1,no-rx=1"]


def nf_rx(m, port: int = 0) -> dict:
    return m.call("port.list")["ports"][port]["nf_rx"]


def owners(m, port: int = 0) -> list:
    """Who polls each queue: an instance, 'workers' or 'nobody'."""
    return [o.get("instance", o["polled_by"])
            for o in nf_rx(m, port)["owners"]]


def worker_rx(m, port: int = 0) -> int:
    p = m.call("port.list")["ports"][port]
    return p["rx"] - p["nf_rx"]["rx"]


def owner_rx(m, port: int = 0) -> dict:
    return {o["instance"]: o["rx"] for o in nf_rx(m, port)["owners"]
            if "instance" in o}


def test_replicas_own_the_ports_queues(managers):
    """--nf-rx-queues 2 on net_null: two replicas of the first service own
    a queue each and take everything that enters; the workers poll
    nothing; every packet goes out, counted once, in the port's totals
    and per NF."""
    m = managers(ports=NULL_PORTS, chain="1,port:1", rx_paused=True,
                 args=["--nf-rx-queues", "2"])
    base = m.pool()["in_use"]
    r = nf_rx(m)
    assert r["queues"] == 2 and r["why_not"] is None
    assert owners(m) == ["workers", "workers"]  # no NF yet
    a = m.start_nf("forward", 1, "a")
    b = m.start_nf("forward", 1, "b")
    wait_for(lambda: sorted(owners(m)) == sorted([a.instance, b.instance]),
             5, "each replica owns a queue")
    st = run_then_idle(m, base, 300000, ready=lambda: all(
        v > 0 for v in owner_rx(m).values()))
    by = {n["name"]: n for n in st["nfs"]}
    port0 = st["ports"][0]
    assert port0["nf_rx"]["rx"] == port0["rx"] > 0
    assert worker_rx(m) == 0
    per = {o["instance"]: o["rx"] for o in port0["nf_rx"]["owners"]}
    assert per[a.instance] > 0 and per[b.instance] > 0
    assert by["a"]["rx"] + by["b"]["rx"] == port0["rx"]
    # what they took they sent themselves (their own TX queues)
    assert by["a"]["handoff"]["to_worker"] == 0
    assert by["b"]["handoff"]["to_worker"] == 0


def test_queue_owners_are_woken_when_rx_starts(managers):
    """While RX is paused an NF owning a queue does not poll it and sleeps
    its long idle sleep (100 ms); rx.set wakes it (its doorbell rung: a
    wake-up, not a sleep that ran out), so it polls at once."""
    m = managers(ports=NULL_PORTS, chain="1,port:1", rx_paused=True,
                 args=["--nf-rx-queues", "1"])
    a = m.start_nf("forward", 1, "a")
    wait_for(lambda: owners(m) == [a.instance], 5, "a owns the queue")

    def nf() -> dict:
        return m.nf_by_pid(a.proc.pid)
    wait_for(lambda: nf()["sleeps"] >= 3, 10, "a idle, asleep")
    woken = nf()["wakeups"]
    m.call("rx.set", enabled=True)
    wait_for(lambda: nf()["wakeups"] > woken, 10, "a woken by rx.set")
    wait_for(lambda: owner_rx(m)[a.instance] > 0, 10, "a polls its queue")


def test_why_the_workers_poll(managers):
    """Off by default; net_pcap and --handoff worker keep it off, each
    said in port.list; a port whose first hop is no service is
    polled by the workers."""
    m = managers(ports=traffic_ports(DATA / "pcap/bittorrent.pcap"),
                 chain="1,port:1", rx_paused=True)
    assert nf_rx(m)["why_not"] == "--nf-rx-queues 0"
    assert m.shutdown() == 0
    for args, why in ((["--nf-rx-queues", "2"],
                       "driver keeps RX buffers between calls"),):
        m = managers(ports=traffic_ports(DATA / "pcap/bittorrent.pcap"),
                     chain="1,port:1", rx_paused=True, args=args)
        assert nf_rx(m)["queues"] == 0 and nf_rx(m)["why_not"] == why
        assert m.shutdown() == 0
    for args, why in ((["--handoff", "worker"], "--handoff worker"),):
        m = managers(ports=NULL_PORTS, chain="1,port:1", rx_paused=True,
                     args=["--nf-rx-queues", "2"] + args)
        assert nf_rx(m)["queues"] == 0 and nf_rx(m)["why_not"] == why
        assert m.shutdown() == 0
    m = managers(ports=NULL_PORTS, chain="port:1", rx_paused=True,
                 args=["--nf-rx-queues", "1"])
    base = m.pool()["in_use"]
    m.start_nf("forward", 1)
    assert nf_rx(m)["workers_now"] == "first hop is no service here"
    assert owners(m) == ["workers"]
    run_then_idle(m, base, 50000)
    assert worker_rx(m) == m.call("port.list")["ports"][0]["rx"]


def test_queues_change_hands_under_traffic(managers):
    """Under traffic: a replica joins (queues re-spread), the chain's first
    hop changes to another service (its replica takes the queue: the
    first service's NF never sees another packet from the port), that
    service's balancing changes (the queues stay), an exact flow rule
    appears (the workers take the queues back: only they
    apply rules) and expires. No packet lost or counted twice, every
    buffer back."""
    m = managers(ports=NULL_PORTS, chain="1,port:1", rx_paused=True,
                 args=["--nf-rx-queues", "2", "--flow-idle-s", "1"])
    base = m.pool()["in_use"]
    a = m.start_nf("forward", 1, "a")
    wait_for(lambda: owners(m) == [a.instance, a.instance], 5, "a owns both")
    m.call("rx.set", enabled=True)
    b = m.start_nf("forward", 1, "b")
    wait_for(lambda: sorted(owners(m)) == sorted([a.instance, b.instance]),
             5, "queues spread")
    c = m.start_nf("forward", 2, "c")
    m.call("chain.set", hops=["svc:2", "port:1"])
    wait_for(lambda: owners(m) == [c.instance, c.instance], 5,
             "the new first hop owns them")
    rx_a = m.call("nf.list")["nfs"]
    before = {n["name"]: n["rx"] for n in rx_a}
    time.sleep(0.3)
    after = {n["name"]: n["rx"] for n in m.call("nf.list")["nfs"]}
    assert after["c"] > before["c"]
    assert after["a"] == before["a"] and after["b"] == before["b"]
    # a balancing change of the first hop's service: the queues stay
    # (what enters a queue is its owner's, as RSS spreads it)
    m.call("service.set", service=2, lb="weighted",
           weights={str(c.instance): 3})
    assert owners(m) == [c.instance, c.instance]
    m.call("flow.add", flows=[{"flow": {"proto": "udp", "src": "10.0.0.1",
                                         "dst": "10.0.0.2", "sport": 1,
                                         "dport": 2},
                                "chain": ["svc:2", "port:1"]}])
    assert owners(m) == ["workers", "workers"]
    assert nf_rx(m)["workers_now"] == "flow director rules"
    w0 = worker_rx(m)
    wait_for(lambda: worker_rx(m) > w0, 5, "workers poll")
    # the rule expires (--flow-idle-s 1): the queues go back to c
    wait_for(lambda: owners(m) == [c.instance, c.instance], 10,
             "queues back after the rule expired")
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    rx, tx, dropped = conserved(st)
    assert rx == tx > 0 and dropped == 0, st["drops"]


def test_kill9_of_a_queue_owner_under_load(managers):
    """kill -9 of a replica polling a queue, under load, five times: its
    queue is taken over at once by the survivor, the pool is whole again
    (what the PMD had taken in a call the NF died in comes back through
    its pool account) and every packet that entered is accounted for:
    out, or lost as nf_exit (what the dead NF held), none twice."""
    m = managers(ports=NULL_PORTS, chain="1,2,port:1", rx_paused=True,
                 args=["--nf-rx-queues", "2"])
    base = m.pool()["in_use"]
    slow = ["--cost-ns", "100"]  # mostly inside its handler
    a = m.start_nf("forward", 1, "a", nf_args=slow)
    m.start_nf("forward", 2, "sink")
    m.call("rx.set", enabled=True)
    rnd = random.Random(5)
    for i in range(5):
        b = m.start_nf("forward", 1, f"b{i}", nf_args=slow)
        wait_for(lambda: owner_rx(m).get(b.instance, 0) > 0, 10,
                 "b polls its queue")
        time.sleep(rnd.uniform(0.01, 0.2))
        b.proc.signal(signal.SIGKILL)
        b.proc.wait(10)
        wait_for(lambda: owners(m) == [a.instance, a.instance], 5,
                 "the survivor took its queue")
        rx0 = owner_rx(m)[a.instance]
        wait_for(lambda: owner_rx(m)[a.instance] > rx0, 5,
                 "the survivor polls both")
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped > 0, st["drops"]
    assert dropped == st["drops"]["nf_exit"] > 0, \
        {k: v for k, v in st["drops"].items() if v}
    reg = m.call("status")["registry"]
    assert reg["died"] == 5
    assert m.pool()["in_use"] == base


def test_kill9_of_a_ring_queue_owner_under_load(managers):
    """net_ring (its RX queue a single-consumer ring the NF dequeues from,
    no buffer taken): port 0 replays a trace forever into port 1, whose
    queue 0 gives back what is sent to it; replicas of the first service
    own it in turn, each killed -9 under load. What the dead NF was
    dequeuing is its burst (the ring's tail says how much) or still in
    the ring for the next owner (its half-done dequeue undone before the
    queue changes hands): every packet out once or lost as nf_exit, the
    pool whole."""
    m = managers(ports=[f"net_pcap0,rx_pcap={DATA}/pcap/bittorrent.pcap,"
                        "infinite_rx=1", "net_ring0", "net_null0,no-rx=1"],
                 chain="1,port:2", rx_paused=True,
                 args=["--nf-rx-queues", "1"])
    m.call("chain.set", port=0, hops=["port:1"])
    base = m.pool()["in_use"]
    slow = ["--cost-ns", "300"]  # busy: the ring stays full
    a = m.start_nf("forward", 1, "a", nf_args=slow)
    wait_for(lambda: owners(m, 1) == [a.instance], 5, "a owns the ring")
    live = {a.instance: a}
    m.call("rx.set", enabled=True)
    rnd = random.Random(11)
    for i in range(4):
        new = m.start_nf("forward", 1, f"r{i}", nf_args=slow)
        live[new.instance] = new
        owner = owners(m, 1)[0]
        rx0 = owner_rx(m, 1)[owner]
        wait_for(lambda: owner_rx(m, 1)[owner] > rx0 + 1000, 10,
                 "its owner takes from the ring")
        time.sleep(rnd.uniform(0.01, 0.2))
        victim = live.pop(owner)
        victim.proc.signal(signal.SIGKILL)
        victim.proc.wait(10)
        (survivor,) = live
        wait_for(lambda: owners(m, 1) == [survivor], 5,
                 "the survivor took the ring")
        rx0 = owner_rx(m, 1)[survivor]
        wait_for(lambda: owner_rx(m, 1)[survivor] > rx0, 10,
                 "the survivor takes from the ring")
    m.call("rx.set", enabled=False)
    # Paused, nothing reads the ring: what is in it stays there (as in a
    # NIC's RX ring), sent into port 1 and not received from it.
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] ==
             m.call("port.list")["ports"][1]["hw"]["opackets"], 5, "sent")
    p1 = m.call("port.list")["ports"][1]
    in_ring = p1["tx"] - p1["rx"]
    assert 0 <= in_ring <= 1024
    st = m.wait_idle(baseline=base + in_ring)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped > 0, st["drops"]  # in_ring: not yet rx
    # Once paused, what the worker still had for the full ring waits
    # there and is dropped as stalled after --stall-ms (nothing reads the
    # ring, as nothing reads a NIC's); else only what the dead held.
    stalled = st["ports"][1]["drops"]["stalled"]
    assert dropped == st["drops"]["nf_exit"] + stalled, \
        {k: v for k, v in st["drops"].items() if v}
    assert st["drops"]["nf_exit"] > 0
    assert m.call("status")["registry"]["died"] == 4


def many_flows_pcap(path, n: int) -> int:
    """n 64-byte UDP frames of n // 4 address pairs (four each)."""
    from scapy.all import IP, UDP, Ether, raw
    from pcaputil import write_pcap
    frames = [raw(Ether() / IP(src=f"10.{i >> 8 & 255}.{i & 255}.1",
                               dst="192.0.2.1") / UDP(sport=1000, dport=53))
              for i in range(n // 4)]
    return write_pcap(path, (frames[i % len(frames)] for i in range(n)))


def test_a_loaded_ring_ports_queue_owner_killed(managers, tmp_path):
    """A ring port holding a capture split by RSS (mgr/port/port_ring.c)
    and two replicas owning its two queues, slow (a microsecond a
    packet); one is killed -9 after it took some: the survivor takes its
    queue and what is left in it. Every frame out once, or lost as what
    the dead one held (nf_exit); every buffer back."""
    pcap = tmp_path / "in.pcap"
    n = many_flows_pcap(pcap, 20000)
    m = managers(ports=[f"net_ring0,zn_ring_size=32768,zn_load={pcap}",
                        "net_null0,no-rx=1"],
                 chain="1,port:1", rx_paused=True,
                 args=["--nf-rx-queues", "2", "--pool-size", "32767"])
    assert m.pool()["in_use"] == n
    a, b = (m.start_nf("forward", 1, x, nf_args=["--cost-ns", "1000"])
            for x in "ab")
    wait_for(lambda: sorted(owners(m)) == sorted([a.instance, b.instance]),
             10, "each owns a queue")
    m.call("rx.set", enabled=True)
    wait_for(lambda: owner_rx(m).get(a.instance, 0) > 1000, 20,
             "a takes from its queue")
    loaded = nf_rx(m)["owners"]
    a.proc.signal(signal.SIGKILL)
    a.proc.wait(10)
    wait_for(lambda: owners(m) == [b.instance, b.instance], 10,
             f"b took a's queue too (before: {loaded})")
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] +
             m.stats()["drops"]["nf_exit"] == n, 60, "every frame")
    st = m.wait_idle(baseline=0)
    assert st["ports"][0]["nf_rx"]["rx"] == n
    assert st["ports"][1]["tx"] + st["drops"]["nf_exit"] == n
    assert sum(st["drops"].values()) == st["drops"]["nf_exit"]
    assert m.pool()["in_use"] == 0


def test_a_loaded_ring_port_nobody_read(managers, tmp_path):
    """The capture still in the queues at shutdown (RX never enabled):
    back in the pool, none missing."""
    pcap = tmp_path / "in.pcap"
    n = many_flows_pcap(pcap, 3000)
    m = managers(ports=[f"net_ring0,zn_ring_size=4096,zn_load={pcap}"],
                 chain="drop", rx_paused=True, args=["--nf-rx-queues", "2"])
    assert m.pool()["in_use"] == n
    assert m.shutdown() == 0
    assert "all 16383 packet buffers returned" in m.proc.output()


def test_ring_port_specs_refused_with_a_reason(tmp_path):
    """A ring port the manager makes: a size that is no power of two, a
    key of the driver's with ours, a capture that cannot be read, more
    frames for a queue than it holds, more than the pool has: the manager
    does not start, says why, and leaves nothing behind."""
    from harness import MGR_BIN, Proc, unique_name, Manager
    pcap = tmp_path / "in.pcap"
    many_flows_pcap(pcap, 1100)
    cases = [
        ("net_ring0,zn_ring_size=1000", [],
         "zn_ring_size: a power of two"),
        (f"net_ring0,zn_load={pcap}", [], "zn_ring_size: a number"),
        ("net_ring0,zn_ring_size=1024,nodeaction=r:0:CREATE", [],
         "only zn_ring_size= and zn_load= may follow"),
        ("net_ring0,zn_ring_size=1024,zn_load=/nonexistent.pcap", [],
         "zn_load: /nonexistent.pcap"),
        (f"net_ring0,zn_ring_size=1024,zn_load={pcap}", [],
         "RX queue 0 full at frame 1023 (zn_ring_size)"),
        (f"net_ring0,zn_ring_size=2048,zn_load={pcap}",
         ["--pool-size", "1023"], "no buffers in the pool for it"),
    ]
    for spec, more, msg in cases:
        name = unique_name()
        p = Proc([MGR_BIN, "-i", name, "-p", spec, *more],
                 tmp_path / f"{name}.log")
        assert p.wait(30) == 1, spec
        assert msg in p.output(), (spec, p.output()[-2000:])
        m = Manager.__new__(Manager)
        m.name = name
        assert m.leftovers() == []

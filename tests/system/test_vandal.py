"""NFs that write garbage where they can (tests/unit/nf_vandal.c): into
the headers of their own rings, and into their own slot in shared memory.
The manager keeps its side of every ring (geometry and positions) in its
own memory (mgr/trust/ring_guard.h) and signals NFs through their pidfd, never a
pid read from shared memory: it keeps running, the honest NF beside the
vandal loses nothing, and once the vandal is gone its slot and rings serve
the next NF as new (docs/architecture.md lists what an NF can write).
The workers resolve packets with their own copy of the routing snapshot,
in memory no NF maps (mgr/trust/private_heap.c): an NF that rewrites the copy NFs
read changes nothing for them."""

from __future__ import annotations

import os
import signal
import time

import pytest

from harness import DATA, conserved, traffic_ports, wait_for


def vandal_env(m):
    """Under tests/sanitize.sh the vandal's own crash is expected: its
    reports go elsewhere, the manager's still count."""
    if "ASAN_OPTIONS" not in os.environ:
        return None
    return {"ASAN_OPTIONS": f"log_path={m.tmp}/vandal-asan:detect_leaks=0",
            "UBSAN_OPTIONS": f"log_path={m.tmp}/vandal-ubsan"}


def faulted(m, proc):
    """The vandal died of SIGSEGV (under AddressSanitizer: exited 1 with
    its report of a SEGV)."""
    rc = proc.wait(30)
    if rc == -signal.SIGSEGV:
        return True
    reports = list(m.tmp.glob(f"vandal-asan.{proc.pid}*"))
    return rc == 1 and any("SEGV" in r.read_text(errors="replace")
                           for r in reports)


def start(managers, chain, vandal_svc, mode, args=(), honest_args=(),
          vandal_args=()):
    m = managers(ports=traffic_ports(DATA / "pcap/bittorrent.pcap"),
                 chain=chain, rx_paused=True,
                 args=["--stall-ms", "200", "--bad-desc-limit", "0",
                       *args])
    base = m.pool()["in_use"]
    honest = m.start_nf("forward", 1, "honest", lib_args=list(honest_args))
    vandal = m.start_nf("test-vandal", vandal_svc, "vandal",
                        nf_args=["--mode", mode], wait=False,
                        lib_args=list(vandal_args), env=vandal_env(m))
    # Registered, then garbage: it may be gone again by now.
    wait_for(lambda: "vandal" in vandal.proc.output() or
             not vandal.proc.alive() or vandal.stats(), 30, "the vandal in")
    return m, base, honest, vandal


def honest_whole(m):
    """Everything the honest NF got went out, nothing of it dropped."""
    def done():
        h = next(n for n in m.call("nf.list")["nfs"]
                 if n["name"] == "honest")
        return h if h["rx"] == h["tx"] else None
    h = wait_for(done, 10, "the honest NF drained")
    assert h["rx"] > 0 and sum(h["drops"].values()) == 0


def beside_the_vandal(m, honest, vandal, rx_more):
    """Once the vandal wrote garbage a few times, traffic until the
    honest NF got @rx_more packets; it lost none and the vandal (which
    wrote all along) lives."""
    wait_for(lambda: (vandal.stats() or {}).get("counters", {})
             .get("vandalised", 0) > 3, 30, "garbage written")
    m.call("rx.set", enabled=True)
    wait_for(lambda: (honest.stats() or {}).get("rx", 0) > rx_more, 30,
             "the honest NF working")
    m.call("rx.set", enabled=False)
    honest_whole(m)
    assert vandal.proc.alive()


def finish(m, base, honest, vandal, totals=True):
    # The vandal is gone (crashed on its own garbage, or killed here).
    if vandal.proc.alive():
        vandal.proc.kill()
    vandal.proc.wait(10)
    wait_for(lambda: m.nf_by_pid(vandal.proc.pid) is None, 15,
             "the vandal reclaimed")
    # Its slot and rings serve a new NF as new: traffic flows through it.
    fresh = m.start_nf("forward", 1, "fresh")
    honest.proc.signal(signal.SIGTERM)
    honest.proc.wait(10)
    wait_for(lambda: m.nf_by_pid(honest.proc.pid) is None, 15, "honest gone")
    m.call("rx.set", enabled=True)
    wait_for(lambda: (fresh.stats() or {}).get("rx", 0) > 2000, 30,
             "the fresh NF working")
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    nfs = {n["name"]: n for n in st["nfs"]}
    assert nfs["fresh"]["rx"] == nfs["fresh"]["tx"]
    assert sum(nfs["fresh"]["drops"].values()) == 0
    # The pool whole: wait_idle (in_use back to base).
    if totals:
        rx, tx, dropped = conserved(st)
        assert rx == tx + dropped
    # else: a dead NF's own counters (its drops, what it sent on a port)
    # go into the totals as it wrote them: a vandal's are garbage
    # (docs/architecture.md).
    assert m.call("status")["ready"]
    assert m.shutdown() == 0
    # and every pool whole at exit, the group's port's headers given back
    assert "not returned" not in m.proc.output()


def test_garbage_in_its_rings(managers):
    """The vandal is a replica of the chain's service: its RX ring's
    consumer position says it took more than was ever given (the worker
    holds its packets back and drops them as stalled), its TX ring's
    producer position points past the ring (the worker reads nothing), and
    the rings' geometry is garbage (the manager never reads it)."""
    m, base, honest, vandal = start(managers, "1,port:1", 1, "ring")
    m.call("rx.set", enabled=True)
    wait_for(lambda: (honest.stats() or {}).get("rx", 0) > 5000, 30,
             "the honest replica working")
    m.call("rx.set", enabled=False)
    honest_whole(m)
    finish(m, base, honest, vandal)


def test_garbage_in_its_slot(managers):
    """The vandal serves a service outside the chain and writes random
    bytes into its slot: ledger, counters, the worker's line, its links,
    routing state, requests, replies, its doorbell, and its pid (1) and
    group. Nobody else is touched, nf.list still answers, no signal goes
    to pid 1, and its reclaim frees nothing it names."""
    m, base, honest, vandal = start(managers, "1,port:1", 2, "slot")
    # It writes at init, then every tick, until its own library trips
    # over what it wrote (it usually does).
    wait_for(lambda: not vandal.proc.alive() or
             (vandal.stats() or {}).get("counters", {})
             .get("vandalised", 0) > 3, 30, "garbage written")
    m.call("rx.set", enabled=True)
    wait_for(lambda: (honest.stats() or {}).get("rx", 0) > 5000, 30,
             "the honest NF working")
    for _ in range(5):
        assert m.call("nf.list")["nfs"]
        m.call("group.list")
        m.call("port.list")
    m.call("rx.set", enabled=False)
    honest_whole(m)
    assert os.getppid() > 0  # we are alive: init got no signal
    finish(m, base, honest, vandal, totals=False)


def test_garbage_in_the_routing_snapshot(managers):
    """The vandal (a service outside the chain) empties the routing
    snapshot NFs read, every tick: no chains, no services, no TX rings to
    drain. The workers go on with theirs: everything entering port 0
    reaches the honest NF and leaves on port 1, nothing drops."""
    m, base, honest, vandal = start(managers, "1,port:1", 2, "route")
    wait_for(lambda: (vandal.stats() or {}).get("counters", {})
             .get("vandalised", 0) > 3, 30, "garbage written")
    m.call("rx.set", enabled=True)
    wait_for(lambda: (honest.stats() or {}).get("rx", 0) > 5000, 30,
             "the honest NF working")
    m.call("rx.set", enabled=False)
    honest_whole(m)
    st = m.wait_idle(baseline=base)
    assert vandal.proc.alive()  # it wrote all along
    assert sum(st["drops"].values()) == 0, st["drops"]
    rx, tx, dropped = conserved(st)
    assert rx == tx > 5000
    finish(m, base, honest, vandal)


def faults_and_harms_none(m, honest, mode, rx_more):
    """A vandal of @mode dies of SIGSEGV; the honest NF goes on to
    @rx_more packets, losing none; the vandal's slot is reclaimed."""
    v = m.start_nf("test-vandal", 2, mode, nf_args=["--mode", mode],
                   wait=False, env=vandal_env(m))
    assert faulted(m, v.proc)
    m.call("rx.set", enabled=True)
    wait_for(lambda: (honest.stats() or {}).get("rx", 0) > rx_more, 30,
             "the honest NF working on")
    m.call("rx.set", enabled=False)
    honest_whole(m)
    wait_for(lambda: m.nf_by_pid(v.proc.pid) is None, 15,
             f"the {mode} vandal reclaimed")
    return v


def test_another_groups_nf_is_out_of_reach(managers):
    """The honest NF is in trust group "blue": its slot and rings are in
    blue's file (mgr/trust/group_home.c), which the vandal (no group) does not map.
    The vandal sets "stop" in every slot it can write, every tick: the
    honest NF runs on and loses nothing. A second vandal writes into the
    honest NF's RX ring through the address the manager publishes, a
    third into the group's pool (header and free ring) found by name: each
    faults there (SIGSEGV), and the honest NF loses nothing either."""
    m, base, honest, vandal = start(
        managers, "1,port:1", 2, "others",
        args=["--trust-group", "blue:2047"],
        honest_args=["--trust-group", "blue"])
    wait_for(lambda: (vandal.stats() or {}).get("counters", {})
             .get("vandalised", 0) > 3, 30, "stop written")
    m.call("rx.set", enabled=True)
    wait_for(lambda: (honest.stats() or {}).get("rx", 0) > 5000, 30,
             "the honest NF working")
    m.call("rx.set", enabled=False)
    honest_whole(m)
    assert honest.proc.alive()
    assert vandal.proc.alive()  # it wrote all along
    vandal.proc.kill()
    vandal.proc.wait(10)
    wait_for(lambda: m.nf_by_pid(vandal.proc.pid) is None, 15,
             "the vandal reclaimed")
    faults_and_harms_none(m, honest, "reach", 10000)
    # The group's pool: its header, lcore caches and free ring are in
    # the group's file too (mgr/trust/group.c); a third vandal that finds them
    # by their memzones' names faults writing there.
    pool = faults_and_harms_none(m, honest, "pool", 15000)
    finish(m, base, honest, pool)


@pytest.mark.parametrize("port", ["shared", "blue"])
def test_garbage_in_free_buffers_of_its_pool(managers, port):
    """The vandal, in trust group "blue", tells every free buffer of
    blue's pool (those in its free ring) that its data is at an address
    mapped nowhere, every tick, while packets enter blue's pool for the
    honest NF of blue. Port 0 of no group: the manager copies the shared
    pool's packets into blue's, each copy written where the pool keeps
    that buffer's data, its header reset as the pool made it
    (mgr/trust/copy_hot.c); it wrote where the header said before, and died.
    Port 0 of blue (--port-group): its driver receives into headers of
    the manager's, each with a buffer of blue attached where the
    manager's map says it is (mgr/trust/port_headers.h); it wrote where the buffer's
    header said before, and the manager died. Now nothing is lost."""
    m, base, honest, vandal = start(
        managers, "1,port:1", 2, "freebufs",
        args=["--trust-group", "blue:2047"] +
        (["--port-group", "0=blue"] if port == "blue" else []),
        honest_args=["--trust-group", "blue"],
        vandal_args=["--trust-group", "blue"])
    beside_the_vandal(m, honest, vandal, 20000)
    st = m.call("status")
    assert st["ready"]
    gl = m.call("group.list")
    groups = {g["name"]: g for g in gl["groups"]}
    if port == "shared":
        assert groups["blue"]["copied_in"] > 20000, groups["blue"]
    else:
        assert groups["blue"]["copied_in"] == 0, groups["blue"]
        assert gl["received_as_headers"] > 20000, gl
    finish(m, base, honest, vandal)


def blue_pool_vandalised(managers, mode, repaired):
    """The vandal, in trust group "blue" and first in the chain, writes
    garbage into blue's pool (--mode @mode) every tick while the manager
    copies every packet into blue's pool for it and out of it for the
    honest NF (no group) next: nothing is lost. The manager writes what
    the vandal changed back every 50 ms (@repaired(group.list) says it
    did), so after the vandal is gone a new NF of blue (its DPDK code
    reads what was written back) serves as its replacement; the pool is
    whole, the manager exits cleanly."""
    m = managers(ports=traffic_ports(DATA / "pcap/bittorrent.pcap"),
                 chain="2,1,port:1", rx_paused=True,
                 args=["--stall-ms", "200", "--trust-group", "blue:2047"])
    base = m.pool()["in_use"]
    honest = m.start_nf("forward", 1, "honest")
    vandal = m.start_nf("test-vandal", 2, "vandal",
                        nf_args=["--mode", mode],
                        lib_args=["--trust-group", "blue"], env=vandal_env(m))
    beside_the_vandal(m, honest, vandal, 50000)
    assert m.call("group.list")["groups"][0]["copied_in"] > 50000
    vandal.proc.kill()
    vandal.proc.wait(10)
    wait_for(lambda: m.nf_by_pid(vandal.proc.pid) is None, 15,
             "the vandal reclaimed")
    time.sleep(0.2)  # the last garbage written back
    gl = m.call("group.list")
    assert repaired(gl), gl
    fresh = m.start_nf("forward", 2, "fresh", lib_args=["--trust-group",
                                                        "blue"])
    m.call("rx.set", enabled=True)
    wait_for(lambda: (fresh.stats() or {}).get("rx", 0) > 20000, 30,
             "the fresh NF of blue working")
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert dropped == st["drops"]["nf_exit"] + st["drops"]["no_instance"]
    assert m.call("group.list")["groups"][0]["pool"]["in_use"] == 0
    assert m.shutdown() == 0


def test_garbage_in_its_pools_ring(managers):
    """blue_pool_vandalised: the geometry of blue's pool's free ring
    (size, mask, capacity) every tick, its positions moved once by 2^30:
    the manager's refills and frees use the ring with the geometry it
    made it with (lib/nf/nf_pool_ops.c). Before, DPDK's ring code
    followed the mask out of the ring and the manager died."""
    blue_pool_vandalised(managers, "poolring",
                         lambda gl: gl["ring_repairs"] > 0)


def test_garbage_in_its_pools_header(managers):
    """blue_pool_vandalised: blue's pool's rte_mempool header (every
    field: the caches' address, the ops index, the free ring's address;
    each lcore cache's length; the data room): the manager gets and puts
    blue's buffers with its own header of the pool (mgr/trust/pool_header.c).
    Before, the first copy into blue followed the garbage and the
    manager died (an ops index out of range is a DPDK panic)."""
    blue_pool_vandalised(
        managers, "poolhdr",
        lambda gl: gl["groups"][0]["pool"]["header_repairs"] > 0)


def test_another_group_cannot_hold_its_readers(managers):
    """The vandal (no group) marks every other reader of the RCU variable
    of NFs of no group online since long ago, every tick, while routing
    changes: the manager kills a reader stuck online for 2 s, and the
    honest NF, in trust group "blue", reports to its group's variable
    (mgr/trust/group.c): it is never waited for, nor killed, and loses
    nothing."""
    m, base, honest, vandal = start(
        managers, "1,port:1", 2, "rcu",
        args=["--trust-group", "blue:2047"],
        honest_args=["--trust-group", "blue"])
    wait_for(lambda: (vandal.stats() or {}).get("counters", {})
             .get("vandalised", 0) > 3, 30, "garbage written")
    m.call("rx.set", enabled=True)
    for _ in range(4):  # each publishes and waits for every reader
        m.call("chain.set", hops=["svc:1", "port:1"])
        time.sleep(0.8)
    # nobody was waited for as a reader stuck for 2 s
    assert "held the routing table" not in m.proc.output()
    wait_for(lambda: (honest.stats() or {}).get("rx", 0) > 5000, 30,
             "the honest NF working")
    m.call("rx.set", enabled=False)
    honest_whole(m)
    assert honest.proc.alive()
    assert m.nf_by_pid(honest.proc.pid) is not None
    finish(m, base, honest, vandal)


@pytest.mark.parametrize("group", [None, "blue"])
def test_garbage_in_the_rcu_variables_header(managers, group):
    """The vandal writes garbage where DPDK's RCU code finds the readers'
    bitmap and its length (max_threads, num_elems, num_threads) in the
    RCU variable it reports to (its group's, or the one of NFs of no
    group) every tick, while routing changes: the manager, which checks
    each reader's counter where it is (mgr/flow/route.c), lives, and the
    honest NF beside it loses nothing. Before, the manager's grace period
    read (and its reader registration wrote) where the garbage said."""
    g = ["--trust-group", group] if group else []
    m, base, honest, vandal = start(
        managers, "1,port:1", 2, "rcuhdr",
        args=["--trust-group", "blue:2047"], honest_args=g, vandal_args=g)
    wait_for(lambda: (vandal.stats() or {}).get("counters", {})
             .get("vandalised", 0) > 3, 30, "garbage written")
    m.call("rx.set", enabled=True)
    for _ in range(4):  # each publishes and waits for every reader
        m.call("chain.set", hops=["svc:1", "port:1"])
        time.sleep(0.3)
    wait_for(lambda: (honest.stats() or {}).get("rx", 0) > 5000, 30,
             "the honest NF working")
    m.call("rx.set", enabled=False)
    honest_whole(m)
    assert vandal.proc.alive() and m.proc.alive()
    finish(m, base, honest, vandal)


def test_garbage_in_its_groups_heap(managers):
    """The vandal, in trust group blue, writes garbage neighbours into
    the header DPDK's rte_malloc keeps before each structure of blue's
    heap (its pool's header and free ring, its routing copy, its RCU
    variable), every tick: the manager frees them at exit from the heap as it made
    it (mgr/trust/group.c), and exits cleanly with every pool whole. Before, it
    followed the garbage at exit and died (SIGSEGV)."""
    m, base, honest, vandal = start(
        managers, "1,port:1", 2, "heaphdr",
        args=["--trust-group", "blue:2047"],
        vandal_args=["--trust-group", "blue"])
    beside_the_vandal(m, honest, vandal, 5000)
    vandal.proc.kill()
    vandal.proc.wait(10)
    wait_for(lambda: m.nf_by_pid(vandal.proc.pid) is None, 15,
             "the vandal reclaimed")
    m.wait_idle(baseline=base)
    assert m.shutdown() == 0
    assert "not returned" not in m.proc.output()


def test_garbage_ring_pointers(managers):
    """The vandal (a service outside the chain) writes garbage into every
    ring pointer the manager publishes to NFs (each NF's RX and TX ring,
    each link's ring), every tick, while two replicas of the chain's
    service balance LEAST_LOADED (a new flow's pick reads every replica's
    backlog). Workers read the rings through the manager's own pointers,
    NFs through those they found at registration: nothing is lost."""
    m, base, honest, vandal = start(managers, "1,port:1", 2, "pointers")
    other = m.start_nf("forward", 1, "honest2")
    m.call("service.set", service=1, lb="least_loaded")
    wait_for(lambda: (vandal.stats() or {}).get("counters", {})
             .get("vandalised", 0) > 3, 30, "garbage written")
    m.call("rx.set", enabled=True)
    wait_for(lambda: (honest.stats() or {}).get("rx", 0) +
             (other.stats() or {}).get("rx", 0) > 10000, 30,
             "the replicas working")
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    assert vandal.proc.alive()  # it wrote all along
    assert sum(st["drops"].values()) == 0, st["drops"]
    rx, tx, dropped = conserved(st)
    assert rx == tx > 10000
    other.proc.signal(signal.SIGTERM)
    other.proc.wait(10)
    finish(m, base, honest, vandal)



def test_garbage_in_the_message_ring(managers):
    """The NFs' message ring is in the EAL's memory, which every NF of no
    group writes. The vandal writes forged messages straight into its
    slots (every type, for every slot, as every trust group, and random
    bytes), then garbage into its header (a mask of 2^32 - 1: DPDK's
    dequeue would read 32 GB around the ring), tick after tick. The
    manager reads the ring with the geometry it made it with, counts and
    drops what no NF of no group may send (a group's NF speaks on its
    group's kick socket only: blue's NF runs on, every packet through),
    resets the header it finds written, and the next NF of no group
    registers through the ring as usual (finish)."""
    m, base, honest, vandal = start(
        managers, "1,port:1", 2, "msgs",
        args=["--trust-group", "blue:2047"],
        honest_args=["--trust-group", "blue"])
    beside_the_vandal(m, honest, vandal, 5000)
    reg = m.call("status")["registry"]
    assert reg["bad_messages"] > 0 and reg["message_ring_resets"] > 0, reg
    assert m.nf_by_pid(honest.proc.pid)["state"] == "running"
    assert not [e for e in m.call("event.list")["events"]
                if "honest" in e["message"] and
                e["type"] in ("nf.exit", "nf.died", "nf.left")]
    finish(m, base, honest, vandal)

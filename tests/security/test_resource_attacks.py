"""Attacks on what NFs share (issue 28): an NF that takes more than its
share of the flow table, or leaves it full behind it (item 11); one that
sends buffers again that another NF holds (item 10). Flow table, before:
one NF installed rules until the table was full (every entry of
--flow-capacity), they outlived its kill -9, and the operator's own
`flow add` then failed "flow table full" until they expired (never with
--flow-idle-s 0)."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys

import pytest

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import rdpcap, wrpcap

from harness import scaled, wait_for
from zeronf import ZeroNFError
from zeronf.client import Client, tenant_socket_path


def counters(nf) -> dict:
    return (nf.stats() or {}).get("counters", {})


def fdir(m) -> dict:
    return m.call("stats")["fdir"]


def test_an_nf_cannot_fill_the_flow_table_nor_leave_it_full(managers):
    m = managers(ports=["net_null0,no-rx=1"], chain="1,drop",
                 args=["--flow-capacity", "4096", "--flow-idle-s", "0"])
    f = fdir(m)
    assert f["nf_flow_quota"] == 512 and f["tenant_flow_quota"] == 1024
    hog = m.start_nf("test-hog", 1, nf_args=["--mode", "rules"])
    wait_for(lambda: counters(hog).get("refused"), scaled(30),
             "the hog refused")
    assert counters(hog) == {"rules": 512, "refused": errno.EDQUOT}
    # One that asks for its rules to outlive it: the rules all NFs keep
    # have a quota of their own.
    keeper = m.start_nf("test-hog", 1, nf_args=["--mode", "rules",
                                                 "--keep"])
    wait_for(lambda: counters(keeper).get("refused"), scaled(30),
             "the keeper refused")
    assert counters(keeper) == {"rules": 512, "refused": errno.EDQUOT}
    f = fdir(m)
    assert f["flows"] == 1024 and f["flows_kept_by_nfs"] == 512
    assert f["flows_over_quota"] == 2
    # Killed, the hog's rules go with it; the keeper's stay.
    os.kill(hog.proc.pid, signal.SIGKILL)
    wait_for(lambda: fdir(m)["flows"] == 512, scaled(20),
             "the hog's rules removed")
    assert fdir(m)["flows_of_gone_nfs"] == 512
    os.kill(keeper.proc.pid, signal.SIGKILL)
    wait_for(lambda: not m.call("nf.list")["nfs"], scaled(20), "NFs gone")
    assert fdir(m)["flows"] == 512
    # The operator's own rules find room (the quotas leave it), and are
    # not bound by them.
    flows = [{"flow": {"proto": "tcp", "src": f"10.9.{i >> 8}.{i & 255}",
                       "dst": "10.8.0.1", "sport": 1000, "dport": 80},
              "chain": ["drop"], "both": False} for i in range(1500)]
    for i in range(0, len(flows), 250):  # a request is at most 64 KiB
        m.call("flow.add", flows=flows[i:i + 250])
    assert fdir(m)["flows"] == 2012
    assert m.shutdown() == 0


def test_a_tenant_cannot_fill_the_flow_table(managers):
    """A tenant's rules (its socket's and its NFs') have a quota of their
    own; the operator's do not count against it."""
    m = managers(ports=["net_null0,no-rx=1"], chain="1,drop",
                 args=["--trust-group", "red", "--tenant",
                       "red=red,services=10-19", "--slice", "red:0",
                       "--tenant-flow-quota", "8"])

    def flows(first, n, chain):
        return [{"flow": {"proto": "udp", "src": f"10.1.0.{first + i}",
                          "dst": "10.2.0.1", "sport": 5, "dport": 6},
                 "chain": chain, "both": False} for i in range(n)]
    with Client(path=tenant_socket_path(m.name, "red")) as red:
        red.call("flow.add", flows=flows(0, 8, ["drop"]))
        with pytest.raises(ZeroNFError, match="tenant's rules are at its "
                           "quota") as e:
            red.call("flow.add", flows=flows(8, 1, ["drop"]))
        assert e.value.code == -errno.EDQUOT
        # Replacing one of its rules takes no more room.
        red.call("flow.add", flows=flows(0, 1, ["drop"]))
    m.call("flow.add", flows=flows(100, 20, ["drop"]))
    assert fdir(m)["flows"] == 28 and fdir(m)["flows_over_quota"] == 1
    assert m.shutdown() == 0


@pytest.mark.parametrize("handoff", ["direct", "worker"])
def test_a_replayed_packet_is_the_replayers_not_its_holders(managers,
                                                            tmp_path,
                                                            handoff):
    """Item 10: an NF passes 40 packets on to an honest NF that needs
    100 ms for each, then sends the last 16 buffers again as packets it
    made (zn_nf_send) while the honest NF still holds them. They are its
    bad descriptors (it is killed past the limit), not the honest NF's:
    before, the workers took them as new, sent them out and freed them
    while the honest NF held them, and the honest NF, handing them back
    later, was charged (and killed past the limit)."""
    trace = tmp_path / "in.pcap"
    wrpcap(str(trace), [Ether() / IP(src="10.0.0.1", dst="10.0.0.2") /
                        UDP(sport=1000 + i, dport=53) / Raw(b"x" * i)
                        for i in range(40)])
    out = tmp_path / "out.pcap"
    m = managers(ports=[f"net_pcap0,rx_pcap={trace},tx_pcap={out}"],
                 chain="1,2,port:0", rx_paused=True,
                 args=["--handoff", handoff, "--bad-desc-limit", "8"])
    base = m.pool()["in_use"]
    honest = m.start_nf("forward", 2, nf_args=["--cost-ns", "100000000"])
    m.start_nf("test-hog", 1, nf_args=["--mode", "replay", "--last",
                                             "16"])
    m.call("rx.set", enabled=True)
    ev = wait_for(lambda: [e for e in m.call("event.list")["events"]
                           if e["type"] == "nf.killed"], scaled(30),
                  "the replayer killed")
    assert len(ev) == 1 and "test-hog1" in ev[0]["message"] and \
        "16 bad descriptors" in ev[0]["message"], ev
    wait_for(lambda: honest.stats()["rx"] == 40, scaled(30), "all in")
    m.wait_idle(baseline=base, timeout=scaled(30))
    nf = honest.stats()
    assert nf["drops"].get("bad_descriptor", 0) == 0, nf["drops"]
    assert nf["rx"] == 40 and nf["tx"] == 40
    assert not [e for e in m.call("event.list")["events"]
                if e["type"] == "nf.killed" and "forward" in e["message"]]
    # What the replayer did to the metadata of the packets it had passed
    # on (zn_pkt_meta_init: back to the chain's start, its own service,
    # gone) is counted: no packet lost unaccounted, none out twice, every
    # buffer back in the pool.
    st = m.stats()
    sent = m.call("port.list")["ports"][0]["tx"]
    assert sent + st["drops"].get("no_instance", 0) == 40, st["drops"]
    assert sent >= 24
    assert m.pool()["in_use"] == base
    assert m.shutdown() == 0
    got = [bytes(p) for p in rdpcap(str(out))]
    assert len(set(got)) == len(got) == sent
    assert set(got) <= {bytes(p) for p in rdpcap(str(trace))}


@pytest.mark.parametrize("groups", [True, False],
                         ids=["across-groups", "no-group"])
def test_an_nf_cannot_reset_the_loop_guard(managers, tmp_path, groups):
    """Item 12: an NF sends every packet it gets to an honest NF's service
    as if it had been nowhere yet (chain position START, hop count 0,
    TO_SERVICE), and the honest NF's NEXT sends it back. Before, the loop
    guard read the hop count the NF had just rewritten: the packets
    circled for ever, the honest NF's capacity spent on them. The workers
    count the hops in their own map: each packet makes its 64 NF hops (32
    visits to each NF) and is dropped as hop_limit, every buffer back in
    the pool. (A packet the NF marks as made by it starts a count of its
    own: the NF is then a source, as a generator that sends what it gets
    again is: test_a_source_s_packets_count_from_zero.)"""
    n = 20
    trace = tmp_path / "in.pcap"
    wrpcap(str(trace), [Ether() / IP(src="10.0.0.1", dst="10.0.0.2") /
                        UDP(sport=1000 + i, dport=53) for i in range(n)])
    args = ["--handoff", "worker"]
    if groups:
        args += ["--trust-group", "a:2047", "--trust-group", "b:2047"]
    m = managers(ports=[f"net_pcap0,rx_pcap={trace},"
                        f"tx_pcap={tmp_path / 'out.pcap'}"],
                 chain="1,2,port:0", rx_paused=True, args=args)
    base = m.pool()["in_use"]
    hog = m.start_nf("test-hog", 1, "hog",
                     lib_args=["--trust-group", "a"] if groups else None,
                     nf_args=["--mode", "loop", "--to", "2"])
    honest = m.start_nf("forward", 2, "honest",
                        lib_args=["--trust-group", "b"] if groups else None)
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.stats()["drops"].get("hop_limit", 0) == n,
             scaled(30), "every packet dropped by the loop guard")
    m.wait_idle(baseline=base, timeout=scaled(30))
    assert counters(hog) == {"looped": 32 * n}
    assert honest.stats()["rx"] == 32 * n
    st = m.stats()
    assert st["drops"]["hop_limit"] == n, st["drops"]
    assert m.call("port.list")["ports"][0]["tx"] == 0
    assert m.pool()["in_use"] == base
    assert m.shutdown() == 0


def test_a_source_s_packets_count_from_zero(managers, tmp_path):
    """The same NF marking each packet as one it made: a source (a
    generator sends what comes back again, as the speed tester does): its
    packets start a hop count of their own: none reaches the hop limit."""
    trace = tmp_path / "in.pcap"
    wrpcap(str(trace), [Ether() / IP(src="10.0.0.1", dst="10.0.0.2") /
                        UDP(sport=1000 + i, dport=53) for i in range(4)])
    m = managers(ports=[f"net_pcap0,rx_pcap={trace},"
                        f"tx_pcap={tmp_path / 'out.pcap'}"],
                 chain="1,2,port:0", rx_paused=True,
                 args=["--handoff", "worker"])
    hog = m.start_nf("test-hog", 1, "hog",
                     nf_args=["--mode", "loop", "--to", "2", "--new"])
    m.start_nf("forward", 2, "honest")
    m.call("rx.set", enabled=True)
    wait_for(lambda: counters(hog).get("looped", 0) > 32 * 4 * 4,
             scaled(30), "packets past four times the hop limit")
    st = m.stats()
    assert st["drops"].get("hop_limit", 0) == 0, st["drops"]


def test_nfs_stop_yielding_to_a_thread_that_keeps_the_core(managers,
                                                            tmp_path):
    """Item 13: a thread that never yields (a busy loop here; an NF
    spinning in its handler is the same to the scheduler) shares the core
    of the manager's worker and a forwarder, under traffic. Before, each
    empty poll of theirs yielded to it, handing it a whole time slice
    while their rings filled (48 -> 2.5 Mpps, `make bench BENCH=spinner`).
    Now yields that last slices turn yielding off for a while: they
    wait on their doorbells instead, and a wake-up takes the core back.
    Checked here: the long yields were seen and counted by both, packets
    went through, all came back to the pool (the rate is the bench's)."""
    trace = tmp_path / "in.pcap"
    wrpcap(str(trace), [Ether() / IP(src="10.0.0.1", dst="10.0.0.2") /
                        UDP(sport=1000 + i, dport=53) for i in range(64)])
    cpu = sorted(os.sched_getaffinity(0))[0]
    m = managers(ports=[f"net_pcap0,rx_pcap={trace},infinite_rx=1",
                        "net_null0,no-rx=1"],
                 chain="1,port:1", rx_paused=True, args=["--cpus", str(cpu)])
    base = m.pool()["in_use"]
    fwd = m.start_nf("forward", 1, lib_args=["--cpus", str(cpu)])
    spinner = subprocess.Popen(
        [sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {{{cpu}}})"
         "\nwhile True:\n    pass"])

    def cpu_ticks() -> int:
        f = open(f"/proc/{spinner.pid}/stat").read().rsplit(")", 1)[1]
        return int(f.split()[11])  # utime

    try:
        wait_for(lambda: cpu_ticks() > 0, scaled(10), "the spinner spins")
        m.call("rx.set", enabled=True)
        wait_for(lambda: m.nf_by_pid(fwd.proc.pid)["long_yields"] > 0 and
                 m.stats()["workers"][0]["long_yields"] > 0, scaled(60),
                 "long yields seen by the NF and the worker")
        m.call("rx.set", enabled=False)
    finally:
        spinner.kill()
        spinner.wait()
    assert m.call("port.list")["ports"][1]["tx"] > 0
    m.wait_idle(baseline=base, timeout=scaled(30))
    assert m.shutdown() == 0


def registry(m) -> dict:
    return m.call("status")["registry"]


def test_an_nf_cannot_drain_the_shared_pool_nor_keep_it(managers):
    """Item 9: an NF of no group allocated 14,321 of the shared pool's
    16,383 buffers (rte_pktmbuf_alloc: not packets it was given) and kept
    them; after its kill -9 they never came back (a new NF got 13 buffers,
    the shutdown found them missing). Now each NF's takes from the shared
    pool are counted against --nf-pool-quota (default: a quarter of the
    pool), and what it still keeps when it is gone (killed, or leaving
    without freeing it) is put back."""
    m = managers(ports=["net_null0,no-rx=1"], chain="1,drop",
                 args=["--pool-size", "4095"])
    base = m.pool()["in_use"]
    assert m.pool()["nf_quota"] == 1023
    # It allocates until refused, frees 100, and allocates again.
    hog = m.start_nf("test-hog", 1, "hog", nf_args=["--mode", "alloc",
                                                    "--free", "100"])
    wait_for(lambda: counters(hog).get("allocated"), scaled(30),
             "the hog refused")
    assert counters(hog) == {"allocated": 1023, "refusals": 2}
    nf = hog.stats()
    assert nf["pool_held"] == 1023 and nf["pool_refused"] >= 2
    other = m.start_nf("test-hog", 1, "other", nf_args=["--mode", "alloc"])
    wait_for(lambda: counters(other).get("allocated"), scaled(30),
             "the other refused")
    assert counters(other) == {"allocated": 1023, "refusals": 1}
    assert m.pool()["in_use"] == base + 2 * 1023
    # Killed, what it kept is back; the other's is not touched.
    os.kill(hog.proc.pid, signal.SIGKILL)
    wait_for(lambda: m.pool()["in_use"] == base + 1023, scaled(20),
             "the hog's buffers back")
    assert registry(m)["allocs_returned"] == 1023
    ev = [e for e in m.call("event.list")["events"]
          if e["type"] == "nf.allocs_returned"]
    assert len(ev) == 1 and "'hog'" in ev[0]["message"] and \
        "kept 1023 buffers" in ev[0]["message"], ev
    assert other.stats()["pool_held"] == 1023
    # One that leaves (SIGTERM: zn_nf_close) without freeing them: the
    # same.
    other.proc.signal(signal.SIGTERM)
    assert other.proc.wait(scaled(20)) == 0
    wait_for(lambda: m.pool()["in_use"] == base, scaled(20),
             "the other's buffers back")
    assert registry(m)["allocs_returned"] == 2 * 1023
    # A new NF gets its whole quota.
    late = m.start_nf("test-hog", 1, "late", nf_args=["--mode", "alloc"])
    wait_for(lambda: counters(late).get("allocated"), scaled(30),
             "the late one refused")
    assert counters(late) == {"allocated": 1023, "refusals": 1}
    os.kill(late.proc.pid, signal.SIGKILL)
    wait_for(lambda: m.pool()["in_use"] == base, scaled(20), "all back")
    assert m.shutdown() == 0


def test_what_an_nf_sends_is_not_what_it_keeps(managers):
    """The other side of item 9: buffers an NF allocated and sent on
    (zn_nf_send) are the ledger's, not 'kept': its count is what its
    lcore's cache holds at most (the refill's rest: 768 taken for 512),
    not the 512 it sent; when it is killed with its packets in flight,
    none is put back twice (the pool comes back exactly whole, nothing
    returned as kept: its cache is flushed first)."""
    m = managers(chain="2,1", args=["--pool-size", "4095"])
    base = m.pool()["in_use"]
    m.start_nf("forward", 2)
    st = m.start_nf("speed-tester", 1, nf_args=["-n", "512", "-d", "30"])
    wait_for(lambda: (st.stats() or {}).get("rx", 0) > 10000, scaled(30),
             "packets circulating")
    assert st.stats()["created"] == 512
    assert st.stats()["pool_held"] == 256
    os.kill(st.proc.pid, signal.SIGKILL)
    m.wait_idle(baseline=base, timeout=scaled(30))
    assert m.pool()["in_use"] == base
    assert registry(m)["allocs_returned"] == 0
    assert m.shutdown() == 0


def test_an_nf_cannot_keep_the_control_thread_busy_with_rules(managers):
    """Messages per second: an NF asking for flow rules as fast as the
    manager answers keeps its control thread busy (each request a flow
    table update) for everyone else. Its requests are served at most
    --nf-steer-rate a second, a second's worth at once: past them it is
    answered EBUSY, counted (registry.steer_refused). Its rules up to
    then stand."""
    m = managers(ports=["net_null0,no-rx=1"], chain="1,drop",
                 args=["--nf-steer-rate", "50"])
    hog = m.start_nf("test-hog", 1, nf_args=["--mode", "rules"])
    wait_for(lambda: counters(hog).get("refused"), scaled(30),
             "the hog refused")
    c = counters(hog)
    assert c["refused"] == errno.EBUSY, c
    assert c["rules"] >= 2 * 50  # a second's worth, both directions each
    assert fdir(m)["flows"] == c["rules"]
    assert registry(m)["steer_refused"] == 1
    assert m.shutdown() == 0


def test_a_group_nf_cannot_drain_its_groups_pool_nor_keep_it(managers):
    """The same within a trust group: the group's pool is shared by its
    NFs, and an NF of it takes a quarter at most (its pool's size / 4)
    and gives back at its death what it kept (the tags are in the group's
    file, mgr/nf/pool_acct.h)."""
    m = managers(ports=["net_null0,no-rx=1"], chain="1,drop",
                 args=["--trust-group", "a:2047"])

    def in_use():
        return next(g for g in m.call("group.list")["groups"]
                    if g["name"] == "a")["pool"]["in_use"]
    hog = m.start_nf("test-hog", 1, "hog", lib_args=["--trust-group", "a"],
                     nf_args=["--mode", "alloc", "--free", "10"])
    wait_for(lambda: counters(hog).get("allocated"), scaled(30),
             "the hog refused")
    assert counters(hog) == {"allocated": 511, "refusals": 2}
    assert hog.stats()["pool_held"] == 511 and in_use() == 511
    os.kill(hog.proc.pid, signal.SIGKILL)
    wait_for(lambda: in_use() == 0, scaled(20), "the hog's buffers back")
    assert registry(m)["allocs_returned"] == 511
    assert m.pool()["in_use"] == 0  # the shared pool untouched
    assert m.shutdown() == 0

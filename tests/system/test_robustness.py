"""Robustness: every frame of tcpdump 4.99.3's test captures (many
malformed on purpose) through a chain of the three NFs of issue 4, dpi ->
flowmon -> router: no crash, no buffer leaked, every frame accounted for
(routed or dropped under a reason), every frame the classifiers could not
use counted under a reason. Once with all frames taken as Ethernet (most
are not: a fuzz corpus), then per link type the classifiers parse. And
an NF that writes random metadata on every packet."""

from __future__ import annotations

from collections import defaultdict

import pytest

from harness import CORPORA, wait_for
from pcaputil import linktype, read_frames, write_pcap

TCPDUMP = CORPORA / "tcpdump-4.99.3" / "tests"
CAPS = sorted(TCPDUMP.glob("*.pcap*")) if TCPDUMP.exists() else []
DPI_REASONS = ("not_ip", "fragment", "truncated", "short", "bad_l2")


@pytest.fixture(scope="module")
def by_linktype():
    groups = defaultdict(list)
    for cap in CAPS:
        groups[linktype(cap)] += read_frames(cap)
    return groups


def run_chain(managers, tmp_path, frames, dlt):
    src = tmp_path / f"in{dlt}.pcap"
    # a millisecond apart
    write_pcap(src, ((1_600_000_000_000_000 + i * 1000, fr)
                     for i, fr in enumerate(frames)), dlt)
    routes = tmp_path / "routes.txt"
    routes.write_text("0.0.0.0/0 1\n::/0 1\n")
    m = managers(ports=[f"net_pcap0,rx_pcap={src}", "net_null0,no-rx=1"],
                 chain="1,2,4,3", rx_paused=True,
                 args=["--rx-timestamp", "--pool-size", "32767"])
    base = m.pool()["in_use"]
    common = ["--dlt", str(dlt), "--capture-time"]
    nfs = [m.start_nf("dpi", 1, nf_args=["--report",
                                         str(tmp_path / "dpi.out")] + common),
           m.start_nf("flowmon", 2, nf_args=["--json",
                                             str(tmp_path / "f.json")] + common),
           m.start_nf("router", 3, nf_args=["--routes", str(routes)]),
           # and the tunnel decoders of flowmon --decap on the same frames
           m.start_nf("flowmon", 4, nf_args=["--decap", "--json", str(
               tmp_path / "fd.json")] + common)]
    m.call("rx.set", enabled=True)
    n = len(frames)
    wait_for(lambda: m.call("port.list")["ports"][0]["rx"] == n, 60,
             f"{n} frames in")
    st = m.wait_idle(baseline=base)
    wait_for(lambda: m.call("nf.list")["nfs"][2]["counters"] and
             sum(m.call("nf.list")["nfs"][2]["counters"][k] for k in (
                 "routed", "no_route", "ttl_expired", "not_ip", "bad_ip",
                 "no_port")) == n, 10, "router counters")
    counters = [m.nf_by_pid(nf.proc.pid)["counters"] for nf in nfs]
    for nf in nfs:
        assert nf.proc.alive(), nf.proc.output()
    assert m.shutdown() == 0
    for nf in nfs:
        assert nf.proc.wait(10) == 0, nf.proc.output()
    return st, counters, base


@pytest.mark.skipif(not CAPS, reason="../shared/corpora not present")
@pytest.mark.parametrize("dlt", ["all-as-ethernet", 1, 113, 0, 9, 104, 127])
def test_tcpdump_corpus_through_all_three_nfs(managers, tmp_path,
                                              by_linktype, dlt):
    if dlt == "all-as-ethernet":
        frames, dlt = [f for g in by_linktype.values() for f in g], 1
    else:
        frames = by_linktype[dlt]
    assert frames
    st, (dpi, fm, rt, fmd), base = run_chain(managers, tmp_path, frames,
                                             dlt)
    n = len(frames)
    # Nothing lost, nothing leaked: in == out + dropped, all by reason.
    assert st["status"]["pool"]["in_use"] == base
    rx = st["ports"][0]["rx"]
    assert rx == n
    assert st["ports"][1]["tx"] == rt["routed"]
    assert sum(st["drops"].values()) == n - rt["routed"]
    assert st["drops"]["nf"] == n - rt["routed"]
    # Each classifier saw every frame; those it could not use, by reason.
    assert dpi["packets"] == n and fm["packets"] == n
    assert fmd["packets"] == n
    if dlt == 1:  # tcpdump's captures of tunnels: the decoders ran
        assert fmd["decapsulated"] > 0, fmd
    if dlt == 127:  # 802.11 behind radiotap: only --decap parses it
        assert fm["flows"] == 0 and fm["not_flow"] == n, fm
    assert sum(dpi[r] for r in DPI_REASONS) == fm["not_flow"]
    assert dpi["flows"] == fm["flows"]


def test_nf_writing_random_metadata(managers, tmp_path):
    """A buggy NF (tests/unit/nf_chaos.c) overwrites every packet's whole
    metadata with random bytes: unknown actions, chains, positions, hop
    counts, services, ports. The manager routes what still makes sense
    (to services with and without instances, back to the chaos NF, out of
    either port) and drops the rest under named reasons: every packet in
    is accounted for (out of a port or dropped), nothing leaks, nothing
    crashes. The NF also steers flows with random steps (bad step types,
    services, ports, counts, flags, IP versions), some of which the manager
    installs: later packets of those flows take them."""
    from scapy.all import IP, UDP, Ether, wrpcap
    n = 20000
    src = tmp_path / "in.pcap"
    wrpcap(str(src), [Ether(src="02:00:00:00:00:02",
                            dst="02:00:00:00:00:01") /
                      IP(src=f"10.0.0.{i % 200}", dst="10.1.0.1") /
                      UDP(sport=1000 + i % 200, dport=53)   # 200 flows
                      for i in range(n)])
    m = managers(ports=[f"net_pcap0,rx_pcap={src},tx_pcap=/dev/null",
                        "net_null0,no-rx=1"],
                 chain="1,2,port:1", rx_paused=True)
    chaos = [m.start_nf("test-chaos", 1, f"c{i}",
                        nf_args=["--seed", str(i), "--steer", "50"])
             for i in range(2)]
    fwd = m.start_nf("forward", 2)   # service 3 has no instance
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["rx"] == n, 60,
             f"{n} frames in")
    st = m.wait_idle()
    out = sum(p["tx"] for p in st["ports"])
    drops = st["drops"]
    assert out + sum(drops.values()) == n, (out, drops)
    # The manager's own reasons for what it could not route, each seen.
    # (Not hop_limit: the random hop counts the NF writes are not read,
    # the workers count the hops themselves: test_resource_attacks.py.)
    for reason in ("nf", "chain_end", "bad_action", "no_instance",
                   "chain"):     # chain: a steered "drop"
        assert drops[reason] > 0, drops
    assert st["fdir"]["exact_hits"] > 0, st["fdir"]
    assert out > 0 and st["status"]["pool"]["in_use"] == 0
    # Random steering: installed or refused with an errno, never more.
    for nf in chaos:
        c = m.nf_by_pid(nf.proc.pid)["counters"]
        assert c["steer_ok"] > 0 and c["steer_refused"] > 0, c
        assert c["steer_bad"] == 0, c
    assert m.call("flow.list", limit=0)["count"] == \
        m.call("stats")["fdir"]["flows"] > 0
    for nf in chaos + [fwd]:
        assert nf.proc.alive(), nf.proc.output()
    assert m.shutdown() == 0

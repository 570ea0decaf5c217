"""Replicas of a service share the traffic by flow: on real traces, with no
NIC RSS, each of 4 replicas gets within 15% of the mean number of flows,
and every packet of a flow, both directions, goes to one replica."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from harness import CORPORA, REPO, wait_for
from pcaputil import DLT_EN10MB, linktype, read_frames, write_pcap

KEY = re.compile(r"^(\S+) (\[?[^\]\s]+\]?):(\d+) -> (\[?[^\]\s]+\]?):(\d+)"
                 r"(?: vlan (\d+))?\t(\d+)\t(\d+)$")


def merged_ndpi_corpus(dst: Path) -> int:
    """All Ethernet pcaps of the nDPI corpus in one pcap."""
    frames = []
    for f in sorted((CORPORA / "ndpi-4.2/pcap").glob("*.pcap")):
        try:
            if linktype(f) == DLT_EN10MB:
                frames += read_frames(f)
        except Exception:  # noqa: BLE001 - a file scapy cannot read
            continue
    return write_pcap(dst, frames)


def read_flows(path: Path) -> dict:
    """{connection: packets} from a monitor --flows file; a connection is
    direction-free (endpoints sorted)."""
    flows = {}
    for line in path.read_text().splitlines():
        m = KEY.match(line)
        assert m, line
        proto, a, pa, b, pb, vlan, n0, n1 = m.groups()
        ends = tuple(sorted([(a, int(pa)), (b, int(pb))]))
        flows[(proto, ends, vlan)] = int(n0) + int(n1)
    return flows


@pytest.mark.parametrize("lb", ["hash", "least_loaded"])
def test_four_replicas_share_flows(managers, tmp_path, lb):
    if not (CORPORA / "ndpi-4.2/pcap").exists():
        pytest.skip("corpus not present")
    pcap = tmp_path / "ndpi.pcap"
    n = merged_ndpi_corpus(pcap)
    m = managers(ports=[f"net_pcap0,rx_pcap={pcap},tx_pcap=/dev/null"],
                 chain="1,port:0", rx_paused=True)
    files = [tmp_path / f"flows{i}.txt" for i in range(4)]
    for i, f in enumerate(files):
        m.start_nf("monitor", 1, f"rep{i}", nf_args=["--flows", str(f)])
    m.call("service.set", service=1, lb=lb)
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["tx"] >= n, 120,
             "all forwarded")
    assert m.shutdown() == 0
    per_replica = [read_flows(f) for f in files]
    where = defaultdict(list)
    for i, flows in enumerate(per_replica):
        for k in flows:
            where[k].append(i)
    # Every connection, both directions, at exactly one replica.
    split = {k: v for k, v in where.items() if len(v) > 1}
    assert not split, f"{len(split)} connections seen at several replicas"
    counts = [len(f) for f in per_replica]
    mean = sum(counts) / 4
    assert sum(counts) > 1500
    if lb != "hash":  # least_loaded balances load, not flow counts
        assert min(counts) > 0, counts
        return
    for c in counts:
        assert abs(c - mean) <= 0.15 * mean, counts


RSS_PCAPS = ["dnscrypt-v1-and-resolver-pings.pcap", "whatsapp_login_call.pcap",
             "iphone.pcap"]


@pytest.mark.parametrize("name", RSS_PCAPS)
def test_dpi_replicas_owning_rss_queues_match_ndpireader(managers, tmp_path,
                                                         name):
    """Two dpi replicas, each owning one RX queue of a port that holds a
    capture as a NIC with RSS would (mgr/port/port_ring.c: the frames in
    the queues by the symmetric Toeplitz hash of their addresses; the
    manager's workers on nobody's way): the two reports together are
    ndpiReader's, flow for flow; each flow, both directions, was seen by
    one replica; each took its own queue's frames; every buffer came
    back."""
    from test_dpi import NDPI, differences, flows
    pcap = NDPI / "pcap" / name
    if not pcap.exists():
        pytest.skip("corpus not present")
    n = len(read_frames(pcap))
    m = managers(ports=[f"net_ring0,zn_ring_size=4096,zn_load={pcap}",
                        "net_null0,no-rx=1"],
                 chain="1,port:1", rx_paused=True,
                 args=["--rx-timestamp", "--nf-rx-queues", "2"])
    assert m.pool()["in_use"] >= n  # the capture, in the port's queues
    reports = [tmp_path / f"r{i}.out" for i in range(2)]
    reps = [m.start_nf("dpi", 1, f"r{i}", nf_args=[
        "--report", str(r), "--proto-dir", str(REPO / "nfs/dpi/ndpi-4.2"),
        "--idle-s", "0", "--capture-time", "--dlt", "1"])
        for i, r in enumerate(reports)]
    wait_for(lambda: [o.get("name") for o in m.call("port.list")["ports"][0]
                      ["nf_rx"]["owners"]] == ["r0", "r1"], 30,
             "each replica owning a queue")
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] == n, 60,
             "the capture through the replicas")
    st = m.wait_idle()
    nf_rx = st["ports"][0]["nf_rx"]
    took = {o["name"]: o["rx"] for o in nf_rx["owners"]}
    by = {x["name"]: x for x in st["nfs"]}
    assert nf_rx["rx"] == n and sum(took.values()) == n
    for r in ("r0", "r1"):
        assert by[r]["rx"] == took[r] > 0  # its own queue's, and only
        assert by[r]["handoff"]["port_tx"] == took[r]
    assert sum(st["drops"].values()) == 0
    assert m.pool()["in_use"] == 0
    for rep in reps:
        m.call("nf.stop", instance=rep.instance)
        assert rep.proc.wait(30) == 0
    seen = [flows(r) for r in reports]
    assert not set(seen[0]) & set(seen[1])  # each flow in one replica
    merged = tmp_path / "merged.out"
    merged.write_text("".join(r.read_text() for r in reports))
    assert differences(NDPI / "result" / f"{name}.out", merged) == []

"""Replicas of a service share the traffic by flow: on real traces, with no
NIC RSS, each of 4 replicas gets within 15% of the mean number of flows,
and every packet of a flow, both directions, goes to one replica."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from harness import CORPORA, wait_for
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

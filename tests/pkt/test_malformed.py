"""Bad packets of every kind: every frame of tcpdump's test suite (many
deliberately malformed: truncated headers, bad lengths, fuzzed fields, any
link type) replayed in one pcap through a monitor and a forward NF. No
crash, and the output holds exactly the input frames, in order."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.utils import RawPcapNgReader, RawPcapReader

from harness import CORPORA, wait_for
from pcaputil import read_frames, write_pcap

MAX_FRAME = 9000  # the manager's pool buffers chain up to this via net_pcap


def merged_corpus(dst: Path) -> int:
    src = CORPORA / "tcpdump-4.99.3/tests"
    frames = []
    for f in sorted(src.glob("*.pcap*")):
        for reader in (RawPcapReader, RawPcapNgReader):
            try:
                with reader(str(f)) as r:
                    frames += [bytes(d) for d, _ in r
                               if 0 < len(d) <= MAX_FRAME]
                break
            except Exception:  # noqa: BLE001 - a broken file, not a frame
                continue
    return write_pcap(dst, ((i * 1_000_000, d) for i, d in enumerate(frames)))


def test_tcpdump_corpus(managers, tmp_path):
    if not (CORPORA / "tcpdump-4.99.3/tests").exists():
        pytest.skip("corpus not present")
    pcap, out = tmp_path / "in.pcap", tmp_path / "out.pcap"
    n = merged_corpus(pcap)
    assert n > 9000
    m = managers(ports=[f"net_pcap0,rx_pcap={pcap},tx_pcap={out}"],
                 chain="1,2,port:0", rx_paused=True)
    m.start_nf("monitor", 1)
    m.start_nf("forward", 2)
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["tx"] >= n, 120,
             "corpus forwarded")
    st = m.wait_idle()
    mon = [x for x in st["nfs"] if x["service"] == 1][0]["counters"]
    assert m.shutdown() == 0
    assert read_frames(out) == read_frames(pcap)
    assert mon["packets"] == n and mon["runt"] > 0
    assert sum(st["drops"].values()) == 0

"""Packet tests: a real pcap in through a net_pcap port, through a chain of
1, 3 and 8 forward NFs, out through the same port's tx_pcap; the output must
hold exactly the input packets, in order within each flow."""

from __future__ import annotations

import pytest

from harness import CORPORA, DATA, wait_for
from pcaputil import DLT_EN10MB, assert_same_per_flow, linktype, read_frames

PCAPS = [
    "ndpi-4.2/pcap/skype-conference-call.pcap",  # UDP media, 200 pkts
    "ndpi-4.2/pcap/6in4tunnel.pcap",             # IPv6 in IPv4
    "ndpi-4.2/pcap/whatsappfiles.pcap",          # TCP bulk, 1500 B frames
    "ndpi-4.2/pcap/bittorrent.pcap",             # many flows
    "zeek/Traces/q-in-q.pcap",                   # stacked VLANs
    "zeek/Traces/wikipedia.pcap",                # HTTP, DNS, mixed
]


def run_chain(managers, tmp_path, pcap, chain, nfs):
    """Replay pcap through `chain` with NFs {service: kind}; return the
    input frames, the output frames and the stats once idle."""
    out = tmp_path / "out.pcap"
    m = managers(ports=[f"net_pcap0,rx_pcap={pcap},tx_pcap={out}"],
                 chain=chain, rx_paused=True)
    for svc, kind in nfs.items():
        m.start_nf(kind, svc)
    frames = read_frames(pcap)
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["tx"] >= len(frames),
             60, "all packets out")
    st = m.wait_idle()
    assert m.shutdown() == 0
    return frames, read_frames(out), st


# Bundled in the repo (data/pcap/README.md): these run even without
# ../shared/corpora.
BUNDLED = ["skype-conference-call.pcap", "wikipedia.pcap"]


@pytest.mark.parametrize("n_nfs", [1, 3, 8])
@pytest.mark.parametrize("pcap", PCAPS + [f"bundled/{b}" for b in BUNDLED])
def test_chain_replay(managers, tmp_path, pcap, n_nfs):
    if pcap.startswith("bundled/"):
        path = DATA / "pcap" / pcap.split("/", 1)[1]
    else:
        path = CORPORA / pcap
    if not path.exists():
        pytest.skip(f"{path} not present")
    assert linktype(path) == DLT_EN10MB
    chain = ",".join(str(s) for s in range(1, n_nfs + 1)) + ",port:0"
    frames, out, st = run_chain(managers, tmp_path, path, chain,
                                {s: "forward" for s in range(1, n_nfs + 1)})
    assert_same_per_flow(frames, out)
    # Every NF saw every packet, and nothing was dropped anywhere.
    for nf in st["nfs"]:
        assert nf["rx"] == len(frames) and nf["tx"] == len(frames)
    assert sum(st["drops"].values()) == 0


def test_sixteen_hop_chain(managers, tmp_path):
    """A 16-hop default chain: two NFs visited alternately, eight times
    each; the chain position travels with the packet."""
    frames, out, st = run_chain(managers, tmp_path,
                                DATA / "pcap/wikipedia.pcap",
                                ",".join(["1", "2"] * 8) + ",port:0",
                                {1: "forward", 2: "monitor"})
    assert out == frames
    for nf in st["nfs"]:
        assert nf["rx"] == 8 * len(frames)
    assert sum(st["drops"].values()) == 0

"""The dpi NF against ground truth: every nDPI 4.2 test capture replayed
through a manager (net_pcap, capture timestamps) into the NF gives, flow
for flow, the protocol and per-direction packet and byte counts of
ndpiReader 4.2's output in ../shared/corpora/ndpi-4.2/result (byte-
identical to Debian's ndpiReader, the WebattackRCE risk aside, which is
not compared). The same classifier on libpcap (zeronf-dpi-pcap) is held
to the same truth."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness import BUILD, CORPORA, REPO

sys.path.insert(0, str(REPO / "scripts"))
from dpi_report import dpi_report  # noqa: E402

NDPI = CORPORA / "ndpi-4.2"
PCAPS = sorted((NDPI / "pcap").glob("*")) if NDPI.exists() else []

# A flow line of ndpiReader -w: id, L4, src, dir, dst, [VLAN], [proto],
# ..., [c2s pkts/bytes <-> s2c pkts/bytes].
FLOW = re.compile(r"^\t(\d+)\t(\S+) (.+?) (<->|->) (.+?) "
                  r"(?:\[VLAN: (\d+)\])?\s*\[proto: ([^/\]]+)/([^\]]+)\]"
                  r".*?\[(\d+) pkts/(\d+) bytes (?:<->|->) "
                  r"(\d+) pkts/(\d+) bytes\]")


def flows(path: Path) -> dict:
    out = {}
    for line in path.read_bytes().decode("utf-8", "replace").splitlines():
        m = FLOW.match(line)
        if m:
            _, l4, src, d, dst, vlan, ids, name, cp, cb, sp, sb = m.groups()
            out[(l4, src, dst, vlan or "-")] = (
                d, ids, name, int(cp), int(cb), int(sp), int(sb))
    return out


def differences(expected: Path, actual: Path) -> list:
    e, a = flows(expected), flows(actual)
    diff = [("missing", k, e[k]) for k in e if k not in a]
    diff += [("extra", k, a[k]) for k in a if k not in e]
    diff += [("differs", k, e[k], a[k]) for k in e if k in a and e[k] != a[k]]
    return diff


@pytest.mark.skipif(not PCAPS, reason="../shared/corpora not present")
@pytest.mark.parametrize("pcap", PCAPS, ids=[p.name for p in PCAPS])
def test_dpi_nf_matches_ndpireader(pcap, tmp_path):
    out = tmp_path / "flows.out"
    counters = dpi_report(pcap, out, tmp_path, NDPI / "example")
    assert counters["packets"] > 0
    assert differences(NDPI / "result" / f"{pcap.name}.out", out) == []


@pytest.mark.skipif(not PCAPS, reason="../shared/corpora not present")
def test_dpi_libpcap_mode_matches_ndpireader(tmp_path):
    bad, total = {}, 0
    for pcap in PCAPS:
        total += len(flows(NDPI / "result" / f"{pcap.name}.out"))
        out = tmp_path / f"{pcap.name}.out"
        subprocess.run([BUILD / "nfs/zeronf-dpi-pcap", "-i", pcap, "-w", out,
                        "-d", NDPI / "example", "-t"], check=True,
                       capture_output=True, timeout=60)
        d = differences(NDPI / "result" / f"{pcap.name}.out", out)
        if d:
            bad[pcap.name] = d[:3]
    assert bad == {}
    # The parser saw every flow of the truth (the corpus lists 2388).
    rows = (NDPI / "expected_flows.tsv").read_text().splitlines()
    assert total == len(rows) - 1


@pytest.mark.skipif(not PCAPS, reason="../shared/corpora not present")
def test_steering_by_application(managers, tmp_path):
    """--steer SSH=port:2: once the NF has classified the SSH connection
    (its 10th packet, as ndpiReader), the flow director sends the rest of
    it, both directions, straight out of port 2: the NF sees no more of it.
    Frames are injected one at a time through a net_tap port."""
    import socket
    import time

    from harness import wait_for
    from pcaputil import read_frames

    frames = read_frames(NDPI / "pcap" / "ssh.pcap")[:40]
    outs = [tmp_path / "default.pcap", tmp_path / "steered.pcap"]
    tap = f"znd{tmp_path.name[-6:]}".replace("_", "")[:14]
    m = managers(ports=[f"net_tap0,iface={tap}",
                        f"net_pcap1,tx_pcap={outs[0]}",
                        f"net_pcap2,tx_pcap={outs[1]}"],
                 chain="1,port:1")
    m.start_nf("dpi", 1, nf_args=["--proto-dir", str(NDPI / "example"),
                                  "--steer", "SSH=port:2"])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((tap, 0))
    for f in frames:
        s.send(f)
        time.sleep(0.005)
    s.close()
    wait_for(lambda: m.call("nf.list")["nfs"][0]["counters"]["steered"]
             == 1, 10, "the SSH connection steered")
    time.sleep(0.3)
    c = m.call("nf.list")["nfs"][0]["counters"]
    assert m.shutdown() == 0
    default = read_frames(outs[0])
    steered = read_frames(outs[1])
    assert [f for f in default if f in frames] == frames[:10]
    assert steered == frames[10:]
    assert c["steer_failed"] == 0

"""The dpi NF against ground truth: every nDPI 4.2 test capture replayed
through a manager (net_pcap, capture timestamps) into the NF gives, flow
for flow, the protocol and per-direction packet and byte counts of
ndpiReader 4.2's output in ../shared/corpora/ndpi-4.2/result (byte-
identical to Debian's ndpiReader, the WebattackRCE risk aside, which is
not compared). The same classifier on libpcap (zeronf-dpi-pcap) is held
to the same truth."""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import struct
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


L4 = {6: "TCP", 17: "UDP", 1: "ICMP", 58: "ICMPV6", 112: "VRRP", 2: "IGMP"}


def endpoint(text: str) -> tuple:
    """'1.2.3.4:80' or '[2001:db8::1]:80' -> (address, port), canonical."""
    addr, port = text.rsplit(":", 1)
    return str(ipaddress.ip_address(addr.strip("[]"))), int(port)


def flowmon_flows(records: list[dict]) -> dict:
    """flowmon records keyed and valued as flows() does for ndpiReader."""
    out = {}
    for r in records:
        key = (L4.get(r["proto"], str(r["proto"])),
               endpoint(f"[{r['src']}]:{r['sport']}"),
               endpoint(f"[{r['dst']}]:{r['dport']}"),
               str(r["vlan"]) if r["vlan"] else "-")
        out[key] = (r["pkts"][0], r["bytes"][0], r["pkts"][1], r["bytes"][1])
    return out


def truth_counts(expected: Path) -> dict:
    return {(k[0], endpoint(k[1]), endpoint(k[2]), k[3]): v[3:]
            for k, v in flows(expected).items()}


def ipfix_records(msgs: list[bytes]) -> list[dict]:
    """Decode IPFIX (RFC 7011) messages: templates, then data records, as
    flowmon's JSON records (RFC 5103 reverse elements: PEN 29305)."""
    tmpl, recs = {}, []
    for msg in msgs:
        ver, length = struct.unpack_from("!HH", msg)
        assert ver == 10 and length == len(msg)
        off = 16
        while off < length:
            sid, slen = struct.unpack_from("!HH", msg, off)
            body, end = off + 4, off + slen
            if sid == 2:
                while body < end:
                    tid, n = struct.unpack_from("!HH", msg, body)
                    body += 4
                    fields = []
                    for _ in range(n):
                        ie, flen = struct.unpack_from("!HH", msg, body)
                        body += 4
                        rev = bool(ie & 0x8000)
                        if rev:
                            assert struct.unpack_from("!I", msg, body)[0] \
                                == 29305
                            body += 4
                        fields.append((ie & 0x7FFF, flen, rev))
                    tmpl[tid] = fields
            elif sid >= 256:
                fields = tmpl[sid]
                size = sum(f[1] for f in fields)
                while body + size <= end:
                    v = {}
                    for ie, flen, rev in fields:
                        raw = msg[body:body + flen]
                        body += flen
                        v[(ie, rev)] = raw if ie in (8, 12, 27, 28) else \
                            int.from_bytes(raw, "big")
                    src, dst = (v[(8, False)], v[(12, False)]) \
                        if (8, False) in v else (v[(27, False)], v[(28, False)])
                    recs.append({
                        "src": str(ipaddress.ip_address(src)),
                        "dst": str(ipaddress.ip_address(dst)),
                        "sport": v[(7, False)], "dport": v[(11, False)],
                        "proto": v[(4, False)], "vlan": v[(58, False)],
                        "first_ms": v[(152, False)], "last_ms": v[(153, False)],
                        "pkts": [v[(2, False)], v[(2, True)]],
                        "bytes": [v[(1, False)], v[(1, True)]],
                        "tcp_flags": [v[(6, False)], v[(6, True)]],
                        "end": {1: "idle", 3: "closed", 4: "active"}[
                            v[(136, False)]]})
            off = end
    return recs


@pytest.mark.skipif(not PCAPS, reason="../shared/corpora not present")
@pytest.mark.parametrize("pcap", PCAPS, ids=[p.name for p in PCAPS])
def test_dpi_and_flowmon_match_ndpireader(pcap, tmp_path):
    """The dpi NF's report, and the flow records of flowmon behind it in
    the chain (as JSON lines and as IPFIX to a UDP collector), against
    ndpiReader's output."""
    out, js = tmp_path / "flows.out", tmp_path / "flows.json"
    coll = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    coll.bind(("127.0.0.1", 0))
    coll.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    port = coll.getsockname()[1]
    c = dpi_report(pcap, out, tmp_path, NDPI / "example", more=[
        ("flowmon", ["--json", str(js), "--ipfix", f"127.0.0.1:{port}",
                     "--idle-s", "0"])])
    truth = NDPI / "result" / f"{pcap.name}.out"
    assert differences(truth, out) == []
    records = [json.loads(ln) for ln in js.read_text().splitlines()]
    assert flowmon_flows(records) == truth_counts(truth)
    assert c[1]["flows"] == len(records)  # one record per flow, at exit
    msgs = []
    coll.setblocking(False)
    while True:
        try:
            msgs.append(coll.recv(65536))
        except BlockingIOError:
            break
    coll.close()
    ipfix = ipfix_records(msgs)
    norm = [{**r, "src": str(ipaddress.ip_address(r["src"])),
             "dst": str(ipaddress.ip_address(r["dst"])),
             "end": "closed" if r["end"] in ("fin", "rst") else r["end"]}
            for r in records]
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert sorted(map(key, ipfix)) == sorted(map(key, norm))


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
    import time

    from harness import tap_in_two_out, wait_for
    from pcaputil import read_frames

    frames = read_frames(NDPI / "pcap" / "ssh.pcap")[:40]
    m, s, outs = tap_in_two_out(managers, tmp_path, "d", "1,port:1")
    m.start_nf("dpi", 1, nf_args=["--proto-dir", str(NDPI / "example"),
                                  "--steer", "SSH=port:2"])
    # the first 10 (the NF classifies the connection at the 10th and has
    # the flow director steer it, which it says once done), then the rest:
    # when the rule is in place is the mechanism's, not this machine's
    # speed (a busy machine once took longer than 5 ms a frame)
    for f in frames[:10]:
        s.send(f)
        time.sleep(0.005)
    wait_for(lambda: m.call("nf.list")["nfs"][0]["counters"]["steered"]
             == 1, 10, "the SSH connection steered")
    for f in frames[10:]:
        s.send(f)
        time.sleep(0.005)
    s.close()
    wait_for(lambda: m.call("port.list")["ports"][2]["tx"] >= 30, 10,
             "the rest out of port 2")
    time.sleep(0.3)
    c = m.call("nf.list")["nfs"][0]["counters"]
    assert m.shutdown() == 0
    default = read_frames(outs[0])
    steered = read_frames(outs[1])
    assert [f for f in default if f in frames] == frames[:10]
    assert steered == frames[10:]
    assert c["steer_failed"] == 0

"""flowmon against Zeek: for every Zeek trace whose conn.log baseline is
full (../shared/corpora/zeek), each connection's packets per direction (orig_pkts, resp_pkts) equal flowmon's record of it.

flowmon keeps ndpiReader's flow semantics (README there), and runs here
with --decap: tunnels (VXLAN, Geneve, GRE, ERSPAN, GTP-U, Teredo, AYIYA)
are looked into as Zeek does, the UDP tunnel a flow and the packet inside
one of its own. The comparison applies the deliberate differences, and
nothing else:
- one record per 5-tuple: Zeek's connections of the same 5-tuple (reuse
  after a close, a new one after a timeout) are summed;
- ICMP and other protocols without ports: Zeek keys ICMP by type and
  code, flowmon by the address pair, so Zeek's connections of an address
  pair are summed;
- the baselines in EXCLUDED depend on what flowmon deliberately does not
  do (each says what), and are skipped with that reason."""

from __future__ import annotations

import ipaddress
import json
import sys

import pytest

from harness import CORPORA, REPO

sys.path.insert(0, str(REPO / "scripts"))
from dpi_report import replay  # noqa: E402

ZEEK = CORPORA / "zeek"

EXCLUDED = {
    "core.vntag-in-vlan": "the capture cuts its one packet (snap length): "
        "Zeek logs a connection of no packets, flowmon (as ndpiReader) no "
        "flow",
    "core.tunnels.geneve-vxlan-truncated":
        "the capture cuts the datagrams (snap length 176); flowmon, as "
        "ndpiReader, counts no flow for a cut datagram",
    "core.tunnels.vxlan-unknown-internal-packet":
        "Zeek counts no packet for a VXLAN connection whose inner packet "
        "it cannot parse (IGMP); flowmon counts the outer packets",
    "core.pcap.dynamic-filter": "the test script installs a packet filter",
    "scripts.base.frameworks.netcontrol.packetfilter":
        "the test script drops packets",
    "scripts.base.protocols.ftp.gridftp":
        "the script stops processing the data connection",
    "scripts.base.protocols.ntp.misordered-ntp":
        "Zeek flips the connection on misordered packets",
}


def baselines() -> list[tuple[str, str]]:
    if not (ZEEK / "INDEX.tsv").exists():
        return []
    rows = [ln.split("\t") for ln in
            (ZEEK / "INDEX.tsv").read_text().splitlines()[1:]]
    return [(r[0], r[2]) for r in rows if r[4] == "full"]


def conn_log(path) -> list[dict]:
    fields, out = None, []
    for line in path.read_text().splitlines():
        if line.startswith("#fields"):
            fields = line.split("\t")[1:]
        elif not line.startswith("#"):
            out.append(dict(zip(fields, line.split("\t"))))
    return out


def ep(addr: str, port) -> tuple:
    return str(ipaddress.ip_address(addr)), int(port)


_records: dict = {}


def flowmon_records(trace, tmp_path) -> list[dict]:
    """flowmon's records for a trace (each trace replayed once)."""
    if trace not in _records:
        js = tmp_path / "flows.json"
        # --decap: tunnels looked into as Zeek does (the tunnel's UDP
        # flow and the inner one), not as ndpiReader.
        replay(ZEEK / "Traces" / trace, tmp_path,
               [("flowmon", ["--json", str(js), "--idle-s", "0",
                             "--decap"])])
        _records[trace] = [json.loads(x) for x in js.read_text().splitlines()]
    return _records[trace]


@pytest.mark.skipif(not baselines(), reason="../shared/corpora not present")
@pytest.mark.parametrize("base,trace", baselines(),
                         ids=[b for b, _ in baselines()])
def test_flowmon_matches_zeek_conn_log(base, trace, tmp_path):
    if base in EXCLUDED:
        pytest.skip(EXCLUDED[base])
    log = conn_log(ZEEK / "Baseline" / base / "conn.log")
    if not log or "orig_pkts" not in log[0] or "id.orig_h" not in log[0]:
        pytest.skip("this baseline renames or drops conn.log's columns")
    # Zeek: per 5-tuple, packets from the first connection's originator
    # and from its responder, summed over its connections.
    zeek = {}
    for c in log:
        o, r = ep(c["id.orig_h"], c["id.orig_p"]), ep(c["id.resp_h"],
                                                     c["id.resp_p"])
        proto = {"tcp": 6, "udp": 17}.get(c["proto"])
        if proto is None:
            # ICMP (ports: type and code) and other protocols: flowmon
            # has one flow per address pair, with ports 0.
            v6 = ":" in o[0]
            proto = int(c.get("ip_proto", "-")) if c.get("ip_proto", "-") \
                != "-" else (58 if v6 else 1) if c["proto"] == "icmp" else None
            if proto is None:
                continue
            o, r = (o[0], 0), (r[0], 0)
        z = zeek.setdefault((proto, frozenset([o, r])), [o, 0, 0])
        a, b = int(c["orig_pkts"]), int(c["resp_pkts"])
        z[1:] = [z[1] + a, z[2] + b] if o == z[0] else [z[1] + b, z[2] + a]
    ours = {}
    for x in flowmon_records(trace, tmp_path):
        s, d = ep(x["src"], x["sport"]), ep(x["dst"], x["dport"])
        ours[(x["proto"], frozenset([s, d]))] = (s, x["pkts"])
    diffs = []
    for key, (orig, op, rp) in zeek.items():
        if key not in ours:
            diffs.append(("missing", sorted(key[1]), op, rp))
            continue
        src, pk = ours[key]
        mine = tuple(pk) if src == orig else (pk[1], pk[0])
        if mine != (op, rp):
            diffs.append(("differs", orig, (op, rp), mine))
    assert zeek or not log, "no connection compared"
    assert diffs == [], diffs


def test_decap_counts_whole_datagrams(tmp_path):
    """flowmon --decap counts a fragmented IPv4 datagram once, when its
    fragments are all in (Zeek's count): in order, first fragment last,
    with a duplicate fragment; never one missing a fragment; and 70
    incomplete datagrams overflow its 64-datagram table (the oldest go,
    counted as fragments_lost). Without --decap every first fragment
    counts (ndpiReader's rule)."""
    from scapy.all import IP, UDP, Ether, Raw, fragment, wrpcap
    eth = dict(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")

    def frags(sport, ident):
        d = IP(src="10.0.0.1", dst="10.0.0.2", id=ident) / \
            UDP(sport=sport, dport=9) / Raw(bytes(3000))
        return [Ether(**eth) / f for f in fragment(d, fragsize=1200)]

    pkts = []
    a = frags(1001, 1)                        # in order
    b = frags(1002, 2)                        # first fragment last
    c = frags(1003, 3)                        # a duplicate in the middle
    d = frags(1004, 4)                        # the last one never comes
    assert len(a) == 3
    pkts += a + b[1:] + b[:1] + c[:2] + c[1:2] + c[2:] + d[:2]
    for k in range(70):                       # only first fragments
        pkts += frags(2000 + k, 100 + k)[:1]
    pkts += frags(1005, 5)                    # complete, after all that
    pcap = tmp_path / "frags.pcap"
    wrpcap(str(pcap), pkts)

    def run(args):
        js = tmp_path / "f.json"
        counters = replay(pcap, tmp_path, [("flowmon", ["--json", str(js),
                                                        "--idle-s", "0"] +
                                            args)])[0]
        recs = {x["sport"]: x["pkts"] for x in
                (json.loads(ln) for ln in js.read_text().splitlines())}
        return recs, counters

    recs, cn = run(["--decap"])
    assert recs == {1001: [1, 0], 1002: [1, 0], 1003: [1, 0],
                    1005: [1, 0]}, recs
    assert cn["fragments_lost"] == 8, cn     # 72 held in turn, 64 slots
    recs, cn = run([])
    assert len(recs) == 75 and all(p == [1, 0] for p in recs.values())
    assert cn["fragments_lost"] == 0

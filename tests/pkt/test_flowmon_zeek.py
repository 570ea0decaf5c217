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

_NO_DECAP = "a tunnel flowmon --decap does not look into: "
EXCLUDED = {
    "core.vntag-in-vlan": "the capture cuts its one packet (snap length): "
        "Zeek logs a connection of no packets, flowmon (as ndpiReader) no "
        "flow",
    "core.tunnels.geneve-vxlan-truncated":
        "the capture cuts the datagrams (snap length 176); flowmon, as "
        "ndpiReader, counts no flow for a cut datagram",
    "core.tunnels.gre-aruba-amsdu": _NO_DECAP + "Aruba's GRE (802.11 "
        "A-MSDU frames)",
    "core.tunnels.vxlan-unknown-internal-packet":
        "Zeek counts no packet for a VXLAN connection whose inner packet "
        "it cannot parse (IGMP); flowmon counts the outer packets",
    "core.tunnels.gtp.outer_ip_frag":
        "4 fragmented datagrams miss their last fragment in the capture: "
        "Zeek, which reassembles, counts them not; flowmon counts every "
        "first fragment (ndpiReader's rule)",
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

"""The dpi and flowmon NFs over time: idle flows expire on packet time
(capture time when replaying), flowmon's end reasons (fin, rst, idle,
active), and the dpi NF's flow report on demand (SIGUSR1)."""

from __future__ import annotations

import json
import signal
import sys

from scapy.all import DNS, DNSQR, IP, TCP, UDP, Ether, wrpcap

from harness import REPO, wait_for

sys.path.insert(0, str(REPO / "scripts"))
from dpi_report import PROTO_DIR, replay  # noqa: E402

ETH = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
A, B = "10.0.0.1", "10.0.0.2"


def at(t: float, pkt):
    pkt.time = 1_700_000_000 + t
    return pkt


def tcp(t, src, dst, sp, dp, flags):
    return at(t, Ether(**ETH) / IP(src=src, dst=dst) /
              TCP(sport=sp, dport=dp, flags=flags))


def udp(t, sp, payload=b"x"):
    return at(t, Ether(**ETH) / IP(src=A, dst=B) / UDP(sport=sp, dport=9) /
              payload)


def test_flowmon_end_reasons_and_idle_expiry(tmp_path):
    pkts = [tcp(0.0, A, B, 1000, 80, "S"), tcp(0.1, B, A, 80, 1000, "SA"),
            tcp(0.2, A, B, 1000, 80, "A"), tcp(0.3, A, B, 1000, 80, "FA"),
            tcp(0.4, B, A, 80, 1000, "FA"), tcp(0.5, A, B, 1000, 80, "A"),
            tcp(0.6, A, B, 1001, 80, "S"), tcp(0.7, B, A, 80, 1001, "R"),
            udp(1.0, 2000), udp(1.5, 2000),
            udp(20.0, 2001)]             # 18.5 s later: the others idle
    src = tmp_path / "in.pcap"
    wrpcap(str(src), pkts)
    js = tmp_path / "flows.json"
    c = replay(src, tmp_path, [("flowmon", ["--json", str(js),
                                            "--idle-s", "5"])])[0]
    recs = {(r["proto"], r["sport"]): r
            for r in map(json.loads, js.read_text().splitlines())}
    assert {k: r["end"] for k, r in recs.items()} == {
        (6, 1000): "fin", (6, 1001): "rst", (17, 2000): "idle",
        (17, 2001): "active"}
    fin = recs[(6, 1000)]
    assert fin["pkts"] == [4, 2] and fin["tcp_flags"] == [0x13, 0x13]
    assert (fin["first_ms"], fin["last_ms"]) == (1_700_000_000_000,
                                                 1_700_000_000_500)
    assert recs[(6, 1001)]["tcp_flags"] == [0x02, 0x04]
    assert c["flows"] == 4


def test_dpi_idle_expiry_and_report_on_demand(managers, tmp_path):
    dns = [at(0.0, Ether(**ETH) / IP(src=A, dst=B) / UDP(sport=3333, dport=53)
              / DNS(rd=1, qd=DNSQR(qname="example.com"))),
           at(30.0, Ether(**ETH) / IP(src=A, dst=B) /
              UDP(sport=3334, dport=53) /
              DNS(rd=1, qd=DNSQR(qname="example.org")))]
    src = tmp_path / "dns.pcap"
    wrpcap(str(src), dns)
    # Replayed with capture times: the first flow is idle 30 s when the
    # second arrives, and expires (--idle-s 10); the report at exit has
    # the second only.
    out = tmp_path / "exit.out"
    c = replay(src, tmp_path, [("dpi", ["--report", str(out), "--idle-s",
                                        "10", "--proto-dir",
                                        str(PROTO_DIR)])])[0]
    text = out.read_text()
    assert "3334" in text and "3333" not in text
    # The per-protocol totals keep the flow that expired.
    assert [ln.split("\t")[::3] for ln in text.splitlines()
            if ln.startswith("DNS\t")] == [["DNS", "2"]]
    assert c["flows"] == 2 and c["expired"] == 1
    # SIGUSR1: the report is written while the NF runs.
    m = managers(ports=[f"net_pcap0,rx_pcap={src}", "net_null0,no-rx=1"],
                 chain="1,port:1", rx_paused=True)
    live = tmp_path / "live.out"
    nf = m.start_nf("dpi", 1, nf_args=["--report", str(live),
                                       "--proto-dir", str(PROTO_DIR)])
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.nf_by_pid(nf.proc.pid)["counters"]["packets"] == 2,
             10, "2 packets classified")
    assert not live.exists()
    nf.proc.signal(signal.SIGUSR1)
    wait_for(lambda: live.exists() and "3333" in live.read_text()
             and "3334" in live.read_text(), 10, "report on demand")
    assert nf.proc.alive()
    assert m.shutdown() == 0


def test_full_flow_tables_count_and_pass(tmp_path):
    """More flows than --capacity: the excess is counted (table_full), every
    packet still passes, the tracked flows are exact."""
    pkts = [udp(i * 0.001, 3000 + i % 40) for i in range(200)]
    src = tmp_path / "flows.pcap"
    wrpcap(str(src), pkts)
    js, out = tmp_path / "f.json", tmp_path / "d.out"
    dpi, fm = replay(src, tmp_path, [
        ("dpi", ["--report", str(out), "--capacity", "16", "--idle-s", "0",
                 "--proto-dir", str(PROTO_DIR)]),
        ("flowmon", ["--json", str(js), "--capacity", "16",
                     "--idle-s", "0"])])
    assert dpi["packets"] == fm["packets"] == 200
    # 40 flows of 5 packets, at most 16 (and at least 8: rte_hash
    # buckets) tracked; the packets of the others are counted.
    assert 8 <= dpi["flows"] <= 16 and dpi["table_full"] == \
        200 - 5 * dpi["flows"]
    assert fm["flows"] == dpi["flows"] and fm["table_full"] == \
        dpi["table_full"]
    recs = [json.loads(ln) for ln in js.read_text().splitlines()]
    assert len(recs) == fm["flows"] and all(r["pkts"] == [5, 0]
                                            for r in recs)

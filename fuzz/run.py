#!/usr/bin/env python3
"""make fuzz FUZZ_S=N: every libFuzzer target (fuzz/) for N seconds, on a
corpus seeded from real traffic and real input files, then a summary line
per target (JSON): executions, coverage, corpus size, crashes. Exits 1 if
any target crashed (its crash input is kept in build-fuzz/crashes/).

Seeds: frames of tcpdump's test captures (many malformed on purpose),
nDPI's and Zeek's traces (shared/corpora), each prefixed with the two
selector bytes the packet targets read (link type, flags); the first 300
lines of the RouteViews table and of its IPv6 one, and hand-written route
files; one request per control method from schema/control.json; OpenFlow
1.3 messages a controller sends (os-ken's classes: FLOW_MODs of every
match field and instruction, GROUP_MODs, PACKET_OUTs, flow statistics
requests), each
as the ofp_msgs target reads them (a type selector byte, then the body);
frames of every NSH tunnel (tests/unit/test_nsh.c's)."""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from pcaputil import linktype, read_frames  # noqa: E402

CORPORA = REPO.parent / "shared" / "corpora"
TARGETS = ["flow_parse", "dpi_parse", "flowmon", "routes", "ctl_json",
           "oft_key", "ofp_msgs", "nsh", "firewall", "ratelimit", "nat",
           "maglev"]
# the link types the packet targets index by their first byte
DPI_DLTS = [0, 1, 12, 14, 104, 113, 9, 50, 228, 229, 105, 127, 276, 999]
FLOWMON_DLTS = [1, 12, 113, 0, 228, 229, 105, 127]
MAX_SEEDS = 4000
# Seconds one input may take. A route of /1 rewrites half the IPv4 table
# (8M DIR-24-8 entries) on each add and remove: with ASan, on a loaded
# machine, an input of a few such routes took 12 s in the long run (268
# ms alone); not a hang.
TIMEOUT = {"routes": 60}


def pcaps() -> list[Path]:
    out = []
    for d, glob in (("tcpdump-4.99.3/tests", "*.pcap*"),
                    ("ndpi-4.2/pcap", "*.pcap*"), ("zeek", "**/*.pcap*"),
                    ("zeek", "**/*.trace")):
        out += sorted((CORPORA / d).glob(glob)) if (CORPORA / d).exists() \
            else []
    out.append(REPO / "data/pcap/wikipedia.pcap")
    return out


def packet_seeds(dirs: dict[str, Path]) -> None:
    n = 0
    for cap in pcaps():
        try:
            lt, frames = linktype(cap), read_frames(cap)[:8]
        except Exception:  # noqa: BLE001 - not a pcap we read: skip
            continue
        for i, fr in enumerate(frames):
            if n >= MAX_SEEDS:
                return
            name = f"{n:05d}"
            if lt == 1:
                (dirs["flow_parse"] / name).write_bytes(fr)
                (dirs["firewall"] / name).write_bytes(
                    firewall_seed(i, fr))
                # the tuple to rewrite to, then the frame
                (dirs["nat"] / name).write_bytes(
                    bytes([198, 51, 100, 1, 10, 0, 0, 9, 0x4e, 0x20,
                           0x1f, 0x90]) + fr)
                (dirs["oft_key"] / name).write_bytes(fr)
                (dirs["nsh"] / name).write_bytes(fr)
            if lt in DPI_DLTS:
                (dirs["dpi_parse"] / name).write_bytes(
                    bytes([DPI_DLTS.index(lt), 1]) + fr)
            if lt in FLOWMON_DLTS:  # one frame per input: [dlt, cut, len]
                (dirs["flowmon"] / name).write_bytes(
                    bytes([FLOWMON_DLTS.index(lt), i & 1]) +
                    min(len(fr), 65535).to_bytes(2, "big") + fr)
            n += 1


FW_RULES = [b"", b"-P DROP\n--ctstate ESTABLISHED,RELATED -j ACCEPT\n"
            b"-p tcp --syn --dport 80 -j ACCEPT\n",
            b"-p udp -s 192.168.0.0/16 --dport 1024:65535 -j DROP\n"
            b"-p icmpv6 --icmpv6-type echo-request -j ACCEPT\n"
            b"-p tcp --tcp-flags SYN,ACK,FIN,RST ACK --ctstate NEW -j DROP\n"]


def firewall_seed(i: int, frame: bytes) -> bytes:
    """The firewall target's input: rules (length first), then the frame
    with its options byte (VLAN tags looked through, checksums verified)
    and length, twice (a connection's second packet)."""
    rules = FW_RULES[i % len(FW_RULES)]
    one = bytes([3]) + min(len(frame), 65535).to_bytes(2, "big") + frame
    return len(rules).to_bytes(2, "big") + rules + one + one


def ratelimit_seeds(d: Path) -> None:
    """Configurations (the length byte: 16-byte units of text), then
    packets (class, size, time steps)."""
    confs = [
        {"classes": [{"name": "t", "match": {"src": "10.0.0.0/8",
                                             "proto": "udp",
                                             "dport": "1-1023"},
                      "rate": "10mbit", "burst": "64kb", "per": "flow",
                      "per_rate": "1mbit"}],
         "default": {"rate": "1kpps", "burst": "10p"}},
        {"classes": [{"name": "syn", "match": {"tcp_flags": "syn"},
                      "rate": "100pps"},
                     {"name": "v", "match": {"vlan": 7,
                                             "dst": "2001:db8::/32"},
                      "rate": "1gbit", "per": "src", "per_rate": "5mbit",
                      "per_burst": "3000b"}]},
    ]
    for i, c in enumerate(confs):
        text = json.dumps(c).encode()
        text += b" " * (-len(text) % 16)
        tail = bytes(range(64))
        (d / f"c{i}").write_bytes(bytes([len(text) // 16]) + text + tail)


def route_seeds(d: Path) -> None:
    (d / "a").write_text("10.0.0.0/8 1\n10.1.0.0/16 2\n0.0.0.0/0 3\n"
                         "2001:db8::/32 4\n::/0 5\n")
    (d / "b").write_text("; comment\n# comment\n\n192.0.2.0/24\t64496\n")
    for f in ("ipasn_20140513.dat.gz", "ipasn6_20151101.dat.gz"):
        p = CORPORA / "routing" / f
        if p.exists():
            with gzip.open(p, "rt") as g:
                (d / f).write_text("".join(g.readline()
                                           for _ in range(300)))


def ctl_seeds(d: Path) -> None:
    schema = json.loads((REPO / "schema/control.json").read_text())
    examples = {"integer": 1, "string": "svc:1", "boolean": True,
                "object": {}, "array": ["svc:1", "port:0"]}
    for i, (method, m) in enumerate(sorted(schema["methods"].items())):
        params = {k: examples.get(v.get("type"), 1)
                  for k, v in m.get("params", {}).items()}
        req = {"jsonrpc": "2.0", "id": i, "method": method,
               "params": params}
        (d / f"m{i:03d}").write_text(json.dumps(req))
    (d / "flow").write_text(json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "flow.add", "params": {
            "flows": [{"flow": {"proto": "tcp", "src": "10.0.0.1",
                                "dst": "10.0.0.2", "sport": 1, "dport": 2},
                       "chain": ["svc:1", "port:0"], "both": True}]}}))
    (d / "rule").write_text(json.dumps({
        "jsonrpc": "2.0", "id": 2, "method": "rule.add", "params": {
            "match": {"proto": "udp", "src": "10.0.0.0/8",
                      "dport": "1000-2000"}, "chain": ["drop"],
            "priority": 5}}))


def ofp_seeds(d: Path) -> None:
    try:
        from os_ken.ofproto import ofproto_v1_3 as ofp
        from os_ken.ofproto import ofproto_v1_3_parser as p
    except ImportError:  # no os-ken: the target starts from nothing
        return

    class DP:
        ofproto = ofp
        ofproto_parser = p
    out = [p.OFPActionOutput(2)]
    matches = [
        p.OFPMatch(),
        p.OFPMatch(in_port=1, eth_type=0x0800, ip_proto=6,
                   ipv4_src=("10.0.0.0", "255.0.0.0"), tcp_dst=80,
                   tcp_flags=(0x2, 0x12)),
        p.OFPMatch(eth_dst=("02:00:00:00:00:01", "ff:ff:ff:00:00:00"),
                   vlan_vid=(0x1005, 0x1fff)),
        p.OFPMatch(eth_type=0x86dd, ip_proto=17,
                   ipv6_src=("2001:db8::", "ffff:ffff::"), udp_src=53),
        p.OFPMatch(eth_type=0x0806, arp_op=1, arp_tpa="10.0.0.2"),
        p.OFPMatch(eth_type=0x0800, ip_proto=1, icmpv4_type=8),
        p.OFPMatch(mpls_label=3, eth_type=0x8847),
    ]
    insts = [
        [p.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, out)],
        [p.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                 [p.OFPActionOutput(0xf001),
                                  p.OFPActionOutput(0xf002),
                                  p.OFPActionOutput(1)])],
        [p.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, [
            p.OFPActionOutput(ofp.OFPP_CONTROLLER, 128)])],
        [p.OFPInstructionActions(ofp.OFPIT_WRITE_ACTIONS, out),
         p.OFPInstructionActions(ofp.OFPIT_CLEAR_ACTIONS, [])],
        [p.OFPInstructionGotoTable(1)],
        [p.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                 [p.OFPActionGroup(1)])],
    ]
    msgs = []
    for i, mt in enumerate(matches):
        for j, ins in enumerate(insts):
            msgs.append((0, p.OFPFlowMod(
                DP, match=mt, instructions=ins, priority=i * 10 + j,
                command=(i + j) % 5, idle_timeout=j, cookie=i)))
        msgs.append((2, p.OFPFlowStatsRequest(DP, match=mt)))
        msgs.append((2, p.OFPAggregateStatsRequest(DP, 0, ofp.OFPTT_ALL,
                                                   ofp.OFPP_ANY, ofp.OFPG_ANY,
                                                   0, 0, mt)))
    for g, typ in ((1, ofp.OFPGT_SELECT), (2, ofp.OFPGT_INDIRECT),
                   (3, ofp.OFPGT_ALL)):
        buckets = [p.OFPBucket(weight=w, actions=[p.OFPActionOutput(0xf001),
                                                  p.OFPActionOutput(2)])
                   for w in (1, 3)][:1 if typ == ofp.OFPGT_INDIRECT else 2]
        msgs.append((3, p.OFPGroupMod(DP, ofp.OFPGC_ADD, typ, g, buckets)))
    for port in (1, ofp.OFPP_FLOOD, ofp.OFPP_TABLE, 0xf003, 9):
        msgs.append((1, p.OFPPacketOut(
            DP, buffer_id=ofp.OFP_NO_BUFFER, in_port=1,
            actions=[p.OFPActionOutput(port)], data=b"\x02" * 60)))
    for i, (sel, m) in enumerate(msgs):
        m.serialize()
        (d / f"of{i:03d}").write_bytes(bytes([sel]) + bytes(m.buf)[8:])


def nsh_seeds(build: Path, d: Path) -> None:
    """Frames of every NSH tunnel, as tests/unit/test_nsh.c writes them
    (its nsh_pcap, from the fuzz build's own zn-unit)."""
    unit = build / "tests" / "unit" / "zn-unit"
    pcap = d / "nsh.pcap"
    if not unit.exists():
        return
    subprocess.run([str(unit), "nsh_pcap"], env={"ZN_NSH_PCAP": str(pcap)},
                   capture_output=True, timeout=60)
    if pcap.exists():
        for i, fr in enumerate(read_frames(pcap)):
            (d / f"nsh{i:02d}").write_bytes(fr)
        pcap.unlink()


def run(build: Path, seconds: int, only: list[str] | None = None) -> int:
    work = build / "fuzz-work"
    shutil.rmtree(work, ignore_errors=True)
    seeds = {t: work / "seeds" / t for t in TARGETS}
    for p in seeds.values():
        p.mkdir(parents=True)
    packet_seeds(seeds)
    route_seeds(seeds["routes"])
    ratelimit_seeds(seeds["ratelimit"])
    (seeds["maglev"] / "a").write_bytes(
        bytes([3]) + b"".join(bytes([w, len(nm)]) + nm for w, nm in (
            (1, b"10.9.0.11:80"), (2, b"10.9.0.12:80"),
            (0x81, b"10.9.0.13:80"))))
    ctl_seeds(seeds["ctl_json"])
    ofp_seeds(seeds["ofp_msgs"])
    nsh_seeds(build, seeds["nsh"])
    crashes = build / "crashes"
    crashes.mkdir(exist_ok=True)
    failed = 0
    for t in only or TARGETS:
        corpus = build / "corpus" / t  # kept between runs
        corpus.mkdir(parents=True, exist_ok=True)
        exe = build / "fuzz" / f"zn-fuzz-{t}"
        # first the inputs that found bugs: each must pass alone
        regress = sorted((REPO / "fuzz" / "regress" / t).glob("*"))
        if regress:
            r = subprocess.run([str(exe), *map(str, regress)],
                               capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                print(f"fuzz {t}: a regression input fails:\n"
                      f"{r.stderr[-3000:]}", file=sys.stderr)
                failed += 1
                continue
        cmd = [str(exe), f"-max_total_time={seconds}",
               f"-artifact_prefix={crashes}/{t}-", "-print_final_stats=1",
               "-max_len=4096", f"-timeout={TIMEOUT.get(t, 10)}",
               "-rss_limit_mb=4096",
               str(corpus), str(seeds[t])]
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=seconds + 300)
        out = r.stdout + r.stderr
        done = re.findall(r"#(\d+)\s+DONE\s+cov: (\d+) ft: (\d+) corp: "
                          r"(\d+)/", out)
        execs = re.findall(r"stat::number_of_executed_units: (\d+)", out)
        line = {"fuzz": t, "seconds": seconds,
                "execs": int(execs[-1]) if execs else None,
                "cov": int(done[-1][1]) if done else None,
                "features": int(done[-1][2]) if done else None,
                "corpus": int(done[-1][3]) if done else None,
                "crashed": r.returncode != 0}
        print(json.dumps(line), flush=True)
        if r.returncode != 0:
            failed += 1
            tail = "\n".join(out.splitlines()[-40:])
            print(f"fuzz {t} failed (exit {r.returncode}):\n{tail}",
                  file=sys.stderr)
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(REPO / "build-fuzz"))
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--only", action="append", choices=TARGETS,
                    help="this target (repeatable); default: all")
    a = ap.parse_args()
    return run(Path(a.build), a.seconds, a.only)


if __name__ == "__main__":
    sys.exit(main())

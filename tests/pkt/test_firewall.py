"""The firewall NF against the Linux kernel: the same rule file loaded
into the NF and, as nftables (zeronf.firewall.to_nft), into a network
namespace's kernel; the same third-party captures (Zeek's and nDPI's
traces, tcpdump's malformed ones) replayed through both; the verdict on
every packet must agree. Left out of the comparison, as
docs/nfs/firewall.md says: IP fragments (the kernel reassembles them
before its rules, the NF does not), SCTP and DCCP (the kernel runs state
machines of its own for them, the NF tracks them by address)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from harness import CORPORA, wait_for
from kernelfw import KernelFirewall
from pcaputil import linktype, read_frames
from zeronf.firewall import to_nft

ZEEK = CORPORA / "zeek" / "Traces"
NDPI = CORPORA / "ndpi-4.2" / "pcap"

RULES = """\
# a router's forward chain: replies and related ICMP errors pass, new
# connections to a few services, a few protocols, the rest is dropped
-P DROP
--ctstate INVALID -j DROP
--ctstate ESTABLISHED,RELATED -j ACCEPT
-p tcp --syn --dport 80 -j ACCEPT
-p tcp --syn --dport 443 -j ACCEPT
-p tcp --syn -d 10.0.0.0/8 --dport 1:1023 -j ACCEPT
-s 192.168.0.0/16 -p tcp --dport 22 -j DROP
-p tcp --tcp-flags SYN,ACK,FIN,RST ACK --ctstate NEW -s 192.168.0.0/16 \
-j ACCEPT
-p udp --dport 53 -j ACCEPT
-p udp --sport 1024:65535 --dport 1024:65535 -j ACCEPT
-p icmp --icmp-type echo-request -j ACCEPT
-p icmp --icmp-type 3/4 -j ACCEPT
-p icmpv6 --icmpv6-type 128 -j ACCEPT
-p icmpv6 --icmpv6-type neighbour-solicitation -j ACCEPT
-6 -p udp -j ACCEPT
-p gre -j ACCEPT
"""

OPEN = """\
# an open policy with holes: what conntrack finds invalid passes unless
# it is TCP, mid-stream pick-ups are refused, a few services closed
-P ACCEPT
--ctstate INVALID -p tcp -j DROP
-p tcp --tcp-flags SYN,ACK,FIN,RST ACK --ctstate NEW -j DROP
-p tcp --dport 25 -j DROP
-p tcp --sport 21 --tcp-flags FIN FIN -j DROP
-s 192.168.0.0/16 -d 192.168.0.0/16 -p udp --dport 1024:65535 -j DROP
-p icmp --icmp-type echo-reply --ctstate NEW -j DROP
-6 --ctstate UNTRACKED -j DROP
-d 2001:db8::/32 -j DROP
"""
RULE_SETS = {"router": RULES, "open": OPEN}


def ip_bytes(frame: bytes) -> bytes | None:
    """The IP packet of an untagged Ethernet frame, up to its length."""
    if len(frame) < 14:
        return None
    et = frame[12:14]
    if et == b"\x08\x00" and len(frame) >= 34:
        return frame[14:14 + struct.unpack_from("!H", frame, 16)[0]]
    if et == b"\x86\xdd" and len(frame) >= 54:
        return frame[14:54 + struct.unpack_from("!H", frame, 18)[0]]
    return None


def compared(frame: bytes) -> bool:
    """Whether the verdicts on @frame are compared (see the module's
    doc): IP, no fragment, no SCTP or DCCP."""
    et = frame[12:14] if len(frame) >= 14 else b""
    if et == b"\x08\x00" and len(frame) >= 34:
        if struct.unpack_from("!H", frame, 20)[0] & 0x3FFF:
            return False
        return frame[23] not in (132, 33)
    if et == b"\x86\xdd" and len(frame) >= 54:
        nh, off = frame[20], 54
        while nh in (0, 43, 60, 44, 51) and off + 8 <= len(frame):
            if nh == 44:
                fo = struct.unpack_from("!H", frame, off + 2)[0]
                if fo & 0xFFF9:
                    return False
                hl = 8
            elif nh == 51:
                hl = (frame[off + 1] + 2) * 4
            else:
                hl = (frame[off + 1] + 1) * 8
            nh, off = frame[off], off + hl
        return nh not in (132, 33)
    return False


def passed_of(frames: list[bytes], out: list[bytes], key) -> list[bool]:
    """Which of @frames are in @out (in order; @key: what is compared)."""
    res, j = [], 0
    for f in frames:
        k = key(f)
        if j < len(out) and k is not None and out[j] == k:
            res.append(True)
            j += 1
        else:
            res.append(False)
    assert j == len(out), f"{len(out) - j} packets out not matched"
    return res


def corpus(paths: list[Path]) -> tuple[list[bytes], list[str]]:
    frames, names = [], []
    for p in paths:
        if linktype(p) != 1:
            continue
        for f in read_frames(p):
            if 14 <= len(f) <= 9000:
                frames.append(f)
                names.append(p.name)
    return frames, names


def nf_verdicts(managers, tmp: Path, frames: list[bytes], rules: Path,
                nf_args: list[str]) -> tuple[list[bool], dict]:
    from pcaputil import write_pcap
    src, out = tmp / "nf-in.pcap", tmp / "nf-out.pcap"
    write_pcap(src, frames)
    m = managers(ports=[f"net_pcap0,rx_pcap={src}",
                        f"net_pcap1,tx_pcap={out}"],
                 chain="1,port:1", rx_paused=True)
    m.start_nf("firewall", 1, nf_args=["--rules", str(rules)] + nf_args)
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["rx"] == len(frames),
             60, "the capture in")
    m.wait_idle()
    nf = m.call("nf.list")["nfs"][0]
    assert m.shutdown() == 0
    return passed_of(frames, read_frames(out), lambda f: f), nf


def compare(managers, tmp: Path, paths: list[Path], rules_text: str,
            nf_args: list[str] = ()):
    rules = tmp / "rules.txt"
    rules.write_text(rules_text)
    frames, names = corpus(paths)
    assert frames, "no Ethernet capture: a test of nothing"
    k = KernelFirewall(to_nft(rules_text, hook="prerouting"), tmp)
    try:
        frames = k.frames_for(frames)
        kpassed = k.run(frames)
        seen = k.counter("seen")
    finally:
        k.close()
    wanted = {ip_bytes(f) for f in frames if compared(f)}
    kv = passed_of(frames, [p for p in kpassed if p in wanted], ip_bytes)
    nv, nf = nf_verdicts(managers, tmp, frames, rules, list(nf_args))
    diffs = [(i, names[i], kv[i], nv[i]) for i in range(len(frames))
             if compared(frames[i]) and kv[i] != nv[i]]
    return frames, kv, nv, diffs, nf, seen


def describe(frame: bytes) -> str:
    from scapy.all import Ether
    return Ether(frame).summary()


def agree(frames, kv, nv, diffs, nf) -> None:
    """No packet compared differs (what does is listed)."""
    n = sum(1 for f in frames if compared(f))
    print(f"{len(frames)} frames, {n} compared, kernel passed {sum(kv)}, "
          f"NF passed {sum(nv)}, {len(diffs)} differ; NF {nf['counters']}")
    for i, name, kp, np_ in diffs[:40]:
        print(f"  #{i} {name}: kernel {'pass' if kp else 'drop'}, NF "
              f"{'pass' if np_ else 'drop'}: {describe(frames[i])}")
    assert not diffs


@pytest.mark.parametrize("rules", RULE_SETS)
def test_firewall_agrees_with_nftables_on_zeek_and_ndpi_traces(
        managers, tmp_path, rules):
    paths = sorted(ZEEK.rglob("*.pcap")) + sorted(
        p for p in NDPI.glob("*.pcap") if p.stat().st_size < 60000)
    frames, kv, nv, diffs, nf, seen = compare(managers, tmp_path, paths,
                                              RULE_SETS[rules])
    agree(frames, kv, nv, diffs, nf)


TCPDUMP = CORPORA / "tcpdump-4.99.3" / "tests"


@pytest.mark.parametrize("rules", RULE_SETS)
def test_firewall_agrees_with_nftables_on_tcpdumps_malformed_captures(
        managers, tmp_path, rules):
    """tcpdump's test captures, many of them malformed on purpose (cut
    headers, bad lengths, odd flags): the same verdicts, and the NF
    parses every one (the fuzz target covers its parser beyond)."""
    paths = sorted(p for p in TCPDUMP.glob("*.pcap")
                   if p.stat().st_size < 200000)
    frames, kv, nv, diffs, nf, seen = compare(managers, tmp_path, paths,
                                              RULE_SETS[rules])
    agree(frames, kv, nv, diffs, nf)


def flow(frame: bytes):
    """Direction-free TCP 4-tuple of an untagged IPv4 frame, or None."""
    if frame[12:14] != b"\x08\x00" or frame[23] != 6 or len(frame) < 38:
        return None
    ihl = (frame[14] & 0xF) * 4
    if len(frame) < 14 + ihl + 4:
        return None
    a = (frame[26:30], struct.unpack_from("!H", frame, 14 + ihl)[0])
    b = (frame[30:34], struct.unpack_from("!H", frame, 16 + ihl)[0])
    return tuple(sorted((a, b)))


def test_rules_change_live_and_established_connections_stay(managers,
                                                            tmp_path):
    """Half the traces under the router rules, then rules that accept no
    new web connection (rules.load, between two packets), then the other
    half: the kernel, its rules swapped at the same point, agrees on
    every packet, and web connections opened before the change go on
    passing after it (their connection state stayed)."""
    import subprocess
    from harness import unique_name
    from kernelfw import sh
    after = "\n".join(l for l in RULES.splitlines()
                      if "--dport 80 " not in l and "--dport 443 " not in l)
    assert after != RULES
    paths = sorted(ZEEK.rglob("*.pcap")) + sorted(
        p for p in NDPI.glob("*.pcap") if p.stat().st_size < 60000)
    frames, names = corpus(paths)
    # what the NF's port (net_af_packet) takes as it is: frames that fit
    # its 2 KB buffers, no fragment (its socket's fanout reassembles)
    keep = [i for i, f in enumerate(frames) if len(f) <= 1514 and
            not (f[12:14] == b"\x08\x00" and len(f) >= 34 and
                 struct.unpack_from("!H", f, 20)[0] & 0x3FFF)]
    frames, names = [frames[i] for i in keep], [names[i] for i in keep]
    rules_a, rules_b = tmp_path / "a.txt", tmp_path / "b.txt"
    rules_a.write_text(RULES)
    rules_b.write_text(after)
    # the change falls in the middle of the longest web connection
    web_pkts: dict = {}
    for i, f in enumerate(frames):
        fl = flow(f)
        if fl and {x[1] for x in fl} & {80, 443}:
            web_pkts.setdefault(fl, []).append(i)
    longest = max(web_pkts.values(), key=len)
    half = longest[len(longest) // 2]
    k = KernelFirewall(to_nft(RULES, hook="prerouting"), tmp_path)
    try:
        frames = k.frames_for(frames)
        kpassed = k.run(frames[:half])
        sh("nft", "delete", "table", "inet", "zeronf_fw", ns=k.ns)
        (tmp_path / "b.nft").write_text(to_nft(after, hook="prerouting"))
        sh("nft", "-f", str(tmp_path / "b.nft"), ns=k.ns)
        kpassed += k.run(frames[half:])
    finally:
        k.close()
    wanted = {ip_bytes(f) for f in frames if compared(f)}
    kv = passed_of(frames, [p for p in kpassed if p in wanted], ip_bytes)

    a = unique_name("fw")[:10]
    b = a + "p"
    sh("ip", "link", "add", a, "mtu", "9000", "type", "veth", "peer",
       "name", b, "mtu", "9000")
    try:
        for dev in (a, b):
            sh("sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1")
            sh("ip", "link", "set", dev, "up")
        out = tmp_path / "nf-out.pcap"
        m = managers(ports=[f"net_af_packet0,iface={a}",
                            f"net_pcap1,tx_pcap={out}"],
                     chain="1,port:1")
        nf = m.start_nf("firewall", 1, nf_args=["--rules", str(rules_a)])
        from pcaputil import write_pcap

        def replay(part, name):
            write_pcap(tmp_path / name, part)
            subprocess.run(["tcpreplay", "-q", "-i", b, "--pps=4000",
                            str(tmp_path / name)], check=True,
                           capture_output=True)
        replay(frames[:half], "h1.pcap")
        wait_for(lambda: m.call("port.list")["ports"][0]["rx"] >= half, 60,
                 "the first half in")
        m.wait_idle()
        r = m.call("nf.call", instance=nf.instance, command="rules.load",
                   args={"path": str(rules_b)})
        assert r["rules"] == len([l for l in after.splitlines()
                                  if l.startswith("-") and
                                  not l.startswith("-P")])
        replay(frames[half:], "h2.pcap")
        wait_for(lambda: m.call("port.list")["ports"][0]["rx"] >=
                 len(frames) or m.call("port.list")["ports"][0], 60,
                 "the second half in")
        m.wait_idle()
        port = m.call("port.list")["ports"][0]
        assert port["rx"] == len(frames) and port["hw"]["imissed"] == 0, \
            (len(frames), {k: port[k] for k in ("rx", "hw")
                           if k in port})
        assert m.shutdown() == 0
    finally:
        subprocess.run(["ip", "link", "del", a], capture_output=True)
    nv = passed_of(frames, read_frames(out), lambda f: f)
    diffs = [(i, names[i]) for i in range(len(frames))
             if compared(frames[i]) and kv[i] != nv[i]]
    assert not diffs, [(i, n, describe(frames[i])) for i, n in diffs[:20]]
    web = {flow(f) for f, p in zip(frames[:half], nv[:half])
           if p and flow(f) and
           f[14 + (f[14] & 0xF) * 4 + 13] & 0x12 == 0x02 and
           {x[1] for x in flow(f)} & {80, 443}}
    kept = sum(1 for f, p in zip(frames[half:], nv[half:])
               if p and flow(f) in web)
    assert kept > 0, "no web connection spans the change: a test of nothing"

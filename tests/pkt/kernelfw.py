"""The Linux kernel as the firewall NF's ground truth: a rule file loaded
into nftables (zeronf.firewall.to_nft) in a network namespace of its own,
frames replayed into it with tcpreplay over a veth, and the verdict on
each packet read back: every packet that passes the rules is logged to
an NFLOG group (a later base chain of the same hook), which tcpdump
captures.

So that conntrack works as it would on a router, the namespace delivers
every packet locally (a local default route: conntrack confirms a
connection when its packet reaches LOCAL_IN, as it would at
POSTROUTING), answers nothing (what it would send is dropped before
conntrack sees it) and takes any source address (accept_local,
rp_filter off, route_localnet). conntrack runs as configured below:
tcp_be_liberal=1 (the NF tracks no TCP windows, docs/nfs/firewall.md)
and checksums verified (the kernel's default).
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import time
from pathlib import Path

from pcaputil import write_pcap

NFLOG_GROUP = 7


def sh(*args: str, check: bool = True, ns: str | None = None,
       **kw) -> subprocess.CompletedProcess:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                       **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r


def strip_vlan(frame: bytes) -> bytes:
    """The frame without its 802.1Q/802.1ad tags (the kernel would see a
    tagged frame as no IP on an interface without VLANs)."""
    while len(frame) >= 18 and frame[12:14] in (b"\x81\x00", b"\x88\xa8"):
        frame = frame[:12] + frame[16:]
    return frame


def nflog_payloads(path: Path) -> list[bytes]:
    """The packets (IP headers on) of an NFLOG capture (link type 239)."""
    out = []
    data = path.read_bytes()
    if len(data) < 24:
        return out
    end = "<" if data[:4] == b"\xd4\xc3\xb2\xa1" else ">"
    off = 24
    while off + 16 <= len(data):
        caplen = struct.unpack_from(end + "I", data, off + 8)[0]
        rec = data[off + 16:off + 16 + caplen]
        off += 16 + caplen
        p = 4  # family, version, resource id
        while p + 4 <= len(rec):
            tlen, ttype = struct.unpack_from("<HH", rec, p)
            if tlen < 4:
                break
            if ttype == 9:  # NFULA_PAYLOAD
                out.append(rec[p + 4:p + tlen])
                break
            p += (tlen + 3) & ~3
    return out


class KernelFirewall:
    """One namespace with the rules loaded; run() replays frames."""

    def __init__(self, nft_rules: str, tmp: Path):
        self.tmp = tmp
        tag = f"{os.getpid() % 100000}"
        self.ns = f"zfwgt{tag}"
        self.outer = f"zfwa{tag}"
        sh("ip", "netns", "add", self.ns)
        try:
            self._setup(nft_rules)
        except BaseException:
            self.close()
            raise

    def _setup(self, nft_rules: str) -> None:
        ns = self.ns
        sh("ip", "link", "add", self.outer, "mtu", "9000", "type", "veth",
           "peer", "name", "in0", "mtu", "9000", "netns", ns)
        sh("ip", "link", "set", self.outer, "up")
        for k, v in (("net.ipv6.conf.all.accept_dad", "0"),
                     ("net.ipv6.conf.default.accept_dad", "0"),
                     ("net.ipv4.conf.all.rp_filter", "0"),
                     ("net.ipv4.conf.default.rp_filter", "0"),
                     ("net.ipv4.conf.all.accept_local", "1"),
                     ("net.ipv4.conf.default.accept_local", "1"),
                     ("net.ipv4.conf.all.route_localnet", "1"),
                     ("net.ipv4.conf.default.route_localnet", "1")):
            sh("sysctl", "-qw", f"{k}={v}", ns=ns)
        sh("ip", "link", "set", "lo", "up", ns=ns)
        sh("ip", "link", "set", "in0", "up", ns=ns)
        for fam in ("-4", "-6"):
            default = "0.0.0.0/0" if fam == "-4" else "::/0"
            sh("ip", fam, "route", "add", "local", default, "dev", "lo",
               "table", "100", ns=ns)
            sh("ip", fam, "rule", "add", "pref", "100", "lookup", "100",
               ns=ns)
        script = self.tmp / "kernel.nft"
        script.write_text(nft_rules + f"""
table inet zfw_gt {{
  chain seen {{ type filter hook prerouting priority -450; counter; }}
  chain passed {{
    type filter hook prerouting priority 10;
    counter log group {NFLOG_GROUP}
  }}
  chain quiet {{ type filter hook output priority -450; drop; }}
}}
""")
        sh("nft", "-f", str(script), ns=ns)
        # conntrack is loaded now (the rules use it): its settings
        for k, v in (("net.netfilter.nf_conntrack_tcp_be_liberal", "1"),
                     ("net.netfilter.nf_conntrack_checksum", "1"),
                     ("net.netfilter.nf_conntrack_tcp_loose", "1")):
            sh("sysctl", "-qw", f"{k}={v}", ns=ns)
        link = sh("ip", "-o", "link", "show", "in0", ns=ns).stdout
        self.mac = bytes.fromhex(
            link.split("link/ether ")[1].split()[0].replace(":", ""))

    def counter(self, chain: str) -> int:
        out = sh("nft", "list", "chain", "inet", "zfw_gt", chain,
                 ns=self.ns).stdout
        return int(out.split("packets ")[1].split()[0])

    def frames_for(self, frames: list[bytes]) -> list[bytes]:
        """@frames as the namespace's interface takes them: to its MAC,
        without VLAN tags."""
        return [self.mac + strip_vlan(f)[6:] for f in frames]

    def run(self, frames: list[bytes], pps: int = 4000) -> list[bytes]:
        """Replay @frames (already frames_for()); the IP packets that
        passed the rules, in order (reassembled datagrams included)."""
        src = self.tmp / "kernel-in.pcap"
        write_pcap(src, frames)
        before = self.counter("passed")
        log = self.tmp / "kernel-passed.pcap"
        dump = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, "tcpdump", "-i",
             f"nflog:{NFLOG_GROUP}", "-U", "-B", "65536", "-s", "0", "-w",
             str(log)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            # tcpdump says "listening on" once bound
            line = dump.stderr.readline().decode()
            if "listening" not in line:
                raise RuntimeError(f"tcpdump: {line}")
            r = sh("tcpreplay", "-q", "-i", self.outer, f"--pps={pps}",
                   str(src), check=False)
            if r.returncode != 0:
                raise RuntimeError(f"tcpreplay: {r.stdout} {r.stderr}")
            passed = self.counter("passed") - before
            deadline = time.monotonic() + 30
            while (len(nflog_payloads(log)) < passed and
                   time.monotonic() < deadline):
                time.sleep(0.1)
        finally:
            dump.send_signal(signal.SIGINT)
            dump.wait(timeout=30)
        got = nflog_payloads(log)
        if len(got) != passed:
            raise RuntimeError(f"NFLOG has {len(got)} of the {passed} "
                               "packets that passed")
        return got

    def close(self) -> None:
        subprocess.run(["ip", "link", "del", self.outer],
                       capture_output=True)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)

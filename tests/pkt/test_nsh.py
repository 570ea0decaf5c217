"""NSH (RFC 8300) and its three tunnels as ZeroNF writes them
(lib/common/zn_nsh.c), decoded by Debian's tcpdump: the ground truth is a
decoder nobody here wrote. tests/unit/test_nsh.c's nsh_pcap writes the
frames (every tunnel, service indexes 255, 254, 253, MD types 1 and 2);
each must come out of tcpdump as the tunnel, the NSH with its path and
index, and the inner UDP packet, whole."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from harness import BUILD

TCPDUMP = shutil.which("tcpdump") or "/usr/bin/tcpdump"


@pytest.fixture
def decoded(tmp_path) -> list[str]:
    if not shutil.which("tcpdump"):
        pytest.skip("no tcpdump (scripts/setup.sh installs it)")
    pcap = tmp_path / "nsh.pcap"
    r = subprocess.run([str(BUILD / "tests/unit/zn-unit"), "nsh_pcap"],
                       env={"ZN_NSH_PCAP": str(pcap)}, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([TCPDUMP, "-nn", "-vvv", "-r", str(pcap)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    # one record per packet: its first line starts with the time
    out, cur = [], []
    for line in r.stdout.splitlines():
        if re.match(r"\d\d:\d\d:\d\d\.", line) and cur:
            out.append("\n".join(cur))
            cur = []
        cur.append(line)
    out.append("\n".join(cur))
    return out


def test_tcpdump_decodes_every_tunnel_and_index(decoded):
    assert len(decoded) == 9, decoded
    tunnels = ["192.0.2.1.\\d+ > 192.0.2.2.4790: \\[no cksum\\] VXLAN-GPE, "
               "flags \\[IP\\], vni 16962",
               "192.0.2.1.\\d+ > 192.0.2.2.4789: \\[no cksum\\] VXLAN, "
               "flags \\[I\\] \\(0x08\\), vni 16962",
               None]  # Ethernet: the NSH right after the frame's header
    for i, pkt in enumerate(decoded):
        tunnel, k = divmod(i, 3)
        if tunnels[tunnel]:
            assert re.search(tunnels[tunnel], pkt), pkt
        md = 2 if k == 2 else 1
        nsh = (f"NSH, ver 0, flags \\[none\\], TTL 63, length "
               f"{5 if md == 2 else 6}, md type {md}, next-protocol "
               f"Ethernet, service-path-id 0x{0x101 + tunnel + 1:06x}, "
               f"service-index 0x{255 - k:02x}")
        assert re.search(nsh, pkt), pkt
        if md == 1:
            assert "Context[03]: 0xacadaeaf" in pkt, pkt
        else:  # ZeroNF's flow TLV: class 0xfff6, type 1, the hash
            assert "TLV Class 65526, Type 1, Len 8" in pkt and \
                "Value: 0xfe:ed:f0:0d:01:00:00:00" in pkt, pkt
        # the inner packet, whole (its checksum right)
        assert f"10.0.0.1.{6000 + k} > 10.0.0.2.5001: [no cksum] UDP, " \
            "length 0" in pkt, pkt
        assert "bad cksum" not in pkt, pkt

"""Test hosts in network namespaces: real kernel TCP/UDP traffic whose path
crosses ZeroNF. Each host is a netns with one veth; the other end of the
veth stays in the root namespace, where a ZeroNF port (net_af_packet)
attaches to it."""

from __future__ import annotations

import os
import subprocess


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(args, check=check, capture_output=True, text=True,
                          timeout=30)


class Host:
    def __init__(self, tag: str, addr: str):
        self.ns = f"zn{tag}"
        self.port_if = f"zp{tag}"      # root side, a ZeroNF port
        self.host_if = f"zh{tag}"      # inside the namespace
        self.addr = addr
        sh("ip", "netns", "add", self.ns)
        sh("ip", "link", "add", self.port_if, "type", "veth", "peer",
           "name", self.host_if)
        sh("ip", "link", "set", self.host_if, "netns", self.ns)
        # No IPv6 on the port side: no stray router solicitations.
        sh("sysctl", "-q", "-w",
           f"net.ipv6.conf.{self.port_if}.disable_ipv6=1", check=False)
        sh("ip", "link", "set", self.port_if, "up")
        self.run("ip", "link", "set", "lo", "up")
        self.run("ip", "addr", "add", f"{addr}/24", "dev", self.host_if)
        self.run("ip", "link", "set", self.host_if, "up")
        # Segmentation and checksum offloads make the kernel hand veth
        # 64 KiB frames with unfinished checksums; a bridge made of
        # AF_PACKET ports (like any L2 device) needs real frames.
        for dev, run in ((self.port_if, sh), (self.host_if, self.run)):
            run("ethtool", "-K", dev, "tx", "off", "rx", "off", "tso", "off",
                "gso", "off", "gro", "off", check=False)

    def run(self, *args: str, check: bool = True):
        return sh("ip", "netns", "exec", self.ns, *args, check=check)

    def popen(self, *args: str, **kw) -> subprocess.Popen:
        return subprocess.Popen(["ip", "netns", "exec", self.ns, *args],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **kw)

    def close(self) -> None:
        sh("ip", "link", "del", self.port_if, check=False)
        sh("ip", "netns", "del", self.ns, check=False)


def unique_tag(i: int) -> str:
    return f"{os.getpid() % 10000}{i}"

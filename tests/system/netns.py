"""Test hosts in network namespaces: real kernel TCP/UDP traffic whose path
crosses ZeroNF. A host is a netns with one interface. Either a veth whose
other end stays in the root namespace for a ZeroNF net_af_packet port
(attach_veth), or the kernel side of a ZeroNF net_tap port moved into the
namespace (adopt)."""

from __future__ import annotations

import os
import subprocess


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(args, check=check, capture_output=True, text=True,
                          timeout=30)


def no_offloads(dev: str, run=sh) -> None:
    """Segmentation and checksum offloads make the kernel hand out 64 KiB
    frames with unfinished checksums; a bridge made of DPDK ports (like
    any L2 device) needs real frames."""
    run("ethtool", "-K", dev, "tx", "off", "rx", "off", "tso", "off",
        "gso", "off", "gro", "off", check=False)


class Host:
    def __init__(self, tag: str, addr: str):
        self.ns = f"zn{tag}"
        self.tag = tag
        self.addr = addr
        self.port_if: str | None = None   # root-side veth end, if any
        sh("ip", "netns", "add", self.ns)
        self.run("ip", "link", "set", "lo", "up")

    def attach_veth(self) -> str:
        """A veth pair: one end in the host, the other (returned) in the
        root namespace for an AF_PACKET port."""
        self.port_if, host_if = f"zp{self.tag}", f"zh{self.tag}"
        sh("ip", "link", "add", self.port_if, "type", "veth", "peer",
           "name", host_if)
        sh("sysctl", "-q", "-w",
           f"net.ipv6.conf.{self.port_if}.disable_ipv6=1", check=False)
        sh("ip", "link", "set", self.port_if, "up")
        no_offloads(self.port_if)
        self.adopt(host_if)
        return self.port_if

    def adopt(self, ifname: str) -> None:
        """Move an interface (a veth end, a net_tap port's tap) in here and
        give it the host's address."""
        sh("ip", "link", "set", ifname, "netns", self.ns)
        self.run("ip", "addr", "add", f"{self.addr}/24", "dev", ifname)
        self.run("ip", "link", "set", ifname, "up")
        no_offloads(ifname, self.run)

    def run(self, *args: str, check: bool = True):
        return sh("ip", "netns", "exec", self.ns, *args, check=check)

    def popen(self, *args: str, **kw) -> subprocess.Popen:
        return subprocess.Popen(["ip", "netns", "exec", self.ns, *args],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **kw)

    def close(self) -> None:
        if self.port_if:
            sh("ip", "link", "del", self.port_if, check=False)
        sh("ip", "netns", "del", self.ns, check=False)


def unique_tag(i: int) -> str:
    return f"{os.getpid() % 10000}{i}"

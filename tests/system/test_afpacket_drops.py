"""A net_af_packet port's kernel drops are counted (mgr/port/port_kdrops.c):
the packet socket's ring full, the kernel drops what arrives, and DPDK
22.11's PMD does not say so; the manager adds the socket's count to the
port's imissed. Every frame sent is then either read or missed."""
from __future__ import annotations

import socket
import subprocess

from harness import unique_name, wait_for

FRAMES = 20000


def sh(*a: str) -> None:
    subprocess.run(a, check=True, capture_output=True)


def test_every_frame_is_read_or_counted_missed(managers):
    a = unique_name("kd")[:10]
    b = a + "p"
    sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
    try:
        for dev in (a, b):
            # no IPv6: the kernel would send frames of its own on them
            sh("sysctl", "-q", "-w", f"net.ipv6.conf.{dev}.disable_ipv6=1")
            sh("ip", "link", "set", dev, "up")
        m = managers(ports=[f"net_af_packet0,iface={a}"], rx_paused=True,
                     args=["--mem", "64", "--pool-size", "2047"])
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.bind((b, 0))
        frame = b"\xff" * 6 + b"\x02" * 6 + b"\x08\x00" + b"\x45" + b"\x00" * 45
        for _ in range(FRAMES):  # while the manager reads nothing
            s.send(frame)
        s.close()
        with m.client() as c:
            hw = c.call("port.list")["ports"][0]["hw"]
            assert hw["imissed"] > 0, hw  # the ring is far smaller
            c.call("rx.set", enabled=True)

        def port():
            with m.client() as c:
                return c.call("port.list")["ports"][0]
        wait_for(lambda: port()["rx"] + port()["hw"]["imissed"] >= FRAMES,
                 30, "every frame read or missed")
        p = port()
        assert p["rx"] + p["hw"]["imissed"] == FRAMES, p
        # asked again, the kernel's count (reset as it is read) is not
        # added twice
        assert port()["hw"]["imissed"] == p["hw"]["imissed"]
        # stopped while its port's interface is there (the fixture checks
        # it left nothing)
        assert m.shutdown() == 0
    finally:
        subprocess.run(["ip", "link", "del", a], capture_output=True)

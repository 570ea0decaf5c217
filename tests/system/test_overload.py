"""A chain overloaded about twice over (issue 10): the chain's slowest NF
spends 50 us per packet (about 20,000 packets a second) while frames of
40 flows arrive at twice that rate. Every packet lost is lost at ingress
and counted there (ingress_full with --ingress drop; the kernel's count
of the tap's dropped frames with backpressure, where the manager stops
reading instead), none inside the chain, and no flow is reordered."""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path

import pytest

from netns import sh, unique_tag
from pcaputil import read_frames

# 32,000 frames at 40 kpps for 0.8 s into a chain of about 20 kpps: half
# is lost but what the queues on the way hold (about 7,000 frames, with
# the NF -> NF links: more than the 16,000-frame run of 0.4 s this was
# could lose for certain; 4.6 % lost was seen)
FLOWS, PER_FLOW, RATE = 40, 800, 40000
COST_NS = 50000


def frame(flow: int, seq: int) -> bytes:
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + 8, 0, 0, 64, 17, 0,
                     bytes([10, 0, flow // 250, flow % 250 + 1]),
                     bytes([10, 1, 0, 1]))
    udp = struct.pack("!HHHH", 1000 + flow, 9, 16, 0)
    return (b"\x02\x00\x00\x00\x00\x01" b"\x02\x00\x00\x00\x00\x02"
            b"\x08\x00" + ip + udp + struct.pack("!II", flow, seq) +
            b"\0" * 14)


def paced_send(iface: str, frames: list[bytes], rate: int) -> None:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    t0, chunk = time.monotonic(), max(1, rate // 1000)
    for i in range(0, len(frames), chunk):
        for f in frames[i:i + chunk]:
            s.send(f)
        ahead = t0 + (i + chunk) / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
    s.close()


def tap_dropped(iface: str) -> int:
    return int(Path(f"/sys/class/net/{iface}/statistics/tx_dropped")
               .read_text())


def busiest() -> str:
    """The processes that used the most CPU lately (for a failure
    message): ps's view, top 6."""
    import subprocess
    return subprocess.run(["ps", "-eo", "pcpu,pid,args", "--sort=-pcpu"],
                          capture_output=True, text=True).stdout[:1200]


@pytest.mark.parametrize("ingress", ["drop", "backpressure"])
def test_twice_overloaded_chain(managers, tmp_path, ingress):
    # The offered load is this test's own Python sender on the same two
    # cores: on a loaded machine it can fall behind its pace (seen twice
    # in CI after long runs, never alone). That says nothing of ZeroNF, so
    # the scenario runs again, once, before the test fails on it.
    for attempt in (1, 2):
        why = overloaded_chain(managers, tmp_path / f"a{attempt}", ingress)
        if why is None:
            return
    pytest.fail(why)


def overloaded_chain(managers, tmp_path, ingress) -> str | None:
    tmp_path.mkdir()
    tap = f"zo{unique_tag(3)}{ingress[0]}"
    out = tmp_path / "out.pcap"
    m = managers(ports=[f"net_tap0,iface={tap}", f"net_pcap1,tx_pcap={out}"],
                 chain="1,2,port:1", rx_paused=True,
                 args=["--ingress", ingress])
    sh("sysctl", "-q", "-w", f"net.ipv6.conf.{tap}.disable_ipv6=1",
       check=False)
    base = m.pool()["in_use"]
    m.start_nf("forward", 1, "fast")
    m.start_nf("forward", 2, "slow", nf_args=["--cost-ns", str(COST_NS)])
    m.call("rx.set", enabled=True)
    frames = [frame(f, s) for s in range(PER_FLOW) for f in range(FLOWS)]
    # what the kernel sent on the new link before (an IPv6 solicitation)
    time.sleep(0.3)
    st0 = m.wait_idle(baseline=base)
    rx0, tx0 = st0["ports"][0]["rx"], st0["ports"][1]["tx"]
    dropped0 = tap_dropped(tap)
    t0 = time.monotonic()
    paced_send(tap, frames, RATE)
    took = time.monotonic() - t0
    st = m.wait_idle(timeout=60, baseline=base)
    kernel_dropped = tap_dropped(tap) - dropped0
    rx = st["ports"][0]["rx"] - rx0
    tx = st["ports"][1]["tx"] - tx0
    drops = {k: v for k, v in st["drops"].items() if v}
    assert m.shutdown() == 0
    got = read_frames(out)[tx0:]
    assert len(got) == tx
    # about twice overloaded: up to half of what was sent is lost. Less
    # when the queues on the way (the tap's, the port's RX rings, the NFs'
    # rings: several thousand frames) took more of the excess: a manager
    # that polls sooner fills them sooner (17 to 20 % lost was seen once
    # the workers' sleeps stopped overshooting). Lost at all is what says
    # the chain was overloaded; where it was lost is what is checked.
    lost = len(frames) - tx
    if took >= len(frames) / RATE * 1.5:
        return f"sender too slow: {took:.2f} s\n{busiest()}"
    assert len(frames) * 0.05 < lost < len(frames) * 0.8, (lost, drops)
    # every loss counted at ingress, none inside the chain
    if ingress == "drop":
        assert rx + kernel_dropped == len(frames)
        assert drops == {"ingress_full": rx - tx}, drops
    else:
        assert drops == {}, drops            # the manager lost nothing
        assert rx == tx
        assert rx + kernel_dropped == len(frames), (rx, kernel_dropped)
    for n in st["nfs"]:
        assert sum(n["drops"].values()) == 0 and n["exit_drops"] == 0
    # no flow reordered
    last: dict[int, int] = {}
    for f in got:
        flow, seq = struct.unpack("!II", f[42:50])
        assert seq > last.get(flow, -1), (flow, seq, last.get(flow))
        last[flow] = seq
    assert len(last) == FLOWS
    return None

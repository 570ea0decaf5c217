"""An untrusted NF that is a plain Linux program (NetVM's untrusted VM,
issue 13): no DPDK, no libzeronf, no shared memory with ZeroNF. It reads
and writes a TAP interface in a network namespace of its own; the kernel
copies every packet out of ZeroNF's memory and back in. The default chain
sends packets through NF 1 and out of the TAP port; the program drops
IPv4 UDP (a firewall) and writes the rest back; they enter ZeroNF again
on the TAP port, whose chain (chain.set with a port) goes on where they
left: NF 2, then out of port 0. The output is the input without its UDP,
in order per flow, and nothing else is lost."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from harness import DATA, wait_for
from zeronf.client import ZeroNFError
from netns import sh, unique_tag
from pcaputil import assert_same_per_flow, read_frames

PCAP = DATA / "pcap/wikipedia.pcap"  # TCP, UDP, IPv6, ARP, 802.3

PROGRAM = textwrap.dedent("""
    import signal, socket, sys
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((sys.argv[1], 0))
    seen = passed = 0
    def done(*_):
        print(seen, passed, flush=True)
        sys.exit(0)
    signal.signal(signal.SIGTERM, done)
    print("ready", flush=True)
    while True:
        frame, addr = s.recvfrom(65535)
        if addr[2] == socket.PACKET_OUTGOING:
            continue  # what we wrote ourselves
        seen += 1
        if frame[12:14] == b"\\x08\\x00" and frame[23] == 17:
            continue  # IPv4 UDP: dropped
        s.send(frame)
        passed += 1
""")


def is_udp4(f: bytes) -> bool:
    return f[12:14] == b"\x08\x00" and f[23] == 17


@pytest.fixture
def netns():
    ns = f"znu{unique_tag(0)}"
    sh("ip", "netns", "add", ns)
    yield ns
    sh("ip", "netns", "del", ns, check=False)


def test_a_plain_linux_program_is_a_chain_hop(managers, tmp_path, netns):
    tap = f"zu{unique_tag(1)}"
    out = tmp_path / "out.pcap"
    m = managers(ports=[f"net_pcap0,rx_pcap={PCAP},tx_pcap={out}",
                        f"net_tap1,iface={tap}"],
                 chain="1,port:1", rx_paused=True)
    r = m.call("chain.set", port=1, hops=["svc:2", "port:0"])
    assert r == {"port": 1, "hops": ["svc:2", "port:0"], "warnings": [
        "svc:2: no NF serves it now: its packets drop (no_instance) until "
        "one does"]}
    m.start_nf("forward", 1, "trusted1")
    m.start_nf("forward", 2, "trusted2")
    # The TAP's kernel side, in the program's namespace: no address and
    # no IPv6, so the kernel itself sends nothing into ZeroNF.
    sh("ip", "link", "set", tap, "netns", netns)
    run = ("ip", "netns", "exec", netns)
    sh(*run, "sysctl", "-q", "-w", f"net.ipv6.conf.{tap}.disable_ipv6=1")
    sh(*run, "ip", "link", "set", tap, "up")
    prog = m.tmp / "untrusted.py"
    prog.write_text(PROGRAM)
    p = subprocess.Popen([*run, sys.executable, str(prog), tap],
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        frames = read_frames(PCAP)
        keep = [f for f in frames if not is_udp4(f)]
        base = m.pool()["in_use"]  # net_tap's RX buffers
        m.call("rx.set", enabled=True)
        wait_for(lambda: m.call("port.list")["ports"][0]["tx"] >= len(keep),
                 60, "the program's packets out of port 0")
        st = m.wait_idle(baseline=base)
    finally:
        p.send_signal(signal.SIGTERM)
        counts = p.communicate(timeout=10)[0].split()
    seen, passed = int(counts[-2]), int(counts[-1])
    got = read_frames(out)
    # Before the TAP moved into the namespace the root namespace's
    # kernel may have sent on it (IPv6 neighbour discovery, MLD): those
    # came in on port 1 too, took its chain and went out.
    inp = set(frames)
    extra = [f for f in got if f not in inp]
    assert len(extra) <= 4 and all(f[12:14] == b"\x86\xdd" for f in extra)
    assert (seen, passed) == (len(frames), len(keep))
    nfs = {n["name"]: n for n in st["nfs"]}
    assert nfs["trusted1"]["rx"] == nfs["trusted1"]["tx"] == len(frames)
    assert nfs["trusted2"]["rx"] == nfs["trusted2"]["tx"] == \
        len(keep) + len(extra)
    assert sum(st["drops"].values()) == 0
    ports = m.call("port.list")["ports"]
    assert ports[1]["tx"] == len(frames)
    assert ports[1]["rx"] == len(keep) + len(extra)
    assert ports[1]["chain"] == ["svc:2", "port:0"]
    assert ports[0]["chain"] is None
    assert m.shutdown() == 0
    assert_same_per_flow(keep, [f for f in got if f in inp])


def test_port_chain_commands(managers):
    m = managers(ports=["net_null0", "net_null1"], chain="1,port:1")
    assert m.call("chain.get", port=1) == {"port": 1, "hops": []}
    with pytest.raises(ZeroNFError, match="port 5"):
        m.call("chain.set", port=5, hops=["svc:1"])
    with pytest.raises(ZeroNFError, match="1..32 hops"):
        m.call("chain.set", hops=[])  # the default chain needs hops
    m.call("chain.set", port=0, hops=["drop"])
    assert m.call("chain.get", port=0)["hops"] == ["drop"]
    assert m.call("chain.get")["hops"] == ["svc:1", "port:1"]
    m.call("chain.set", port=0, hops=[])
    assert m.call("port.list")["ports"][0]["chain"] is None

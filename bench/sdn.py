"""sdn: flow setup and packet-in round trip, ZeroNF's OpenFlow endpoint against
OVS-DPDK, under the same controller in one run.

  {"bench":"sdn","system":S,"match":K,"flows":N,"flow_mods_per_s":X,
   "packet_in_rtt_p50_us":Y,"packet_in_rtt_p99_us":Z}

  S = zeronf    a manager with two net_af_packet ports on veths, its
                OpenFlow endpoint dialling the controller (zeronf sdn
                --controller): the table's lookups in its worker (polling
                as OVS's PMD thread does: --idle-sleep-us 1), the
                endpoint in its control thread
      ovs-dpdk  Debian's OVS 3.1 with DPDK (bench/peers.py's, one PMD
                thread), the same two ports, fail-mode secure, OpenFlow
                1.3, connected to the same controller
  K = exact     each flow a full UDP 5-tuple with in_port and eth_type
      wildcard  each flow an IPv4 source prefix (/16 to /32, of 17
                masks) and a UDP destination port
  N = flows installed per run (10,000)

The controller is this benchmark's own (os-ken's message classes over a
socket: no os-ken event loop in the measurement). flow_mods_per_s: N
FLOW_MOD adds written back to back, then a BARRIER_REQUEST; N over the
time until the BARRIER_REPLY (every mod in force: both switches answer a
barrier after what came before it), errors counted (none expected). Then
with those N flows installed and a table-miss entry to the controller:
packet_in_rtt, one UDP frame at a time written to the far end of the
first port's veth (AF_PACKET) until the same frame comes out at the far
end of the second's,
through the switch's miss, a PACKET_IN, the controller's immediate
PACKET_OUT (output:2, the data sent back) and the switch's output: 500
round trips, p50 and p99. Each run measures every (system, match) once,
in turn; each line is the median of the runs. The issue's targets, read
from these lines: ZeroNF's flow_mods_per_s >= OVS-DPDK's, and its p50
and p99 <= OVS-DPDK's, for both kinds of match.
"""
from __future__ import annotations

import os
import select
import socket
import struct
import subprocess
import threading
import time

from common import TMP, emit, log, median, udp_frame
from harness import Manager
from peers import OVS_VSWITCHD, Ovs

N_FLOWS = 10000
N_RTT = 500
KINDS = ("exact", "wildcard")


def _ofp():
    from os_ken.ofproto import ofproto_v1_3 as ofp
    from os_ken.ofproto import ofproto_v1_3_parser as parser
    from os_ken.ofproto import ofproto_parser

    class DP:
        ofproto = ofp
        ofproto_parser = parser
    return ofp, parser, ofproto_parser, DP


class Controller:
    """The bench's controller: listens, takes one switch, speaks to it."""

    def __init__(self):
        self.ofp, self.parser, self.op, self.DP = _ofp()
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(1)
        self.port = self.ls.getsockname()[1]
        self.buf = b""
        self.s: socket.socket | None = None
        self.xid = 1

    def accept(self, timeout: float = 60.0) -> None:
        self.ls.settimeout(timeout)
        self.s, _ = self.ls.accept()
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.send(self.parser.OFPHello(self.DP))
        self.send(self.parser.OFPFeaturesRequest(self.DP))
        while not isinstance(self.recv(), self.parser.OFPSwitchFeatures):
            pass

    def raw(self, msg) -> bytes:
        msg.set_xid(self.xid)
        self.xid += 1
        msg.serialize()
        return bytes(msg.buf)

    def send(self, msg) -> None:
        self.s.sendall(self.raw(msg))

    def recv(self):
        while True:
            if len(self.buf) >= 8:
                v, t, n, x = self.op.header(self.buf)
                if len(self.buf) >= n:
                    raw, self.buf = self.buf[:n], self.buf[n:]
                    return self.op.msg(self.DP, v, t, n, x, raw)
            data = self.s.recv(1 << 20)
            if not data:
                raise ConnectionError("the switch closed")
            self.buf += data

    def barrier(self) -> int:
        """Send a barrier; wait for its reply. @return errors seen."""
        self.send(self.parser.OFPBarrierRequest(self.DP))
        errors = 0
        while True:
            r = self.recv()
            if isinstance(r, self.parser.OFPBarrierReply):
                return errors
            if isinstance(r, self.parser.OFPErrorMsg):
                errors += 1

    def flow_mods(self, kind: str, n: int) -> list[bytes]:
        p, ofp = self.parser, self.ofp
        out2 = [p.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                        [p.OFPActionOutput(2)])]
        msgs = []
        for i in range(n):
            if kind == "exact":
                m = p.OFPMatch(in_port=1, eth_type=0x800, ip_proto=17,
                               ipv4_src=f"10.{i >> 16 & 255}.{i >> 8 & 255}."
                                        f"{i & 255}",
                               ipv4_dst="10.200.0.1",
                               udp_src=1024 + i % 50000, udp_dst=80)
            else:
                plen = 16 + i % 17
                a = (10 << 24) | ((i * 2654435761) & 0xffffff)
                a &= (0xffffffff << (32 - plen)) & 0xffffffff
                m = p.OFPMatch(eth_type=0x800, ip_proto=17,
                               ipv4_src=(socket.inet_ntoa(a.to_bytes(4,
                                                                     "big")),
                                         socket.inet_ntoa(((0xffffffff <<
                                                            (32 - plen)) &
                                                           0xffffffff)
                                                          .to_bytes(4, "big"))),
                               udp_dst=2000 + i // 17)
            msgs.append(self.raw(p.OFPFlowMod(self.DP, priority=100,
                                              match=m, instructions=out2)))
        return msgs

    def rate(self, kind: str, n: int) -> tuple[float, int]:
        msgs = self.flow_mods(kind, n)
        data = b"".join(msgs)
        t0 = time.perf_counter()
        self.s.sendall(data)
        errors = self.barrier()
        return n / (time.perf_counter() - t0), errors

    def clear(self) -> None:
        p, ofp = self.parser, self.ofp
        self.send(p.OFPFlowMod(self.DP, command=ofp.OFPFC_DELETE,
                               table_id=ofp.OFPTT_ALL,
                               out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY,
                               match=p.OFPMatch()))
        self.barrier()

    def table_miss(self) -> None:
        p, ofp = self.parser, self.ofp
        self.send(p.OFPFlowMod(self.DP, priority=0, match=p.OFPMatch(),
                               instructions=[p.OFPInstructionActions(
                                   ofp.OFPIT_APPLY_ACTIONS,
                                   [p.OFPActionOutput(ofp.OFPP_CONTROLLER,
                                                      ofp.OFPCML_NO_BUFFER)])]))
        self.barrier()

    def answer_packet_ins(self, stop: threading.Event) -> None:
        """Each PACKET_IN back at once as a PACKET_OUT to port 2."""
        p, ofp = self.parser, self.ofp
        out = [p.OFPActionOutput(2)]
        self.s.settimeout(0.2)
        while not stop.is_set():
            try:
                r = self.recv()
            except socket.timeout:
                continue
            if isinstance(r, p.OFPPacketIn):
                self.send(p.OFPPacketOut(self.DP, buffer_id=ofp.OFP_NO_BUFFER,
                                         in_port=r.match["in_port"],
                                         actions=out, data=r.data))
        self.s.settimeout(None)

    def close(self) -> None:
        if self.s is not None:
            self.s.close()
        self.ls.close()


def _raw(ifname: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((ifname, 0))
    return s


class Veths:
    """Two veth pairs: a switch's ports (net_af_packet on one end of each,
    for ZeroNF and OVS-DPDK alike) and the ends the bench writes to and
    reads from. Removed after."""

    def __init__(self, tag: str):
        self.port_if = (f"zs{tag}p0", f"zs{tag}p1")
        self.host_if = (f"zs{tag}h0", f"zs{tag}h1")
        for p, h in zip(self.port_if, self.host_if):
            subprocess.run(["ip", "link", "add", p, "type", "veth", "peer",
                            "name", h], check=True)
            for x in (p, h):
                # no IPv6 chatter (router solicitations): no packet-ins
                # but ours
                subprocess.run(["sysctl", "-q", "-w",
                                f"net.ipv6.conf.{x}.disable_ipv6=1"],
                               capture_output=True)
                subprocess.run(["ip", "link", "set", x, "up"], check=True)

    def ports(self) -> list[str]:
        return [f"net_af_packet{i},iface={p}"
                for i, p in enumerate(self.port_if)]

    def __enter__(self) -> "Veths":
        return self

    def __exit__(self, *exc) -> None:
        for p in self.port_if:
            subprocess.run(["ip", "link", "del", p], capture_output=True)


def rtt(ctl: Controller, tx_if: str, rx_if: str, n: int) -> list[float]:
    """Round trips, in microseconds, of @n frames through the miss path."""
    tx, rx = _raw(tx_if), _raw(rx_if)
    stop = threading.Event()
    th = threading.Thread(target=ctl.answer_packet_ins, args=(stop,),
                          daemon=True)
    th.start()
    out = []
    try:
        for i in range(n + 20):  # the first 20: warm-up
            frame = udp_frame(b"\x0a\x09\x00\x01", b"\x0a\x09\x00\x02",
                              40000 + i % 20000, 9, 64)
            frame = frame[:42] + struct.pack("!I", i) + frame[46:]
            t0 = time.perf_counter()
            tx.send(frame)
            while True:
                r, _, _ = select.select([rx], [], [], 2.0)
                if not r:
                    break  # lost: not counted
                got = rx.recv(2048)
                if len(got) >= 46 and got[42:46] == frame[42:46] and \
                        got[12:14] == b"\x08\x00":
                    if i >= 20:
                        out.append((time.perf_counter() - t0) * 1e6)
                    break
    finally:
        stop.set()
        th.join(5)
        tx.close()
        rx.close()
    return out


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def measure(ctl: Controller, kind: str, v: Veths) -> dict:
    rate, errors = ctl.rate(kind, N_FLOWS)
    if errors:
        log(f"sdn: {errors} flow mods refused ({kind})")
    ctl.table_miss()
    r = rtt(ctl, v.host_if[0], v.host_if[1], N_RTT)
    if len(r) < N_RTT:
        log(f"sdn: {N_RTT - len(r)} of {N_RTT} round trips lost")
    ctl.clear()
    return {"rate": rate, "p50": pct(r, 0.5), "p99": pct(r, 0.99)}


def zeronf_once(tag: str) -> dict:
    with Veths(f"z{tag}") as v:
        m = Manager(TMP, ports=v.ports(),
                    # its worker polls as OVS-DPDK's PMD thread does
                    # (docs/benchmarks.md: with the default 1 ms idle
                    # back-off, a lone packet waits for the worker to wake)
                    args=["--of-flows", str(2 * N_FLOWS),
                          "--idle-sleep-us", "1"])
        ctl = Controller()
        try:
            # the manager's OpenFlow endpoint dials the controller
            m.call("of.endpoint", controllers=[f"tcp:127.0.0.1:{ctl.port}"])
            ctl.accept()
            return {k: measure(ctl, k, v) for k in KINDS}
        finally:
            ctl.close()
            m.shutdown()
            m.close()


def ovs_once(tag: str) -> dict:
    with Veths(f"o{tag}") as v:
        ctl = Controller()
        try:
            with Ovs(v.ports()) as o:
                o.start([])
                o.vsctl("set", "bridge", "br0", "protocols=OpenFlow13",
                        "fail_mode=secure",
                        "other_config:disable-in-band=true")
                o.vsctl("set-controller", "br0",
                        f"tcp:127.0.0.1:{ctl.port}")
                ctl.accept()
                ctl.clear()  # what OVS put in itself, if anything
                return {k: measure(ctl, k, v) for k in KINDS}
        finally:
            ctl.close()


def bench_sdn(runs: int) -> None:
    have_ovs = OVS_VSWITCHD.exists()
    if not have_ovs:
        log("sdn: no ovs-vswitchd-dpdk: ZeroNF alone")
    res: dict[tuple[str, str], list[dict]] = {}
    for r in range(runs):
        tag = f"{os.getpid() % 1000}{r}"
        for system, fn in (("zeronf", zeronf_once), ("ovs-dpdk", ovs_once)):
            if system == "ovs-dpdk" and not have_ovs:
                continue
            got = fn(tag)
            for kind, v in got.items():
                res.setdefault((system, kind), []).append(v)
                log(f"sdn run {r}: {system} {kind}: {v['rate']:.0f} "
                    f"flow mods/s, rtt p50 {v['p50']:.0f} us p99 "
                    f"{v['p99']:.0f} us")
    for (system, kind), vs in res.items():
        emit({"bench": "sdn", "system": system, "match": kind,
              "flows": N_FLOWS,
              "flow_mods_per_s": round(median([v["rate"] for v in vs])),
              "packet_in_rtt_p50_us": round(median([v["p50"] for v in vs]),
                                            1),
              "packet_in_rtt_p99_us": round(median([v["p99"] for v in vs]),
                                            1)})

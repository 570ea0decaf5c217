"""ZeroNF as an OpenFlow 1.3 switch (docs/sdn.md): an agent beside an
instance's manager that speaks OpenFlow to controllers and tools and the
manager's control protocol to the instance.

The wire format is os-ken's (the maintained Ryu). os-ken is a controller
library: its message classes build what controllers send and parse what
switches send, so the agent builds with them what both sides send (HELLO,
ERROR, ECHO_REPLY) and otherwise packs and unpacks with os-ken's wire
definitions, ofproto_v1_3's pack strings (OFP_SWITCH_FEATURES_PACK_STR,
OFP_PORT_PACK_STR, OFP_ROLE_REQUEST_PACK_STR, ...), never a layout of its
own. One connection is a session: the HELLO exchange (version negotiation by
bitmap, OpenFlow 1.3 only), then requests answered in the order they came,
so a BARRIER_REPLY follows everything before it. What this agent does not
do yet is refused with the error OpenFlow 1.3 names for it (section 7.4):
an unknown or unsupported message OFPET_BAD_REQUEST / OFPBRC_BAD_TYPE, an
unsupported multipart OFPBRC_BAD_MULTIPART, a message before HELLO or of
another version OFPBRC_BAD_VERSION; a HELLO without 1.3
OFPET_HELLO_FAILED / OFPHFC_INCOMPATIBLE, then the connection closes.

Ports: ZeroNF port P is OpenFlow port P + 1 (OpenFlow numbers ports from
1). The datapath id is derived from the instance's name (stable across
restarts)."""
from __future__ import annotations

import asyncio
import hashlib
import logging
import struct
import time

from os_ken.lib.pack_utils import msg_pack_into
from os_ken.ofproto import ofproto_parser
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from ..client import Client, ZeroNFError

log = logging.getLogger("zeronf.sdn")

HEADER = struct.Struct(ofp.OFP_HEADER_PACK_STR)  # version, type, length, xid


class _Datapath:
    """What os-ken's message classes need of a datapath: the protocol
    modules (and nothing of its event loop)."""
    ofproto = ofp
    ofproto_parser = parser


DP = _Datapath()


def datapath_id(instance: str) -> int:
    """64 bits from the instance's name: its switch id, the same at every
    start."""
    return int.from_bytes(hashlib.sha256(instance.encode()).digest()[:8],
                          "big") & 0x0000ffffffffffff


class Switch:
    """The instance as the agent sees it: its ports and counters, read from
    the manager when a request needs them."""

    def __init__(self, instance: str):
        self.instance = instance
        self.dpid = datapath_id(instance)
        self.miss_send_len = ofp.OFPCML_NO_BUFFER
        self.config_flags = 0
        self.role = ofp.OFPCR_ROLE_EQUAL
        self.generation: int | None = None
        self.started = time.monotonic()

    def ports(self) -> list[dict]:
        with Client(self.instance) as c:
            return c.call("port.list")["ports"]


def _mac(s: str) -> str:
    return s if s else "00:00:00:00:00:00"


class Session:
    """One OpenFlow connection."""

    def __init__(self, sw: Switch, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter):
        self.sw = sw
        self.reader = reader
        self.writer = writer
        self.hello = False

    def send(self, msg) -> None:
        """An os-ken message, its xid set (a reply's is its request's)."""
        msg.serialize()
        self.writer.write(bytes(msg.buf))

    def raw(self, mtype: int, xid: int, body: bytes = b"") -> None:
        """A message os-ken has no builder for: its header and @p body,
        packed by the caller with ofproto_v1_3's pack strings."""
        self.writer.write(HEADER.pack(ofp.OFP_VERSION, mtype,
                                      HEADER.size + len(body), xid) + body)

    def error(self, xid: int, etype: int, code: int, data: bytes) -> None:
        m = parser.OFPErrorMsg(DP, type_=etype, code=code, data=data[:64])
        m.set_xid(xid)
        self.send(m)

    async def run(self) -> None:
        # HELLO with a version bitmap of 1.3 alone (os-ken's OFPHello
        # leaves its elements out when it builds one)
        elem = bytearray()
        msg_pack_into(ofp.OFP_HELLO_ELEM_VERSIONBITMAP_HEADER_PACK_STR, elem,
                      0, ofp.OFPHET_VERSIONBITMAP,
                      ofp.OFP_HELLO_ELEM_VERSIONBITMAP_HEADER_SIZE + 4)
        self.raw(ofp.OFPT_HELLO, 0,
                 bytes(elem) + struct.pack("!I", 1 << ofp.OFP_VERSION))
        try:
            while True:
                head = await self.reader.readexactly(HEADER.size)
                version, mtype, length, xid = HEADER.unpack(head)
                if length < HEADER.size:
                    return  # no frame boundary to find again: close
                body = await self.reader.readexactly(length - HEADER.size)
                if not self.handle(version, mtype, xid, head + body):
                    return
                await self.writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            self.writer.close()

    # ---- messages ----

    def handle(self, version: int, mtype: int, xid: int, buf: bytes) -> bool:
        """Answer one message; False: close the connection."""
        if mtype == ofp.OFPT_HELLO:
            return self.on_hello(version, xid, buf)
        if not self.hello or version != ofp.OFP_VERSION:
            self.error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_VERSION,
                       buf)
            return self.hello
        handler = REQUESTS.get(mtype)
        if handler is None:
            self.error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_TYPE, buf)
            return True
        try:
            handler(self, xid, buf)
        except struct.error:  # shorter than its type's fixed part
            self.error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_LEN, buf)
        except ZeroNFError as e:
            log.warning("xid %d: the manager refused: %s", xid, e)
            self.error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_EPERM, buf)
        return True

    def on_hello(self, version: int, xid: int, buf: bytes) -> bool:
        ok = version >= ofp.OFP_VERSION
        try:
            msg = ofproto_parser.msg(DP, min(version, ofp.OFP_VERSION),
                                     ofp.OFPT_HELLO, len(buf), xid, buf)
            for e in getattr(msg, "elements", None) or []:
                if isinstance(e, parser.OFPHelloElemVersionBitmap):
                    ok = ofp.OFP_VERSION in e.versions
        except Exception:  # noqa: BLE001 - an older version's HELLO
            pass
        if not ok:
            self.error(xid, ofp.OFPET_HELLO_FAILED,
                       ofp.OFPHFC_INCOMPATIBLE,
                       b"ZeroNF speaks OpenFlow 1.3 only")
            return False
        self.hello = True
        return True

    def on_echo(self, xid: int, buf: bytes) -> None:
        r = parser.OFPEchoReply(DP, data=buf[ofp.OFP_HEADER_SIZE:])
        r.set_xid(xid)
        self.send(r)

    def on_features(self, xid: int, buf: bytes) -> None:
        body = bytearray()
        msg_pack_into(ofp.OFP_SWITCH_FEATURES_PACK_STR, body, 0, self.sw.dpid,
                      0, 1, 0, ofp.OFPC_FLOW_STATS | ofp.OFPC_TABLE_STATS |
                      ofp.OFPC_PORT_STATS, 0)  # no buffers, 1 table
        self.raw(ofp.OFPT_FEATURES_REPLY, xid, bytes(body))

    def on_get_config(self, xid: int, buf: bytes) -> None:
        body = bytearray()
        msg_pack_into(ofp.OFP_SWITCH_CONFIG_PACK_STR, body, 0,
                      self.sw.config_flags, self.sw.miss_send_len)
        self.raw(ofp.OFPT_GET_CONFIG_REPLY, xid, bytes(body))

    def on_set_config(self, xid: int, buf: bytes) -> None:
        flags, miss = struct.unpack_from(ofp.OFP_SWITCH_CONFIG_PACK_STR, buf,
                                         ofp.OFP_HEADER_SIZE)
        self.sw.config_flags, self.sw.miss_send_len = flags, miss

    def on_barrier(self, xid: int, buf: bytes) -> None:
        # Everything before it was answered already: one at a time.
        self.raw(ofp.OFPT_BARRIER_REPLY, xid)

    def on_role(self, xid: int, buf: bytes) -> None:
        role, gen = struct.unpack_from(ofp.OFP_ROLE_REQUEST_PACK_STR, buf,
                                       ofp.OFP_HEADER_SIZE)
        if role not in (ofp.OFPCR_ROLE_NOCHANGE, ofp.OFPCR_ROLE_EQUAL,
                        ofp.OFPCR_ROLE_MASTER, ofp.OFPCR_ROLE_SLAVE):
            self.error(xid, ofp.OFPET_ROLE_REQUEST_FAILED,
                       ofp.OFPRRFC_BAD_ROLE, buf)
            return
        if role in (ofp.OFPCR_ROLE_MASTER, ofp.OFPCR_ROLE_SLAVE):
            # a generation id older than the last one seen (modulo 2^64,
            # as the spec compares them) is stale
            if self.sw.generation is not None and \
                    ((gen - self.sw.generation) & (1 << 63)) != 0:
                self.error(xid, ofp.OFPET_ROLE_REQUEST_FAILED,
                           ofp.OFPRRFC_STALE, buf)
                return
            self.sw.generation = gen
        if role != ofp.OFPCR_ROLE_NOCHANGE:
            self.sw.role = role
        body = bytearray()
        msg_pack_into(ofp.OFP_ROLE_REQUEST_PACK_STR, body, 0, self.sw.role,
                      self.sw.generation or 0)  # a reply's layout too
        self.raw(ofp.OFPT_ROLE_REPLY, xid, bytes(body))

    # ---- multipart ----

    def on_multipart(self, xid: int, buf: bytes) -> None:
        mtype, _flags = struct.unpack_from(ofp.OFP_MULTIPART_REQUEST_PACK_STR,
                                           buf, ofp.OFP_HEADER_SIZE)
        handler = MULTIPART.get(mtype)
        if handler is None:
            self.error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_MULTIPART,
                       buf)
            return
        handler(self, xid, buf[ofp.OFP_MULTIPART_REQUEST_SIZE:])

    def reply(self, xid: int, mtype: int, parts: list[bytes]) -> None:
        """One multipart reply of type @p mtype holding @p parts (packed
        entries); no part is so large that it needs several."""
        head = bytearray()
        msg_pack_into(ofp.OFP_MULTIPART_REPLY_PACK_STR, head, 0, mtype, 0)
        self.raw(ofp.OFPT_MULTIPART_REPLY, xid, bytes(head) + b"".join(parts))

    def on_desc(self, xid: int, body: bytes) -> None:
        d = bytearray()
        msg_pack_into(ofp.OFP_DESC_PACK_STR, d, 0, b"ZeroNF",
                      b"ZeroNF on DPDK", b"zeronf 0.1", b"",
                      f"ZeroNF instance {self.sw.instance}".encode())
        self.reply(xid, ofp.OFPMP_DESC, [bytes(d)])

    def on_port_desc(self, xid: int, body: bytes) -> None:
        parts = []
        for p in self.sw.ports():
            state = ofp.OFPPS_LIVE if p.get("link_up") else \
                ofp.OFPPS_LINK_DOWN
            speed = int(p.get("speed_mbps") or 0) * 1000  # kb/s
            mac = bytes(int(x, 16) for x in _mac(p.get("mac", "")).split(":"))
            name = (p.get("name") or p.get("device") or
                    f"port{p['port']}").encode()[:15]
            e = bytearray()
            msg_pack_into(ofp.OFP_PORT_PACK_STR, e, 0, p["port"] + 1, mac,
                          name, 0, state, 0, 0, 0, 0, speed, speed)
            parts.append(bytes(e))
        self.reply(xid, ofp.OFPMP_PORT_DESC, parts)

    def on_port_stats(self, xid: int, body: bytes) -> None:
        (want,) = struct.unpack_from(ofp.OFP_PORT_STATS_REQUEST_PACK_STR,
                                     body)
        age = time.monotonic() - self.sw.started
        parts = []
        for p in self.sw.ports():
            if want != ofp.OFPP_ANY and want != p["port"] + 1:
                continue
            hw = p.get("hw", {})
            drops = p.get("drops", {})
            e = bytearray()
            msg_pack_into(
                ofp.OFP_PORT_STATS_PACK_STR, e, 0, p["port"] + 1,
                p.get("rx", 0), p.get("tx", 0), hw.get("ibytes", 0),
                hw.get("obytes", 0), hw.get("imissed", 0),
                sum(v for v in drops.values() if isinstance(v, int)),
                hw.get("ierrors", 0), hw.get("oerrors", 0), 0, 0, 0, 0,
                int(age), int((age % 1) * 1e9))
            parts.append(bytes(e))
        if want != ofp.OFPP_ANY and not parts:
            self.error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_PORT,
                       body)
            return
        self.reply(xid, ofp.OFPMP_PORT_STATS, parts)

    def on_table(self, xid: int, body: bytes) -> None:
        e = bytearray()
        msg_pack_into(ofp.OFP_TABLE_STATS_PACK_STR, e, 0, 0, 0, 0, 0)
        self.reply(xid, ofp.OFPMP_TABLE, [bytes(e)])


# What this agent answers, by message type; anything else is refused as
# the spec says (handle). FLOW_MOD, PACKET_OUT, GROUP_MOD and the flow,
# aggregate and group multiparts are not yet: docs/sdn.md has the matrix.
REQUESTS = {
    ofp.OFPT_ECHO_REQUEST: Session.on_echo,
    ofp.OFPT_FEATURES_REQUEST: Session.on_features,
    ofp.OFPT_GET_CONFIG_REQUEST: Session.on_get_config,
    ofp.OFPT_SET_CONFIG: Session.on_set_config,
    ofp.OFPT_BARRIER_REQUEST: Session.on_barrier,
    ofp.OFPT_ROLE_REQUEST: Session.on_role,
    ofp.OFPT_MULTIPART_REQUEST: Session.on_multipart,
}
MULTIPART = {
    ofp.OFPMP_DESC: Session.on_desc,
    ofp.OFPMP_PORT_DESC: Session.on_port_desc,
    ofp.OFPMP_PORT_STATS: Session.on_port_stats,
    ofp.OFPMP_TABLE: Session.on_table,
}


async def serve(instance: str, host: str, port: int,
                ready: asyncio.Event | None = None) -> None:
    """Listen for OpenFlow connections (tools, controllers that connect to
    switches) until cancelled."""
    sw = Switch(instance)

    async def on_conn(reader, writer):
        await Session(sw, reader, writer).run()

    server = await asyncio.start_server(on_conn, host, port)
    async with server:
        if ready is not None:
            ready.set()
        await server.serve_forever()

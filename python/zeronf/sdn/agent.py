"""ZeroNF as an OpenFlow 1.3 switch (docs/sdn.md): an agent beside an
instance's manager that speaks OpenFlow to controllers and tools and the
manager's control protocol to the instance.

The wire format is os-ken's (the maintained Ryu). os-ken is a controller
library: its message classes build what controllers send and parse what
switches send, so the agent parses with them what it can (FLOW_MOD, matches,
actions, instructions), builds with them what both sides send (HELLO,
ERROR, ECHO_REPLY, matches, instructions) and otherwise packs and unpacks
with os-ken's wire definitions, ofproto_v1_3's pack strings
(OFP_SWITCH_FEATURES_PACK_STR, OFP_PACKET_IN_PACK_STR, ...), never a layout
of its own.

The flow table is the manager's (mgr/sdn/oft.h): FLOW_MOD, the flow,
aggregate and table statistics, PACKET_OUT and the packet-ins and
flow-removed events are of.* commands; matches and actions translate as
translate.py says. FLOW_MODs that arrive together go to the manager as one
batch (each still answered with its own error), and a BARRIER_REPLY follows
everything before it: requests are answered in the order they came.

Connections: passive (--listen, tools such as ovs-ofctl, and controllers
that connect to switches) and active (--controller, the agent dials the
controller and redials it when it goes). Asynchronous messages (packet-in,
flow-removed) go to active connections by OpenFlow's default async
configuration and to passive ones that ask (SET_ASYNC, or SET_CONFIG with a
miss_send_len, as Open vSwitch's service connections). With no controller
connected: fail-secure keeps the table (packets for the controller drop),
fail-standalone hands every packet to the flow director (NORMAL) until one
is back.

Ports: ZeroNF port P is OpenFlow port P + 1 (OpenFlow numbers ports from
1); ZeroNF service S is OpenFlow port 0xf000 + S (61440 + S). The datapath id is
derived from the instance's name (stable across restarts).

Long: one handler per OpenFlow message and multipart type, each a few
lines of os-ken packing; the translation of matches and actions is
translate.py's."""
from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import logging
import signal
import struct
import threading
import time

from os_ken.lib.pack_utils import msg_pack_into
from os_ken.ofproto import ofproto_parser
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from ..client import Client, ZeroNFError
from .translate import (FIELDS, MASKABLE, OFError, actions_to_json,
                        flow_entry_actions, json_to_instructions,
                        json_to_match, match_to_json)

log = logging.getLogger("zeronf.sdn")

HEADER = struct.Struct(ofp.OFP_HEADER_PACK_STR)  # version, type, length, xid
MAX_MSG = 0xffff
BATCH = 4096        # FLOW_MODs read before they go to the manager
REQUEST_BYTES = 60000  # a request's JSON, at most (the line limit: 64 KiB)
N_BUFFERS = 256     # the manager's packet-in buffers (mgr/sdn/oft_pvt.h)
REDIAL_S = 1.0      # an active connection's retry period
PORT_WATCH_S = 1.0  # how often ports' links are looked at (PORT_STATUS)

# OpenFlow 1.3's default async configuration (section 6.1.1): for
# master/equal and for slave, the reasons each async message is sent for.
ALL_PACKET_IN = (1 << ofp.OFPR_NO_MATCH) | (1 << ofp.OFPR_ACTION) | \
    (1 << ofp.OFPR_INVALID_TTL)
ALL_PORT_STATUS = (1 << ofp.OFPPR_ADD) | (1 << ofp.OFPPR_DELETE) | \
    (1 << ofp.OFPPR_MODIFY)
ALL_FLOW_REMOVED = (1 << ofp.OFPRR_IDLE_TIMEOUT) | \
    (1 << ofp.OFPRR_HARD_TIMEOUT) | (1 << ofp.OFPRR_DELETE) | \
    (1 << ofp.OFPRR_GROUP_DELETE)
DEFAULT_ASYNC = [ALL_PACKET_IN, 0, ALL_PORT_STATUS, ALL_PORT_STATUS,
                 ALL_FLOW_REMOVED, 0]
COMMANDS = ["add", "modify", "modify_strict", "delete", "delete_strict"]


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


def _mac(s: str) -> str:
    return s if s else "00:00:00:00:00:00"


class Switch:
    """The instance as the agent sees it: a connection to its manager (the
    event loop's thread alone uses it), its sessions, the fail mode."""

    def __init__(self, instance: str, fail_mode: str = "secure",
                 controllers: bool = False):
        self.instance = instance
        self.dpid = datapath_id(instance)
        self.fail_mode = fail_mode
        self.has_controllers = controllers
        self.generation: int | None = None
        self.started = time.monotonic()
        self.client = Client(instance)
        self.sessions: set[Session] = set()
        self.n_ports = len(self.ports())
        self.mode: tuple | None = None
        self.link: dict[int, bool] = {}
        self.update_mode()

    def call(self, method: str, **params):
        try:
            return self.client.call(method, **params)
        except ZeroNFError as e:
            if e.code not in (-errno.ECONNRESET, -errno.EPIPE):
                raise
        # the manager closed this connection (it restarted): once more on
        # a new one
        self.client.close()
        self.client = Client(self.instance)
        return self.client.call(method, **params)

    def ports(self) -> list[dict]:
        ports = self.call("port.list")["ports"]
        self.n_ports = len(ports)
        return ports

    def update_mode(self) -> None:
        """The table's mode from who is connected: on while a controller
        is, or always without controllers configured (tools program it) or
        in fail-secure; packet-ins go while some session takes them."""
        ctl = any(s.active and s.hello for s in self.sessions)
        on = ctl or not self.has_controllers or self.fail_mode == "secure"
        takers = any(s.wants(0) for s in self.sessions)
        if self.mode != (on, takers):
            self.call("of.mode", on=on, controller=takers)
            self.mode = (on, takers)
            log.info("table %s, packet-ins %s", "on" if on else
                     "off (standalone: NORMAL)",
                     "to the controller" if takers else "dropped")

    def watch_ports(self) -> None:
        """PORT_STATUS (MODIFY) for each port whose link went up or down
        since the last look."""
        try:
            ports = self.ports()
        except ZeroNFError:
            return
        for p in ports:
            up = bool(p.get("link_up"))
            if self.link.get(p["port"], up) != up:
                # the reason, padding to the port (its desc offset)
                head = bytearray(ofp.OFP_PORT_STATUS_DESC_OFFSET -
                                 HEADER.size)
                head[0] = ofp.OFPPR_MODIFY
                msg = _frame(ofp.OFPT_PORT_STATUS, 0,
                             bytes(head) + port_desc(p))
                for s in list(self.sessions):
                    if s.wants(1, ofp.OFPPR_MODIFY):
                        s.writer.write(msg)
            self.link[p["port"]] = up

    def dispatch(self, events: list[dict]) -> None:
        """The manager's events to the sessions that take them."""
        for ev in events:
            if ev.get("event") == "packet_in":
                kind, reason = 0, ev["reason"]
                msg = build_packet_in(ev)
            elif ev.get("event") == "flow_removed":
                kind, reason = 2, ev["reason"]
                msg = build_flow_removed(ev)
            else:
                continue
            for s in list(self.sessions):
                if s.wants(kind, reason):
                    s.writer.write(msg)


def port_desc(p: dict) -> bytes:
    """A port of port.list as OpenFlow's ofp_port."""
    state = ofp.OFPPS_LIVE if p.get("link_up") else ofp.OFPPS_LINK_DOWN
    speed = int(p.get("speed_mbps") or 0) * 1000  # kb/s
    mac = bytes(int(x, 16) for x in _mac(p.get("mac", "")).split(":"))
    name = (p.get("name") or p.get("device") or
            f"port{p['port']}").encode()[:15]
    e = bytearray()
    msg_pack_into(ofp.OFP_PORT_PACK_STR, e, 0, p["port"] + 1, mac, name, 0,
                  state, 0, 0, 0, 0, speed, speed)
    return bytes(e)


def build_packet_in(ev: dict) -> bytes:
    body = bytearray()
    msg_pack_into("!IHBBQ", body, 0, ev["buffer_id"], ev["total_len"],
                  ev["reason"], ev["table_id"], int(ev["cookie"], 16))
    parser.OFPMatch(in_port=ev["in_port"]).serialize(body, len(body))
    body += b"\0\0" + bytes.fromhex(ev["data"])
    return _frame(ofp.OFPT_PACKET_IN, 0, bytes(body))


def build_flow_removed(ev: dict) -> bytes:
    body = bytearray()
    d = ev["duration_ns"]
    msg_pack_into("!QHBBIIHHQQ", body, 0, int(ev["cookie"], 16),
                  ev["priority"], ev["reason"], ev["table_id"],
                  d // 10**9, d % 10**9, ev["idle_timeout"],
                  ev["hard_timeout"], ev["packets"], ev["bytes"])
    json_to_match(ev["match"]).serialize(body, len(body))
    return _frame(ofp.OFPT_FLOW_REMOVED, 0, bytes(body))


def _frame(mtype: int, xid: int, body: bytes) -> bytes:
    return HEADER.pack(ofp.OFP_VERSION, mtype, HEADER.size + len(body),
                       xid) + body


class Session:
    """One OpenFlow connection."""

    def __init__(self, sw: Switch, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, active: bool = False):
        self.sw = sw
        self.reader = reader
        self.writer = writer
        self.active = active
        self.hello = False
        self.role = ofp.OFPCR_ROLE_EQUAL
        # the async configuration: active connections OpenFlow's
        # default, passive ones nothing until they ask
        self.async_cfg = list(DEFAULT_ASYNC) if active else [0] * 6
        self.miss_send_len = ofp.OFPCML_NO_BUFFER
        self.config_flags = 0
        self.pending: list[tuple[int, bytes, dict]] = []

    def wants(self, kind: int, reason: int | None = None) -> bool:
        """Takes async messages of @p kind (0 packet-in, 1 port status, 2
        flow removed): for @p reason, or for any."""
        if not self.hello:
            return False
        mask = self.async_cfg[2 * kind +
                              (1 if self.role == ofp.OFPCR_ROLE_SLAVE else 0)]
        return mask != 0 if reason is None else bool(mask & (1 << reason))

    def send(self, msg) -> None:
        """An os-ken message, its xid set (a reply's is its request's)."""
        msg.serialize()
        self.writer.write(bytes(msg.buf))

    def raw(self, mtype: int, xid: int, body: bytes = b"") -> None:
        """A message os-ken has no builder for: its header and @p body,
        packed by the caller with ofproto_v1_3's pack strings."""
        self.writer.write(_frame(mtype, xid, body))

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
        self.sw.sessions.add(self)
        buf = b""
        try:
            while True:
                chunk = await self.reader.read(1 << 18)
                if not chunk:
                    return
                buf += chunk
                # every whole message read: FLOW_MODs among them go to
                # the manager as one batch
                while len(buf) >= HEADER.size:
                    version, mtype, length, xid = HEADER.unpack_from(buf)
                    if length < HEADER.size:
                        return  # no frame boundary to find again: close
                    if len(buf) < length:
                        break
                    msg, buf = buf[:length], buf[length:]
                    if not self.handle(version, mtype, xid, msg):
                        return
                self.flush()
                await self.writer.drain()
        except ConnectionError:
            return
        finally:
            self.sw.sessions.discard(self)
            self.writer.close()
            try:
                self.sw.update_mode()
            except ZeroNFError as e:
                log.warning("the manager: %s", e)

    # ---- messages ----

    def handle(self, version: int, mtype: int, xid: int, buf: bytes) -> bool:
        """Answer one message; False: close the connection."""
        if mtype == ofp.OFPT_HELLO:
            return self.on_hello(version, xid, buf)
        if not self.hello or version != ofp.OFP_VERSION:
            self.error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_VERSION,
                       buf)
            return self.hello
        if mtype != ofp.OFPT_FLOW_MOD:
            self.flush()  # answers in order
        handler = REQUESTS.get(mtype)
        if handler is None:
            self.error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_TYPE, buf)
            return True
        if mtype in WRITES and self.role == ofp.OFPCR_ROLE_SLAVE:
            self.error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_IS_SLAVE, buf)
            return True
        try:
            handler(self, xid, buf)
        except OFError as e:
            self.error(xid, e.etype, e.code, buf)
        except (struct.error, IndexError, ValueError):
            # shorter than its type's fixed part, or fields that do not
            # parse
            self.error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_LEN, buf)
        except ZeroNFError as e:
            log.warning("xid %d: the manager refused: %s", xid, e)
            self.error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_EPERM, buf)
        except Exception:  # noqa: BLE001 - a bug here: said, not fatal
            log.exception("xid %d: type %d", xid, mtype)
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
        self.sw.update_mode()
        return True

    def on_echo(self, xid: int, buf: bytes) -> None:
        r = parser.OFPEchoReply(DP, data=buf[ofp.OFP_HEADER_SIZE:])
        r.set_xid(xid)
        self.send(r)

    def on_features(self, xid: int, buf: bytes) -> None:
        body = bytearray()
        msg_pack_into(ofp.OFP_SWITCH_FEATURES_PACK_STR, body, 0, self.sw.dpid,
                      N_BUFFERS, 1, 0, ofp.OFPC_FLOW_STATS |
                      ofp.OFPC_TABLE_STATS | ofp.OFPC_PORT_STATS, 0)
        self.raw(ofp.OFPT_FEATURES_REPLY, xid, bytes(body))

    def on_get_config(self, xid: int, buf: bytes) -> None:
        body = bytearray()
        msg_pack_into(ofp.OFP_SWITCH_CONFIG_PACK_STR, body, 0,
                      self.config_flags, self.miss_send_len)
        self.raw(ofp.OFPT_GET_CONFIG_REPLY, xid, bytes(body))

    def on_set_config(self, xid: int, buf: bytes) -> None:
        flags, miss = struct.unpack_from(ofp.OFP_SWITCH_CONFIG_PACK_STR, buf,
                                         ofp.OFP_HEADER_SIZE)
        self.config_flags, self.miss_send_len = flags, miss
        if not self.active and miss > 0 and self.async_cfg[0] == 0:
            # a passive connection asking for packet-ins (Open vSwitch's
            # service connections: ovs-ofctl monitor does this)
            self.async_cfg[0] = ALL_PACKET_IN
            self.sw.update_mode()

    def on_get_async(self, xid: int, buf: bytes) -> None:
        body = bytearray()
        msg_pack_into(ofp.OFP_ASYNC_CONFIG_PACK_STR, body, 0,
                      *self.async_cfg)
        self.raw(ofp.OFPT_GET_ASYNC_REPLY, xid, bytes(body))

    def on_set_async(self, xid: int, buf: bytes) -> None:
        self.async_cfg = list(struct.unpack_from(
            ofp.OFP_ASYNC_CONFIG_PACK_STR, buf, ofp.OFP_HEADER_SIZE))
        self.sw.update_mode()

    def on_barrier(self, xid: int, buf: bytes) -> None:
        # Everything before it was answered already (flush).
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
        if role == ofp.OFPCR_ROLE_MASTER:
            # one master: the others become slaves (section 6.3.5)
            for s in self.sw.sessions:
                if s is not self and s.role == ofp.OFPCR_ROLE_MASTER:
                    s.role = ofp.OFPCR_ROLE_SLAVE
        if role != ofp.OFPCR_ROLE_NOCHANGE:
            self.role = role
        body = bytearray()
        msg_pack_into(ofp.OFP_ROLE_REQUEST_PACK_STR, body, 0, self.role,
                      self.sw.generation or 0)  # a reply's layout too
        self.raw(ofp.OFPT_ROLE_REPLY, xid, bytes(body))
        self.sw.update_mode()

    # ---- the flow table ----

    def on_flow_mod(self, xid: int, buf: bytes) -> None:
        m = parser.OFPFlowMod.parser(DP, ofp.OFP_VERSION, ofp.OFPT_FLOW_MOD,
                                     len(buf), xid, buf)
        delete = m.command in (ofp.OFPFC_DELETE, ofp.OFPFC_DELETE_STRICT)
        if m.command >= len(COMMANDS):
            raise OFError("OFPET_FLOW_MOD_FAILED", "OFPFMFC_BAD_COMMAND")
        if m.table_id != 0 and not (delete and m.table_id == ofp.OFPTT_ALL):
            raise OFError("OFPET_FLOW_MOD_FAILED", "OFPFMFC_BAD_TABLE_ID",
                          "one table: 0")
        if delete and m.out_group != ofp.OFPG_ANY:
            return  # no entry outputs to a group: none selected
        mod = {"command": COMMANDS[m.command],
               "match": match_to_json(m.match), "priority": m.priority,
               "cookie": hex(m.cookie), "cookie_mask": hex(m.cookie_mask),
               "idle_timeout": m.idle_timeout,
               "hard_timeout": m.hard_timeout, "flags": m.flags & 0x1f,
               "out_port": m.out_port, "buffer_id": m.buffer_id}
        if m.command in (ofp.OFPFC_ADD, ofp.OFPFC_MODIFY,
                         ofp.OFPFC_MODIFY_STRICT):
            mod["actions"] = flow_entry_actions(m.instructions,
                                                self.sw.n_ports)
            if m.command == ofp.OFPFC_ADD:
                mod["cookie_mask"] = "0x0"
        self.pending.append((xid, buf, mod))
        if len(self.pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """The FLOW_MODs read so far, to the manager in one batch; each
        one's error to its sender, in order."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        res = []
        # in requests under the control socket's line limit (64 KiB)
        chunk, size = [], 0
        for i, p in enumerate(pending):
            n = len(json.dumps(p[2], separators=(",", ":")))
            if chunk and size + n > REQUEST_BYTES:
                res += self._mods(chunk)
                chunk, size = [], 0
            chunk.append(p[2])
            size += n + 1
        res += self._mods(chunk)
        for (xid, buf, _), r in zip(pending, res):
            if r is not None:
                self.error(xid, getattr(ofp, r["type"]),
                           getattr(ofp, r["code"]), buf)

    def _mods(self, mods: list[dict]) -> list:
        try:
            return self.sw.call("of.flow_mod", mods=mods)["results"]
        except ZeroNFError as e:
            log.warning("flow mods: the manager refused: %s", e)
            return [{"type": "OFPET_FLOW_MOD_FAILED",
                     "code": "OFPFMFC_UNKNOWN"}] * len(mods)

    def on_packet_out(self, xid: int, buf: bytes) -> None:
        buffer_id, in_port, alen = struct.unpack_from(
            ofp.OFP_PACKET_OUT_PACK_STR, buf, ofp.OFP_HEADER_SIZE)
        off = ofp.OFP_PACKET_OUT_SIZE
        if off + alen > len(buf):
            raise OFError("OFPET_BAD_REQUEST", "OFPBRC_BAD_LEN")
        outs = []
        while off < ofp.OFP_PACKET_OUT_SIZE + alen:
            a = parser.OFPAction.parser(buf, off)
            if a.len < 8:
                raise OFError("OFPET_BAD_ACTION", "OFPBAC_BAD_LEN")
            if not isinstance(a, parser.OFPActionOutput):
                raise OFError("OFPET_BAD_ACTION", "OFPBAC_BAD_TYPE",
                              f"{type(a).__name__} in a packet-out")
            outs.append(a)
            off += a.len
        data = buf[off:]
        params = {"in_port": in_port,
                  "outputs": actions_to_json(outs, self.sw.n_ports, False)}
        if buffer_id != ofp.OFP_NO_BUFFER:
            params["buffer_id"] = buffer_id
        else:
            params["data"] = data.hex()
        r = self.sw.call("of.packet_out", **params)
        if "error" in r:
            raise OFError(r["error"]["type"], r["error"]["code"])

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
        """A multipart reply of type @p mtype holding @p parts (packed
        entries), in as many messages as its size needs (OFPMPF_REPLY_MORE
        on all but the last)."""
        room = MAX_MSG - ofp.OFP_MULTIPART_REPLY_SIZE
        msgs, cur, size = [], [], 0
        for p in parts:
            if cur and size + len(p) > room:
                msgs.append(cur)
                cur, size = [], 0
            cur.append(p)
            size += len(p)
        msgs.append(cur)
        for i, chunk in enumerate(msgs):
            head = bytearray()
            msg_pack_into(ofp.OFP_MULTIPART_REPLY_PACK_STR, head, 0, mtype,
                          ofp.OFPMPF_REPLY_MORE if i < len(msgs) - 1 else 0)
            self.raw(ofp.OFPT_MULTIPART_REPLY, xid,
                     bytes(head) + b"".join(chunk))

    def on_desc(self, xid: int, body: bytes) -> None:
        d = bytearray()
        msg_pack_into(ofp.OFP_DESC_PACK_STR, d, 0, b"ZeroNF",
                      b"ZeroNF on DPDK", b"zeronf 0.1", b"",
                      f"ZeroNF instance {self.sw.instance}".encode())
        self.reply(xid, ofp.OFPMP_DESC, [bytes(d)])

    def on_port_desc(self, xid: int, body: bytes) -> None:
        self.reply(xid, ofp.OFPMP_PORT_DESC,
                   [port_desc(p) for p in self.sw.ports()])

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
        t = self.sw.call("of.table")
        e = bytearray()
        msg_pack_into(ofp.OFP_TABLE_STATS_PACK_STR, e, 0, 0, t["active"],
                      t["lookups"], t["matched"])
        self.reply(xid, ofp.OFPMP_TABLE, [bytes(e)])

    def on_table_features(self, xid: int, body: bytes) -> None:
        """Table 0's features; setting them is refused (the spec's
        OFPTFFC_EPERM: the table is what it is)."""
        if body:
            raise OFError("OFPET_TABLE_FEATURES_FAILED", "OFPTFFC_EPERM",
                          "the table's features are fixed")
        insts = [parser.OFPInstructionId(t) for t in (
            ofp.OFPIT_APPLY_ACTIONS, ofp.OFPIT_WRITE_ACTIONS,
            ofp.OFPIT_CLEAR_ACTIONS)]
        acts = [parser.OFPActionId(ofp.OFPAT_OUTPUT)]
        # tcp_flags is an ONF experimenter field in 1.3 (EXT-109), which
        # os-ken's OFPOxmId cannot describe: matched all the same
        fields = sorted(FIELDS - {"tcp_flags"})
        props = [
            parser.OFPTableFeaturePropInstructions(
                type_=ofp.OFPTFPT_INSTRUCTIONS, instruction_ids=insts),
            parser.OFPTableFeaturePropNextTables(
                type_=ofp.OFPTFPT_NEXT_TABLES, table_ids=[]),
            parser.OFPTableFeaturePropActions(
                type_=ofp.OFPTFPT_WRITE_ACTIONS, action_ids=acts),
            parser.OFPTableFeaturePropActions(
                type_=ofp.OFPTFPT_APPLY_ACTIONS, action_ids=acts),
            parser.OFPTableFeaturePropOxm(
                type_=ofp.OFPTFPT_MATCH,
                oxm_ids=[parser.OFPOxmId(f, hasmask=f in MASKABLE)
                         for f in fields]),
            parser.OFPTableFeaturePropOxm(
                type_=ofp.OFPTFPT_WILDCARDS,
                oxm_ids=[parser.OFPOxmId(f) for f in fields]),
            parser.OFPTableFeaturePropOxm(
                type_=ofp.OFPTFPT_WRITE_SETFIELD, oxm_ids=[]),
            parser.OFPTableFeaturePropOxm(
                type_=ofp.OFPTFPT_APPLY_SETFIELD, oxm_ids=[]),
        ]
        t = parser.OFPTableFeaturesStats(
            table_id=0, name=b"zeronf", metadata_match=0, metadata_write=0,
            config=0, max_entries=self.sw.call("of.table")["capacity"],
            properties=props)
        self.reply(xid, ofp.OFPMP_TABLE_FEATURES, [bytes(t.serialize())])

    def _flow_filter(self, body: bytes) -> dict | None:
        """A flow or aggregate stats request's selection, or None: it
        selects nothing (another table, a group)."""
        table, out_port, out_group, cookie, cookie_mask = struct.unpack_from(
            ofp.OFP_FLOW_STATS_REQUEST_0_PACK_STR, body)
        match = parser.OFPMatch.parser(
            body, struct.calcsize(ofp.OFP_FLOW_STATS_REQUEST_0_PACK_STR))
        if table not in (0, ofp.OFPTT_ALL):
            raise OFError("OFPET_BAD_REQUEST", "OFPBRC_BAD_TABLE_ID")
        if out_group != ofp.OFPG_ANY:
            return None
        return {"match": match_to_json(match), "out_port": out_port,
                "cookie": hex(cookie), "cookie_mask": hex(cookie_mask)}

    def on_flow_stats(self, xid: int, body: bytes) -> None:
        f = self._flow_filter(body)
        flows = self.sw.call("of.flows", **f)["flows"] if f else []
        parts = []
        for fl in flows:
            e = bytearray(struct.calcsize(ofp.OFP_FLOW_STATS_0_PACK_STR))
            n = struct.calcsize(ofp.OFP_FLOW_STATS_0_PACK_STR)
            n += json_to_match(fl["match"]).serialize(e, n)
            for inst in json_to_instructions(fl["actions"]):
                inst.serialize(e, n)
                n += inst.len
            d = fl["duration_ns"]
            msg_pack_into(ofp.OFP_FLOW_STATS_0_PACK_STR, e, 0, n, 0,
                          d // 10**9, d % 10**9, fl["priority"],
                          fl["idle_timeout"], fl["hard_timeout"],
                          fl["flags"], int(fl["cookie"], 16),
                          fl["packets"], fl["bytes"])
            parts.append(bytes(e[:n]))
        self.reply(xid, ofp.OFPMP_FLOW, parts)

    def on_aggregate(self, xid: int, body: bytes) -> None:
        f = self._flow_filter(body)
        a = self.sw.call("of.flows", aggregate=True, **f) if f else \
            {"packets": 0, "bytes": 0, "count": 0}
        e = bytearray()
        msg_pack_into(ofp.OFP_AGGREGATE_STATS_REPLY_PACK_STR, e, 0,
                      a["packets"], a["bytes"], a["count"])
        self.reply(xid, ofp.OFPMP_AGGREGATE, [bytes(e)])


# What this agent answers, by message type; anything else is refused as
# the spec says (handle): docs/sdn.md has the matrix.
REQUESTS = {
    ofp.OFPT_ECHO_REQUEST: Session.on_echo,
    ofp.OFPT_FEATURES_REQUEST: Session.on_features,
    ofp.OFPT_GET_CONFIG_REQUEST: Session.on_get_config,
    ofp.OFPT_SET_CONFIG: Session.on_set_config,
    ofp.OFPT_BARRIER_REQUEST: Session.on_barrier,
    ofp.OFPT_ROLE_REQUEST: Session.on_role,
    ofp.OFPT_GET_ASYNC_REQUEST: Session.on_get_async,
    ofp.OFPT_SET_ASYNC: Session.on_set_async,
    ofp.OFPT_FLOW_MOD: Session.on_flow_mod,
    ofp.OFPT_PACKET_OUT: Session.on_packet_out,
    ofp.OFPT_MULTIPART_REQUEST: Session.on_multipart,
}
# What a slave may not send (section 6.3.5)
WRITES = {ofp.OFPT_FLOW_MOD, ofp.OFPT_PACKET_OUT, ofp.OFPT_SET_CONFIG}
MULTIPART = {
    ofp.OFPMP_DESC: Session.on_desc,
    ofp.OFPMP_PORT_DESC: Session.on_port_desc,
    ofp.OFPMP_PORT_STATS: Session.on_port_stats,
    ofp.OFPMP_TABLE: Session.on_table,
    ofp.OFPMP_FLOW: Session.on_flow_stats,
    ofp.OFPMP_AGGREGATE: Session.on_aggregate,
    ofp.OFPMP_TABLE_FEATURES: Session.on_table_features,
}


def _pump(instance: str, loop: asyncio.AbstractEventLoop, sw: Switch,
          stop: threading.Event) -> None:
    """The manager's events (a long poll on a connection of its own) to
    the event loop."""
    c = None
    while not stop.is_set():
        try:
            if c is None:
                c = Client(instance)
            r = c.call("of.events", wait_ms=500, max=1024)
        except ZeroNFError as e:
            if e.code == -errno.ETIMEDOUT:
                continue
            if c is not None:
                c.close()
            c = None
            stop.wait(0.5)
            continue
        except OSError:
            c = None
            stop.wait(0.5)
            continue
        if r["events"]:
            loop.call_soon_threadsafe(sw.dispatch, r["events"])
    if c is not None:
        c.close()


async def _dial(sw: Switch, host: str, port: int) -> None:
    """An active connection to a controller, redialled while the agent
    runs."""
    while True:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError as e:
            log.info("controller %s:%d: %s", host, port, e.strerror)
            await asyncio.sleep(REDIAL_S)
            continue
        log.info("controller %s:%d connected", host, port)
        await Session(sw, reader, writer, active=True).run()
        log.info("controller %s:%d gone", host, port)
        await asyncio.sleep(REDIAL_S)


async def serve(instance: str, host: str | None, port: int | None,
                ready: asyncio.Event | None = None,
                controllers: list[tuple[str, int]] | None = None,
                fail_mode: str = "secure") -> None:
    """Listen for OpenFlow connections (tools, controllers that connect to
    switches) and dial @p controllers, until cancelled."""
    controllers = controllers or []
    sw = Switch(instance, fail_mode, bool(controllers))
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    pump = threading.Thread(target=_pump, args=(instance, loop, sw, stop),
                            daemon=True, name="zeronf-sdn-events")
    pump.start()

    async def on_conn(reader, writer):
        await Session(sw, reader, writer).run()

    async def watch():
        while True:
            sw.watch_ports()
            await asyncio.sleep(PORT_WATCH_S)

    tasks = [asyncio.create_task(_dial(sw, h, p)) for h, p in controllers]
    tasks.append(asyncio.create_task(watch()))
    server = await asyncio.start_server(on_conn, host, port) \
        if host is not None else None
    # SIGTERM and SIGINT end the agent through the finally below
    main = asyncio.current_task()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, main.cancel)
    try:
        if ready is not None:
            ready.set()
        if server is not None:
            async with server:
                await server.serve_forever()
        else:
            await asyncio.gather(*tasks)
    except asyncio.CancelledError:
        pass
    finally:
        for t in tasks:
            t.cancel()
        stop.set()
        # Leaving: no one takes packet-ins any more (they drop, counted,
        # instead of filling the event queue); standalone hands packets to
        # the flow director as without a controller; the table stays.
        try:
            sw.call("of.mode", controller=False,
                    on=not (fail_mode == "standalone" and controllers))
        except ZeroNFError:
            pass

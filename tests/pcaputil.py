"""pcap helpers for packet tests: raw frames in and out, flow keys."""

from __future__ import annotations

import struct
from collections import defaultdict
from pathlib import Path

from scapy.utils import RawPcapReader

DLT_EN10MB = 1


def write_pcap(path: Path, records, dlt: int = DLT_EN10MB) -> int:
    """Write a classic pcap. records: frames (bytes, time 0), or tuples
    (time in microseconds, frame[, length on the wire]). Returns how many
    were written."""
    n = 0
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, dlt))
        for r in records:
            us, data, wire = (0, r, len(r)) if isinstance(r, bytes) else \
                (r[0], r[1], r[2] if len(r) > 2 else len(r[1]))
            f.write(struct.pack("<IIII", us // 1_000_000, us % 1_000_000,
                                len(data), wire) + data)
            n += 1
    return n


def read_frames(path: Path) -> list[bytes]:
    with RawPcapReader(str(path)) as r:
        return [bytes(data) for data, _meta in r]


def linktype(path: Path) -> int:
    """The link type of a pcap, or of a pcapng's first interface."""
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if head[:4] != b"\x0a\x0d\x0d\x0a":
        with RawPcapReader(str(path)) as r:
            return r.linktype & 0x0FFFFFFF  # upper bits: FCS information
    end = "<" if head[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
    off = 0
    while off + 12 <= len(head):
        btype, blen = struct.unpack_from(end + "II", head, off)
        if btype == 1:  # Interface Description Block
            return struct.unpack_from(end + "H", head, off + 8)[0]
        if blen < 12:
            break
        off += blen
    raise ValueError(f"{path}: no interface description block")


def _u16(b: bytes, off: int) -> int:
    return struct.unpack_from("!H", b, off)[0]


def flow_key(frame: bytes) -> tuple:
    """Direction-independent 5-tuple of an Ethernet frame (VLANs skipped);
    non-IP frames share one key per ethertype."""
    if len(frame) < 14:
        return ("runt",)
    off, et = 14, _u16(frame, 12)
    while et in (0x8100, 0x88A8, 0x9100) and len(frame) >= off + 4:
        et, off = _u16(frame, off + 2), off + 4
    if et == 0x0800 and len(frame) >= off + 20:
        ihl = (frame[off] & 0xF) * 4
        proto = frame[off + 9]
        a, b = frame[off + 12:off + 16], frame[off + 16:off + 20]
        frag = _u16(frame, off + 6) & 0x3FFF
        sp = dp = 0
        if proto in (6, 17, 132) and not frag and len(frame) >= off + ihl + 4:
            sp, dp = _u16(frame, off + ihl), _u16(frame, off + ihl + 2)
    elif et == 0x86DD and len(frame) >= off + 40:
        proto = frame[off + 6]
        a, b = frame[off + 8:off + 24], frame[off + 24:off + 40]
        sp = dp = 0
        if proto in (6, 17, 132) and len(frame) >= off + 44:
            sp, dp = _u16(frame, off + 40), _u16(frame, off + 42)
    else:
        return ("l2", et)
    ends = sorted([(a, sp), (b, dp)])
    return (et, proto, ends[0], ends[1])


def per_flow(frames: list[bytes]) -> dict:
    flows = defaultdict(list)
    for f in frames:
        flows[flow_key(f)].append(f)
    return flows


def assert_same_per_flow(inp: list[bytes], out: list[bytes]) -> None:
    """Output holds exactly the input packets, in order within each flow."""
    assert len(out) == len(inp), f"{len(inp)} packets in, {len(out)} out"
    fi, fo = per_flow(inp), per_flow(out)
    assert fi.keys() == fo.keys(), "flow sets differ"
    for k in fi:
        assert fi[k] == fo[k], f"flow {k}: packets differ or reordered"

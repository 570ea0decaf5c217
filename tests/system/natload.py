"""Traffic for the NAT tests, run inside a client namespace: TCP
connections, UDP exchanges and ICMP echoes from given source addresses
and ports (or identifiers) to a server, each checked (the echo came back
whole), left open until a line on stdin says to close them, so that the
NAT's table can be read while they live. Prints one JSON line of results
(to stdout) when all are up, another when closed.

  python3 natload.py SERVER FLOWS_JSON
  FLOWS_JSON: [["tcp"|"udp"|"icmp", SRC_ADDR, SRC_PORT_OR_ID], ...]
  the server echoes TCP on 8080 and UDP on 5300 (natserve.py)."""

from __future__ import annotations

import json
import socket
import struct
import sys


def csum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def icmp_echo(src: str, dst: str, ident: int) -> bool:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.bind((src, 0))
    s.settimeout(5)
    body = b"zeronf-nat-%d" % ident
    hdr = struct.pack("!BBHHH", 8, 0, 0, ident, 1)
    s.sendto(struct.pack("!BBHHH", 8, 0, csum(hdr + body), ident, 1) + body,
             (dst, 0))
    try:
        while True:
            data, addr = s.recvfrom(2048)
            ihl = (data[0] & 0xF) * 4
            t, _c, _s, i, _q = struct.unpack_from("!BBHHH", data, ihl)
            if t == 0 and i == ident and data[ihl + 8:] == body:
                return addr[0] == dst
    except OSError:
        return False
    finally:
        s.close()


def main() -> int:
    server, flows = sys.argv[1], json.loads(sys.argv[2])
    keep, res = [], []
    for proto, src, port in flows:
        ok = False
        if proto == "tcp":
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((src, port))
            s.settimeout(10)
            try:
                s.connect((server, 8080))
                msg = b"hello from %s:%d" % (src.encode(), port)
                s.sendall(msg)
                ok = s.recv(len(msg)) == msg
            except OSError:
                pass
            keep.append(s)
        elif proto == "udp":
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((src, port))
            s.settimeout(5)
            msg = b"udp from %s:%d" % (src.encode(), port)
            try:
                s.sendto(msg, (server, 5300))
                ok = s.recvfrom(2048)[0] == msg
            except OSError:
                pass
            keep.append(s)
        else:
            ok = icmp_echo(src, server, port)
        res.append(ok)
    print(json.dumps({"up": res}), flush=True)
    sys.stdin.readline()
    for s in keep:
        s.close()
    print(json.dumps({"closed": len(keep)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

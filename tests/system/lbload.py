"""The load balancer tests' client, run in its namespace: commands on
stdin, one JSON line of results each on stdout.

  open VIP PORT FIRST N  N connections from source ports FIRST.., each
                         read its backend's name; kept open
  ping                   on every open one: an echo back, whole
  close                  close them all"""

from __future__ import annotations

import json
import socket
import sys


def main() -> int:
    conns: list[tuple[int, socket.socket]] = []
    for line in sys.stdin:
        w = line.split()
        if w[0] == "open":
            vip, port, first, n = w[1], int(w[2]), int(w[3]), int(w[4])
            got = []
            for p in range(first, first + n):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("0.0.0.0", p))
                s.settimeout(10)
                try:
                    s.connect((vip, port))
                    name = s.makefile("rb").readline().strip().decode()
                except OSError as e:
                    name = f"error: {e}"
                got.append([p, name])
                conns.append((p, s))
            print(json.dumps(got), flush=True)
        elif w[0] == "ping":
            ok = []
            for p, s in conns:
                msg = b"ping %d" % p
                try:
                    s.sendall(msg)
                    ok.append([p, s.recv(len(msg)) == msg])
                except OSError:
                    ok.append([p, False])
            print(json.dumps(ok), flush=True)
        elif w[0] == "close":
            for _, s in conns:
                s.close()
            conns.clear()
            print(json.dumps("closed"), flush=True)
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The NAT tests' server, run inside the public namespace: echoes TCP on
8080 and UDP on 5300, and prints each peer it saw as a JSON line
({"proto", "addr", "port"}) so the test knows what the NAT made of it."""

from __future__ import annotations

import json
import selectors
import socket
import sys


def main() -> int:
    sel = selectors.DefaultSelector()
    t = socket.socket()
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.bind(("0.0.0.0", 8080))
    t.listen(64)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("0.0.0.0", 5300))
    sel.register(t, selectors.EVENT_READ, "accept")
    sel.register(u, selectors.EVENT_READ, "udp")
    print(json.dumps({"ready": True}), flush=True)
    while True:
        for key, _ in sel.select():
            if key.data == "accept":
                c, addr = t.accept()
                print(json.dumps({"proto": "tcp", "addr": addr[0],
                                  "port": addr[1]}), flush=True)
                sel.register(c, selectors.EVENT_READ, "conn")
            elif key.data == "udp":
                data, addr = u.recvfrom(2048)
                print(json.dumps({"proto": "udp", "addr": addr[0],
                                  "port": addr[1]}), flush=True)
                u.sendto(data, addr)
            else:
                c = key.fileobj
                data = c.recv(4096)
                if not data:
                    sel.unregister(c)
                    c.close()
                else:
                    c.sendall(data)


if __name__ == "__main__":
    sys.exit(main())

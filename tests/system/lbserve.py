"""A backend of the load balancer tests, run in its namespace: answers
each TCP connection on ADDR:8080 with its NAME, then echoes."""

from __future__ import annotations

import socket
import sys
import threading


def serve(c: socket.socket, name: bytes) -> None:
    with c:
        c.sendall(name + b"\n")
        while True:
            data = c.recv(4096)
            if not data:
                return
            c.sendall(data)


def main() -> int:
    addr, name = sys.argv[1], sys.argv[2].encode()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, 8080))
    s.listen(128)
    print("ready", flush=True)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, name), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())

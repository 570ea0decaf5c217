"""A backend of the load balancer tests, run in its namespace: answers
each TCP connection on ADDR:8080 with its NAME, then echoes; with a
third argument `http`, answers one HTTP request a connection instead
(200, its NAME as the body)."""

from __future__ import annotations

import socket
import sys
import threading


def serve(c: socket.socket, name: bytes, http: bool) -> None:
    with c:
        if http:
            req = b""
            while b"\r\n\r\n" not in req:
                data = c.recv(4096)
                if not data:
                    return
                req += data
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n"
                      b"Content-Length: %d\r\n\r\n%s" % (len(name), name))
            return
        c.sendall(name + b"\n")
        while True:
            data = c.recv(4096)
            if not data:
                return
            c.sendall(data)


def main() -> int:
    addr, name = sys.argv[1], sys.argv[2].encode()
    http = sys.argv[3:] == ["http"]
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, 8080))
    s.listen(128)
    print("ready", flush=True)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, name, http),
                         daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())

"""The one owner of the control socket: CLI, tests and tools all use it.

Protocol: JSON-RPC 2.0, one object per line, over the Unix stream socket
<runtime dir>/zeronf.sock of a manager instance (docs/control-protocol.md).
Errors come back as ZeroNFError with a negative errno code.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import socket
import time
from typing import Any

PROTOCOL_MAJOR = 1


def runtime_dir(instance: str) -> str:
    """DPDK's runtime directory of an instance (as the EAL computes it)."""
    if os.getuid() == 0:
        base = "/var/run"
    else:
        base = os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", instance)


def socket_path(instance: str) -> str:
    return os.path.join(runtime_dir(instance), "zeronf.sock")


class ZeroNFError(Exception):
    """An error reply: code is a negative errno value."""

    def __init__(self, code: int, message: str):
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message

    @property
    def errno_name(self) -> str:
        return errno.errorcode.get(-self.code, str(self.code))


class Client:
    def __init__(self, instance: str = "zeronf", path: str | None = None,
                 timeout: float = 10.0):
        self.path = path or socket_path(instance)
        deadline = time.monotonic() + timeout
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            try:
                self.sock.connect(self.path)
                break
            except OSError as e:
                self.sock.close()
                # A full accept backlog answers EAGAIN: retry a while.
                if e.errno == errno.EAGAIN and time.monotonic() < deadline:
                    time.sleep(0.01)
                    continue
                raise ZeroNFError(-(e.errno or errno.ECONNREFUSED),
                                  f"cannot reach manager at {self.path}: "
                                  f"{e.strerror}") from None
        self._buf = b""
        self._ids = itertools.count(1)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def send_raw(self, line: bytes) -> dict:
        """Send one raw line and return the decoded reply (for tests)."""
        self.sock.sendall(line if line.endswith(b"\n") else line + b"\n")
        return self._read_reply()

    def _read_reply(self) -> dict:
        while b"\n" not in self._buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ZeroNFError(-errno.ECONNRESET, "manager closed the "
                                  "connection")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, method: str, **params: Any) -> Any:
        req = {"jsonrpc": "2.0", "id": next(self._ids), "method": method,
               "version": f"{PROTOCOL_MAJOR}.0"}
        if params:
            req["params"] = params
        reply = self.send_raw(json.dumps(req).encode())
        if "error" in reply:
            err = reply["error"]
            raise ZeroNFError(err.get("code", -errno.EIO),
                              err.get("message", "error"))
        return reply["result"]

    # One thin wrapper per method.
    def version(self) -> dict:
        return self.call("version")

    def status(self) -> dict:
        return self.call("status")

    def stats(self) -> dict:
        return self.call("stats")

    def nfs(self) -> list:
        return self.call("nf.list")["nfs"]

    def ports(self) -> list:
        return self.call("port.list")["ports"]

    def services(self) -> list:
        return self.call("service.list")["services"]

    def chain_get(self) -> list:
        return self.call("chain.get")["hops"]

    def chain_set(self, hops: list[str]) -> list:
        return self.call("chain.set", hops=hops)["hops"]

    def nf_stop(self, instance: int) -> dict:
        return self.call("nf.stop", instance=instance)

    def nf_call(self, instance: int, command: str,
                args: dict | None = None) -> Any:
        """A command the NF serves (nf.list shows them), e.g. the
        router's route.add."""
        if args is None:
            return self.call("nf.call", instance=instance, command=command)
        return self.call("nf.call", instance=instance, command=command,
                         args=args)

    def rx_set(self, enabled: bool) -> dict:
        return self.call("rx.set", enabled=enabled)

    def shutdown(self) -> dict:
        return self.call("shutdown")

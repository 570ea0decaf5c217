"""HTTP side of an instance: the REST API, Prometheus metrics (app.py,
metrics.py), behind the checks every request passes first (guard.py),
served by uvicorn (`zeronf -i NAME api`)."""
from __future__ import annotations

import os
from pathlib import Path


class ApiError(Exception):
    """What keeps the server from serving; `status` is the command's exit
    status (2: a bad option, 1: it could not listen)."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


def parse_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ApiError(f"--listen: HOST:PORT, not '{listen}'")
    return host.strip("[]") or "127.0.0.1", int(port)


def read_token(path: str | None) -> str | None:
    if path is None:
        return None
    p = Path(path)
    try:
        token = p.read_text().strip()
    except OSError as e:
        raise ApiError(f"--token-file {path}: {e.strerror}") from None
    if len(token) < 16:
        raise ApiError(f"--token-file {path}: a token of 16 characters "
                       f"or more")
    if p.stat().st_mode & 0o077:
        raise ApiError(f"--token-file {path}: readable by others (chmod "
                       f"600 it)")
    return token


def token_path(instance: str, port: int) -> Path:
    """Where `zeronf api` without --token-file keeps the token it made
    (mode 600, in a directory of mode 700; removed when it stops): beside
    DPDK's runtime directory, not in it (sandboxed NFs of no group have
    that one)."""
    from ..client import runtime_dir
    base = Path(runtime_dir(instance)).parent.parent
    return base / "zeronf-api" / f"{instance}-{port}.token"


def write_token(path: Path) -> str:
    """A new random token in @path, made so that no one else can read it
    or put a link there first."""
    import secrets
    token = secrets.token_urlsafe(32)
    d = path.parent
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = d.lstat()
    import stat as st_
    if not st_.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or \
            st.st_mode & 0o077:
        raise ApiError(f"{d}: not a directory of mode 700 of ours")
    tmp = d / f".{path.name}.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    os.replace(tmp, path)
    return token


def serve(instance: str, listen: str = "127.0.0.1:8080",
          token_file: str | None = None,
          cors_origins: tuple[str, ...] = (), hosts: tuple[str, ...] = (),
          max_body: int = 1 << 20, programs: tuple[str, ...] = (),
          unsandboxed: bool = False) -> None:
    import uvicorn

    from .app import create_app
    from .guard import wrap
    host, port = parse_listen(listen)
    token = read_token(token_file)
    try:
        app = create_app(instance, cors_origins, programs, unsandboxed)
    except ValueError as e:
        raise ApiError(str(e)) from None
    # Listen first: an address in use is the command's error (exit 1),
    # where it listens is said only once it does, and a token is made
    # only then (the token file of a server already on the port is its).
    import socket
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as e:
        sock.close()
        raise ApiError(f"cannot listen on {listen}: {e.strerror}",
                       status=1) from None
    made = None
    if token is None:
        made = token_path(instance, port)
        try:
            token = write_token(made)
        except OSError as e:
            sock.close()
            raise ApiError(f"{made}: {e.strerror}") from None
    shown = f"[{host}]" if ":" in host else host
    print(f"zeronf api: listening on http://{shown}:{port}/ (API /api/v1, "
          f"metrics /metrics, dashboard /); open "
          f"http://{shown}:{port}/#token=TOKEN with the token in "
          f"{made or token_file}", flush=True)
    # uvicorn stops on SIGTERM/SIGINT, then raises the signal again with
    # the handlers it found: these, so that the token it made goes too.
    import signal

    def stop(signum, frame):
        raise SystemExit(0)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    try:
        config = uvicorn.Config(wrap(app, token, host, port, hosts,
                                     max_body), log_level="warning")
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        if made is not None:
            made.unlink(missing_ok=True)

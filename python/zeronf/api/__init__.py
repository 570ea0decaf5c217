"""HTTP side of an instance: the REST API, Prometheus metrics (app.py,
metrics.py), served by uvicorn (`zeronf -i NAME api`)."""
from __future__ import annotations

import ipaddress
from pathlib import Path


class ApiError(Exception):
    pass


def parse_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ApiError(f"--listen: HOST:PORT, not '{listen}'")
    return host.strip("[]") or "127.0.0.1", int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


def serve(instance: str, listen: str = "127.0.0.1:8080",
          token_file: str | None = None,
          cors_origins: tuple[str, ...] = ()) -> None:
    import uvicorn

    from .app import create_app
    host, port = parse_listen(listen)
    token = read_token(token_file)
    if token is None and not is_loopback(host):
        raise ApiError(f"--listen {listen} is not a loopback address: a "
                       f"token is required (--token-file)")
    try:
        app = create_app(instance, token, cors_origins)
    except ValueError as e:
        raise ApiError(str(e)) from None
    uvicorn.run(app, host=host, port=port, log_level="warning")

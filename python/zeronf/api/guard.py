"""What every request to the REST API passes before anything reads its
body (an ASGI middleware, outermost): the Host header is one the server
answers to (DNS rebinding), the bearer token is right (always: without
--token-file the server makes one), a POST, PUT or PATCH says its body
is JSON (a browser sends that cross-origin only after a CORS preflight,
which names no origin here: CSRF; the token's header needs one as
well), and the body is at most max_body bytes, counted as it arrives (a
Content-Length past it is refused before one byte is read).

Paths that hold no data and change nothing (the dashboard's page and
static files, the OpenAPI description and its viewer) need no token; the
Host check holds for them too."""
from __future__ import annotations

import hmac
import ipaddress
import json
from typing import Any, Callable

PUBLIC = ("/", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc")
PUBLIC_PREFIX = ("/static/",)
# Methods that change something and carry a body: each must say it is
# JSON. A browser sends a cross-origin POST with a form's or text's type
# without asking first (a "simple request"); PUT, PATCH and DELETE it
# never sends cross-origin without a CORS preflight.
JSON_ONLY = {"POST", "PUT", "PATCH"}


def host_allowed(host: str, names: frozenset[str], port: int,
                 any_ip: bool) -> bool:
    """@host (a Host header) is one of @names, or, when @any_ip, any IP
    literal, with no port or @port. A DNS name nobody named is refused:
    a rebound name's page would otherwise be same-origin with us."""
    h = host.strip().lower()
    if h.startswith("["):  # [v6]:port
        end = h.find("]")
        if end < 0:
            return False
        name, rest = h[1:end], h[end + 1:]
    else:
        name, _, p = h.partition(":")
        rest = ":" + p if p else ""
    if rest not in ("", f":{port}"):
        return False
    if name in names:
        return True
    if not any_ip:
        return False
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


class Guard:
    def __init__(self, app: Callable, token: str, hosts: frozenset[str],
                 port: int, any_ip: bool, max_body: int):
        self.app, self.token = app, token.encode()
        self.hosts, self.port, self.any_ip = hosts, port, any_ip
        self.max_body = max_body

    async def __call__(self, scope: dict, receive: Callable,
                       send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        h: dict[bytes, bytes] = {}
        for k, v in scope["headers"]:
            h.setdefault(k.lower(), v)
        host = h.get(b"host", b"").decode("latin-1")
        if not host_allowed(host, self.hosts, self.port, self.any_ip):
            return await refuse(send, 400, "this server does not answer "
                                "to that Host (DNS rebinding?)")
        path, method = scope["path"], scope["method"]
        public = (path in PUBLIC or path.startswith(PUBLIC_PREFIX)) and \
            method in ("GET", "HEAD") or method == "OPTIONS"
        if not public:
            got = h.get(b"authorization", b"")
            if not hmac.compare_digest(got, b"Bearer " + self.token):
                return await refuse(send, 401, "a bearer token is required",
                                    [(b"www-authenticate", b"Bearer")])
            if method in JSON_ONLY:
                ctype = h.get(b"content-type", b"").split(b";")[0].strip()
                if ctype.lower() != b"application/json":
                    return await refuse(send, 415, "a request that changes "
                                        "something must say "
                                        "Content-Type: application/json")
        length = h.get(b"content-length")
        if length is not None:
            try:
                if int(length) > self.max_body:
                    return await refuse(send, 413, f"a body of at most "
                                        f"{self.max_body} bytes")
            except ValueError:
                return await refuse(send, 400, "a bad Content-Length")
        seen, started, over = 0, False, False

        async def counted() -> dict:
            # Past the limit: refused here, and the app told the client
            # left (its own answer to that is dropped below).
            nonlocal seen, started, over
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_body:
                    if not started and not over:
                        await refuse(send, 413, f"a body of at most "
                                     f"{self.max_body} bytes")
                    over = started = True
                    return {"type": "http.disconnect"}
            return msg

        async def watched(msg: dict) -> None:
            nonlocal started
            if over:
                return
            started = started or msg["type"] == "http.response.start"
            await send(msg)

        await self.app(scope, counted, watched)


async def refuse(send: Callable, status: int, message: str,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": {"message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def allowed_hosts(listen_host: str, names: tuple[str, ...]) -> \
        tuple[frozenset[str], bool]:
    """The Host names to answer to for a server on @listen_host, with
    the operator's own @names: a loopback server answers to localhost
    and the loopback literals; a server on one address, to that address;
    on every address (0.0.0.0, ::), to any IP literal (a name must be
    given). @return (names, any IP literal)."""
    h = listen_host.lower()
    got = {n.lower() for n in names} | {h}
    if h in ("localhost",) or _loopback(h):
        got |= {"localhost", "127.0.0.1", "::1"}
    return frozenset(got), h in ("0.0.0.0", "::", "")


def _loopback(h: str) -> bool:
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def wrap(app: Any, token: str, listen_host: str, port: int,
         names: tuple[str, ...] = (), max_body: int = 1 << 20) -> Guard:
    hosts, any_ip = allowed_hosts(listen_host, names)
    return Guard(app, token, hosts, port, any_ip, max_body)

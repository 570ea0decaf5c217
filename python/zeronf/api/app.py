"""The REST API of an instance (FastAPI; the OpenAPI description at
/openapi.json, browsable at /docs): the operations of the CLI over HTTP,
each one control-socket call, the Prometheus metrics at /metrics, and a
dashboard at / (static/: the chain, live charts, NF actions, rules,
events).

Security: every request but the dashboard's page and the API's description
carries `Authorization: Bearer <token>`, checked with the Host header, the
JSON content type of every change and the body's size before the body is
read (guard.py). No CORS header is sent unless origins are named, and never
`*` (OpenNetVM's console sends `*`). What it launches: an NF installed with
the manager (a bare name), a program already launched on the instance (its
deployment file's) or one named with --allow-program; sandboxed unless
--allow-unsandboxed (docs/security.md)."""
from __future__ import annotations

import errno as E
import os
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from pydantic import BaseModel, Field

from ..client import Client, ManagerUnreachable, ZeroNFError
from ..paths import find_program
from .metrics import InstanceCollector

# errno of a control reply -> HTTP status
STATUS = {E.EINVAL: 400, E.EOPNOTSUPP: 400, E.E2BIG: 413, E.ENOENT: 404,
          E.ESRCH: 404, E.EEXIST: 409, E.EBUSY: 409, E.ENOSPC: 507,
          E.ETIMEDOUT: 504, E.ECONNREFUSED: 503,
          E.EPERM: 403, E.EACCES: 403}


class NfStart(BaseModel):
    name: str
    binary: str = Field(description="an NF installed with the manager by "
                        "name (zeronf-forward), or the absolute path of a "
                        "program the instance launched already or the "
                        "server was told to allow (--allow-program)")
    service: int = Field(ge=1, le=255)
    args: list[str] = []
    replicas: int = Field(1, ge=0, le=16)
    cpus: str | None = None
    restart: str = "on-failure"
    sandbox: bool = Field(True, description="false only where the server "
                          "allows it (--allow-unsandboxed)")
    memory_mb: int | None = Field(None, ge=16)


class Scale(BaseModel):
    replicas: int = Field(ge=0, le=16)


class Hops(BaseModel):
    hops: list[str] = Field(min_length=1, max_length=32)


class Rule(BaseModel):
    match: dict[str, Any]
    chain: list[str] = Field(min_length=1, max_length=32)
    priority: int = Field(0, ge=0, le=8000)


class Flows(BaseModel):
    flows: list[dict[str, Any]] = Field(min_length=1)


class Rx(BaseModel):
    enabled: bool


class Event(BaseModel):
    type: str
    message: str


def create_app(instance: str, cors_origins: tuple[str, ...] = (),
               programs: tuple[str, ...] = (),
               unsandboxed: bool = False) -> FastAPI:
    """The API of @instance. Authentication and the other checks of every
    request are guard.py's, around it (serve)."""
    if "*" in cors_origins:
        raise ValueError("CORS: name the origins; '*' is refused")
    app = FastAPI(title=f"ZeroNF instance {instance}", version="1",
                  description=__doc__)
    if cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins),
                           allow_methods=["GET", "POST", "PUT", "DELETE"],
                           allow_headers=["Authorization", "Content-Type"])
    registry = CollectorRegistry()
    registry.register(InstanceCollector(instance))

    def call(method: str, **params) -> Any:
        try:
            with Client(instance, timeout=10.0) as c:
                return c.call(method, **params)
        except ZeroNFError as e:
            code = 503 if isinstance(e, ManagerUnreachable) else \
                STATUS.get(-e.code, 500)
            raise HTTPException(code, {"code": e.code,
                                       "errno": e.errno_name,
                                       "message": e.message}) from None

    dep: list = []  # authenticated before the app (guard.py)

    def launchable(body: NfStart) -> None:
        """What the API may launch (docs/security.md, "The API")."""
        if not body.sandbox and not unsandboxed:
            raise HTTPException(403, "sandbox: false: this server "
                                "launches sandboxed NFs only "
                                "(--allow-unsandboxed)")
        b = body.binary
        if "/" not in b:
            return  # an NF installed with the manager: it finds it
        real = os.path.realpath(b)
        ok = {os.path.realpath(p) for p in programs}
        ok |= {os.path.realpath(x["binary"]) for x in
               call("launch.list")["launched"]}
        installed = find_program(os.path.basename(b))
        if real in ok or (installed is not None and
                          real == os.path.realpath(installed)):
            return
        raise HTTPException(403, f"binary {b}: not an NF installed with "
                            f"the manager, launched on the instance, or "
                            f"allowed (--allow-program)")

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):
        detail = exc.detail if isinstance(exc.detail, dict) else \
            {"message": exc.detail}
        return JSONResponse({"error": detail}, status_code=exc.status_code,
                            headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError):
        """A body or parameter the API's models refuse: the documented
        error, as the manager's EINVAL is (not FastAPI's 422 detail)."""
        said = []
        for e in exc.errors():
            where = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
            said.append(f"{where or '(body)'}: {e.get('msg', 'invalid')}")
        return JSONResponse({"error": {"code": -E.EINVAL, "errno": "EINVAL",
                                       "message": "; ".join(said)}},
                            status_code=400)

    # The dashboard: static files holding no data (the API they call
    # is what the token protects).
    static = Path(__file__).parent / "static"
    app.mount("/static", StaticFiles(directory=static), name="static")

    @app.get("/", include_in_schema=False)
    def dashboard():
        return FileResponse(static / "index.html")

    @app.get("/metrics", dependencies=dep, include_in_schema=False)
    def metrics():
        return Response(generate_latest(registry),
                        media_type=CONTENT_TYPE_LATEST)

    v1 = "/api/v1"

    @app.get(f"{v1}/status", dependencies=dep, tags=["instance"])
    def status():
        return call("status")

    @app.get(f"{v1}/stats", dependencies=dep, tags=["instance"])
    def stats():
        return call("stats")

    @app.post(f"{v1}/rx", dependencies=dep, tags=["instance"])
    def rx(body: Rx):
        return call("rx.set", enabled=body.enabled)

    @app.get(f"{v1}/events", dependencies=dep, tags=["instance"])
    def events(since: int = 0, limit: int | None = None):
        p = {"since": since} | ({"limit": limit} if limit else {})
        return call("event.list", **p)

    @app.post(f"{v1}/events", dependencies=dep, tags=["instance"])
    def add_event(body: Event):
        return call("event.add", type=body.type, message=body.message)

    @app.get(f"{v1}/ports", dependencies=dep, tags=["instance"])
    def ports():
        return call("port.list")["ports"]

    @app.get(f"{v1}/nfs", dependencies=dep, tags=["nfs"])
    def nfs():
        return call("nf.list")["nfs"]

    @app.delete(f"{v1}/nfs/{{instance_id}}", dependencies=dep,
                tags=["nfs"])
    def nf_stop(instance_id: int):
        return call("nf.stop", instance=instance_id)

    @app.get(f"{v1}/services", dependencies=dep, tags=["nfs"])
    def services():
        return call("service.list")["services"]

    @app.get(f"{v1}/launched", dependencies=dep, tags=["nfs"])
    def launched():
        return call("launch.list")

    @app.post(f"{v1}/launched", dependencies=dep, tags=["nfs"],
              status_code=201)
    def nf_start(body: NfStart):
        launchable(body)
        return call("nf.start", **body.model_dump(exclude_none=True))

    @app.post(f"{v1}/launched/{{name}}/scale", dependencies=dep,
              tags=["nfs"])
    def nf_scale(name: str, body: Scale):
        return call("nf.scale", name=name, replicas=body.replicas)

    @app.post(f"{v1}/launched/{{name}}/restart", dependencies=dep,
              tags=["nfs"])
    def nf_restart(name: str):
        return call("nf.restart", name=name)

    @app.delete(f"{v1}/launched/{{name}}", dependencies=dep, tags=["nfs"])
    def nf_remove(name: str):
        return call("nf.remove", name=name)

    @app.get(f"{v1}/chain", dependencies=dep, tags=["steering"])
    def chain_get():
        return call("chain.get")

    @app.put(f"{v1}/chain", dependencies=dep, tags=["steering"])
    def chain_set(body: Hops):
        return call("chain.set", hops=body.hops)

    @app.get(f"{v1}/rules", dependencies=dep, tags=["steering"])
    def rules():
        return call("rule.list")["rules"]

    @app.post(f"{v1}/rules", dependencies=dep, tags=["steering"],
              status_code=201)
    def rule_add(body: Rule):
        return call("rule.add", **body.model_dump())

    @app.delete(f"{v1}/rules/{{rule_id}}", dependencies=dep,
                tags=["steering"])
    def rule_del(rule_id: int):
        return call("rule.del", id=rule_id)

    @app.get(f"{v1}/flows", dependencies=dep, tags=["steering"])
    def flows(limit: int = 1000):
        return call("flow.list", limit=limit)

    @app.post(f"{v1}/flows", dependencies=dep, tags=["steering"],
              status_code=201)
    def flow_add(body: Flows):
        return call("flow.add", flows=body.flows)

    @app.post(f"{v1}/flows/delete", dependencies=dep, tags=["steering"])
    def flow_del(body: Flows):
        return call("flow.del", flows=body.flows)

    return app

"""zeronf CLI: api: serve the instance's REST API and Prometheus metrics."""
from __future__ import annotations

import sys

from .. import api


def run_api(a) -> int:
    try:
        api.serve(a.instance, a.listen, a.token_file, tuple(a.cors_origin),
                  tuple(a.allow_host), a.max_body, tuple(a.allow_program),
                  a.allow_unsandboxed)
    except api.ApiError as e:
        print(f"zeronf: api: {e}", file=sys.stderr)
        return e.status
    return 0


def register(sub) -> None:
    p = sub.add_parser("api", help="serve the REST API (/api/v1, "
                       "/openapi.json) and Prometheus metrics (/metrics)")
    p.add_argument("--listen", default="127.0.0.1:8080",
                   help="HOST:PORT (default 127.0.0.1:8080)")
    p.add_argument("--token-file",
                   help="a file (mode 600) holding the bearer token; "
                        "without it the server makes one and says where "
                        "it is (removed when it stops)")
    p.add_argument("--allow-host", action="append", default=[],
                   metavar="NAME",
                   help="a Host name it answers to besides its address "
                        "(and localhost on loopback); repeat")
    p.add_argument("--max-body", type=int, default=1 << 20,
                   metavar="BYTES", help="the largest request body "
                   "(default 1 MiB)")
    p.add_argument("--allow-program", action="append", default=[],
                   metavar="PATH",
                   help="a program it may launch besides the NFs installed "
                        "with the manager and those the instance launched "
                        "already; repeat")
    p.add_argument("--allow-unsandboxed", action="store_true",
                   help="launch NFs without a sandbox when asked")
    p.add_argument("--cors-origin", action="append", default=[],
                   help="an origin allowed to call it from a browser "
                        "(repeat; '*' is refused)")
    p.set_defaults(run=run_api)

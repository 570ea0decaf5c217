"""zeronf CLI: api: serve the instance's REST API and Prometheus metrics."""
from __future__ import annotations

import sys

from .. import api


def run_api(a) -> int:
    try:
        api.serve(a.instance, a.listen, a.token_file, tuple(a.cors_origin))
    except api.ApiError as e:
        print(f"zeronf: api: {e}", file=sys.stderr)
        return 2
    return 0


def register(sub) -> None:
    p = sub.add_parser("api", help="serve the REST API (/api/v1, "
                       "/openapi.json) and Prometheus metrics (/metrics)")
    p.add_argument("--listen", default="127.0.0.1:8080",
                   help="HOST:PORT (default 127.0.0.1:8080); off loopback "
                        "a token is required")
    p.add_argument("--token-file",
                   help="a file (mode 600) holding the bearer token")
    p.add_argument("--cors-origin", action="append", default=[],
                   help="an origin allowed to call it from a browser "
                        "(repeat; '*' is refused)")
    p.set_defaults(run=run_api)

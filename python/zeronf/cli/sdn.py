"""zeronf CLI: sdn configures an instance's OpenFlow 1.3 endpoint (in its
manager, docs/sdn.md): the controllers it dials (--controller), where tools
and controllers that connect to switches reach it (--listen; by default
when no controller is named), the fail mode, TLS's key, certificate and
CA; `--off` closes it all; with `--status` it prints its state."""
from __future__ import annotations

import json
import os
import sys

from ..client import Client, ZeroNFError


def run_sdn(a) -> int:
    params: dict = {}
    tls = [a.private_key, a.certificate, a.ca_cert]
    if any(tls) and not all(tls):
        print("zeronf: sdn: TLS needs --private-key, --certificate and "
              "--ca-cert", file=sys.stderr)
        return 2
    if a.off:
        params["off"] = True
    elif a.controller or a.listen or a.fail or not a.status:
        params["controllers"] = a.controller or []
        listen = a.listen or (None if a.controller else "127.0.0.1:6653")
        if listen is not None:
            params["listen"] = listen
        params["fail"] = a.fail or "secure"
        if all(tls):
            # the manager reads them: absolute paths
            params["ssl"] = {k: os.path.abspath(v) for k, v in zip(
                ("private_key", "certificate", "ca_cert"), tls)}
    try:
        with Client(a.instance) as c:
            r = c.call("of.endpoint", **params)
    except ZeroNFError as e:
        print(f"zeronf: sdn: {e}", file=sys.stderr)
        return 1
    print(json.dumps(r, indent=2))
    return 0


def register(sub) -> None:
    p = sub.add_parser("sdn", help="the instance as an OpenFlow 1.3 switch "
                       "to controllers and tools (docs/sdn.md)")
    p.add_argument("--listen", metavar="[tcp:|ssl:]HOST:PORT",
                   help="where tools and controllers connect (default "
                        "127.0.0.1:6653 when no --controller is named)")
    p.add_argument("--controller", action="append",
                   metavar="tcp:|ssl:HOST:PORT",
                   help="a controller to connect to (redialled every "
                        "second); may be repeated")
    p.add_argument("--fail", choices=["secure", "standalone"],
                   help="with no controller connected: keep the flow "
                        "table, packets for the controller dropped "
                        "(secure, the default), or hand every packet to "
                        "the flow director, OpenFlow's NORMAL "
                        "(standalone)")
    p.add_argument("--private-key", metavar="PEM",
                   help="TLS (ssl: targets): this switch's private key")
    p.add_argument("--certificate", metavar="PEM",
                   help="TLS: its certificate")
    p.add_argument("--ca-cert", metavar="PEM",
                   help="TLS: the CA certificate peers' must be signed by")
    p.add_argument("--off", action="store_true",
                   help="close the endpoint (the table's entries stay; "
                        "the flow director classifies again)")
    p.add_argument("--status", action="store_true",
                   help="print the endpoint's state, change nothing")
    p.set_defaults(run=run_sdn)

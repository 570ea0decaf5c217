"""zeronf CLI: sdn runs the OpenFlow 1.3 agent of an instance (docs/sdn.md):
controllers and tools (ovs-ofctl -O OpenFlow13) connect to the address it
listens on."""
from __future__ import annotations

import asyncio
import sys


def run_sdn(a) -> int:
    from ..sdn import agent  # os-ken: imported only by this command

    host, _, port = a.listen.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        print(f"zeronf: sdn --listen {a.listen}: HOST:PORT",
              file=sys.stderr)
        return 2
    try:
        asyncio.run(agent.serve(a.instance, host, int(port)))
    except OSError as e:
        print(f"zeronf: sdn: cannot listen on {a.listen}: {e.strerror}",
              file=sys.stderr)
        return 1
    return 0


def register(sub) -> None:
    p = sub.add_parser("sdn", help="present the instance to OpenFlow 1.3 "
                       "controllers and tools (docs/sdn.md)")
    p.add_argument("--listen", default="127.0.0.1:6653", metavar="HOST:PORT",
                   help="where tools and controllers connect (default "
                        "127.0.0.1:6653)")
    p.set_defaults(run=run_sdn)

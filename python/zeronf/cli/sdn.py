"""zeronf CLI: sdn runs the OpenFlow 1.3 agent of an instance (docs/sdn.md):
it dials the controllers named (--controller) and listens for tools and
controllers that connect to switches (--listen; by default when no
controller is named)."""
from __future__ import annotations

import asyncio
import logging
import sys


def _addr(text: str, what: str) -> tuple[str, int] | None:
    host, _, port = text.removeprefix("tcp:").rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        print(f"zeronf: sdn {what} {text}: [tcp:]HOST:PORT", file=sys.stderr)
        return None
    return host.strip("[]"), int(port)


def run_sdn(a) -> int:
    from ..sdn import agent  # os-ken: imported only by this command

    controllers = []
    for c in a.controller or []:
        addr = _addr(c, "--controller")
        if addr is None:
            return 2
        controllers.append(addr)
    listen = a.listen or (None if controllers else "127.0.0.1:6653")
    host = port = None
    if listen is not None:
        addr = _addr(listen, "--listen")
        if addr is None:
            return 2
        host, port = addr
    logging.basicConfig(level=logging.INFO, format="zeronf sdn: %(message)s")
    try:
        asyncio.run(agent.serve(a.instance, host, port,
                                controllers=controllers, fail_mode=a.fail))
    except OSError as e:
        print(f"zeronf: sdn: cannot listen on {listen}: {e.strerror}",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


def register(sub) -> None:
    p = sub.add_parser("sdn", help="present the instance to OpenFlow 1.3 "
                       "controllers and tools (docs/sdn.md)")
    p.add_argument("--listen", metavar="HOST:PORT",
                   help="where tools and controllers connect (default "
                        "127.0.0.1:6653 when no --controller is named)")
    p.add_argument("--controller", action="append", metavar="tcp:HOST:PORT",
                   help="a controller to connect to (again and again); "
                        "may be repeated")
    p.add_argument("--fail", choices=["secure", "standalone"],
                   default="secure",
                   help="with no controller connected: keep the flow "
                        "table, packets for the controller dropped "
                        "(secure, the default), or hand every packet to "
                        "the flow director, OpenFlow's NORMAL "
                        "(standalone)")
    p.set_defaults(run=run_sdn)

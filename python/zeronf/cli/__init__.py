"""zeronf: run and operate ZeroNF instances.

Each module of this package registers its own subcommands (register(sub))
and runs them (a `run(args) -> exit status` set as the parser default):
basic (the manager's methods one by one), deploy (up, down, apply,
validate), nf (launched NFs, logs), vm (NFs in VMs), rules (flows and
wildcard rules), top, api (the REST API and metrics), sdn (the OpenFlow
agent), fabric (chains across hosts), k8s, firewall (a firewall rule
file as nftables).
Exit status: 0 done, 1 refused or failed (one line saying why), 2 bad
usage or input."""
from __future__ import annotations

import argparse
import os
import sys

from ..client import ZeroNFError
from . import api, basic, deploy, fabric, firewall, k8s, nf, rules, sdn, \
    top, vm

MODULES = (deploy, basic, nf, vm, rules, top, api, sdn, fabric, k8s,
           firewall)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="zeronf", description="Run and operate ZeroNF instances.")
    ap.add_argument("-i", "--instance",
                    default=os.environ.get("ZERONF_INSTANCE", "zeronf"),
                    help="instance name (default $ZERONF_INSTANCE or "
                         "'zeronf')")
    ap.add_argument("--as", dest="as_tenant", metavar="TENANT",
                    default=os.environ.get("ZERONF_TENANT") or None,
                    help="as tenant TENANT, through its control socket: "
                         "its own NFs and chain only (default "
                         "$ZERONF_TENANT)")
    ap.add_argument("--json", action="store_true", help="raw JSON output")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    for m in MODULES:
        m.register(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # What follows "--" is an NF's own options (nf start, vm start), in
    # whatever order the command's own options came before it.
    tail = argv[argv.index("--") + 1:] if "--" in argv else None
    head = argv[:argv.index("--")] if tail is not None else argv
    # --json anywhere before it (zeronf status --json, zeronf --json status)
    as_json = "--json" in head
    head = [x for x in head if x != "--json"]
    a = parser().parse_args(head)
    if tail is not None:
        if isinstance(getattr(a, "args", None), list):
            a.args += tail
        else:
            a = parser().parse_args(head + ["--"] + tail)
    a.json = as_json
    if a.as_tenant:
        os.environ["ZERONF_TENANT"] = a.as_tenant  # client.socket_path
    try:
        return a.run(a)
    except ZeroNFError as e:
        print(f"zeronf: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # zeronf ... | head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0

"""zeronf firewall-nft: a firewall NF's rule file as nftables
(docs/nfs/firewall.md)."""
from __future__ import annotations

import sys

from ..firewall import RuleError, to_nft


def run(a) -> int:
    try:
        with open(a.file, encoding="utf-8") as f:
            text = f.read()
        sys.stdout.write(to_nft(text, table=a.table, hook=a.hook))
    except (OSError, UnicodeDecodeError) as e:
        print(f"zeronf: {a.file}: {e}", file=sys.stderr)
        return 1
    except RuleError as e:
        print(f"zeronf: {a.file}: {e}", file=sys.stderr)
        return 2
    return 0


def register(sub) -> None:
    p = sub.add_parser("firewall-nft", help="a firewall NF's rule file as "
                       "an nftables script (nft -f), on stdout")
    p.add_argument("file")
    p.add_argument("--table", default="zeronf_fw",
                   help="the inet table's name (default zeronf_fw)")
    p.add_argument("--hook", default="forward",
                   choices=("prerouting", "input", "forward", "output",
                            "postrouting"),
                   help="the base chain's hook (default forward)")
    p.set_defaults(run=run)

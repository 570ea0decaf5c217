"""The firewall NF's rule files (nfs/firewall, docs/nfs/firewall.md) as
an nftables rule set: the same rules for the Linux kernel, which the
firewall's ground-truth test runs side by side with the NF, and which an
operator can load to compare or to fall back on (`zeronf firewall-nft`).

The grammar is the NF's (nfs/firewall/fw_rules.c); this reads it again
rather than sharing code, and the test compares the two on every packet.
"""

from __future__ import annotations

import ipaddress
import shlex

PROTOS = {"tcp": 6, "udp": 17, "icmp": 1, "icmpv6": 58, "ipv6-icmp": 58,
          "sctp": 132, "udplite": 136, "dccp": 33, "gre": 47, "esp": 50,
          "ah": 51, "igmp": 2}
PORTED = {6, 17, 132, 136, 33}
ICMP4 = {"echo-reply": (0, None), "destination-unreachable": (3, None),
         "source-quench": (4, None), "redirect": (5, None),
         "echo-request": (8, None), "router-advertisement": (9, None),
         "router-solicitation": (10, None), "time-exceeded": (11, None),
         "parameter-problem": (12, None), "timestamp-request": (13, None),
         "timestamp-reply": (14, None), "network-unreachable": (3, 1),
         "host-unreachable": (3, 2), "port-unreachable": (3, 4),
         "fragmentation-needed": (3, 5)}
ICMP6 = {"destination-unreachable": (1, None), "packet-too-big": (2, None),
         "time-exceeded": (3, None), "parameter-problem": (4, None),
         "echo-request": (128, None), "echo-reply": (129, None),
         "router-solicitation": (133, None),
         "router-advertisement": (134, None),
         "neighbour-solicitation": (135, None),
         "neighbor-solicitation": (135, None),
         "neighbour-advertisement": (136, None),
         "neighbor-advertisement": (136, None)}
FLAGS = {"FIN": 0x01, "SYN": 0x02, "RST": 0x04, "PSH": 0x08, "ACK": 0x10,
         "URG": 0x20, "ECE": 0x40, "CWR": 0x80, "ALL": 0xFF, "NONE": 0}
FLAG_NAMES = [(0x01, "fin"), (0x02, "syn"), (0x04, "rst"), (0x08, "psh"),
              (0x10, "ack"), (0x20, "urg"), (0x40, "ecn"), (0x80, "cwr")]
STATES = {"NEW": "new", "ESTABLISHED": "established", "RELATED": "related",
          "INVALID": "invalid", "UNTRACKED": "untracked"}


class RuleError(ValueError):
    pass


def _flags(s: str) -> int:
    v = 0
    for f in s.split(","):
        if f.upper() not in FLAGS:
            raise RuleError(f"unknown TCP flag {f!r}")
        v |= FLAGS[f.upper()]
    return v


def _nft_flags(v: int) -> str:
    names = [n for b, n in FLAG_NAMES if v & b]
    return "|".join(names) if names else "0x0"


def _ports(s: str) -> str:
    lo, sep, hi = s.partition(":")
    lo = int(lo) if lo else 0
    hi = int(hi) if hi else 65535 if sep else lo
    return str(lo) if lo == hi and not sep else f"{lo}-{hi}"


def rule_to_nft(words: list[str]) -> tuple[str | None, str | None]:
    """One rule line's words: ("policy", verdict) for -P, else
    (nft statement, None)."""
    if words[0] in ("-P", "--policy"):
        return None, words[1].lower()
    fam = None
    proto = None
    exprs: list[str] = []
    l4: list[str] = []
    verdict = None
    i = 0
    while i < len(words):
        o = words[i]
        a = words[i + 1] if i + 1 < len(words) else None
        i += 2
        if o in ("-4", "-6"):
            fam = int(o[1])
            i -= 1
        elif o == "--syn":
            l4.append("tcp flags & (fin|syn|rst|ack) == syn")
            i -= 1
        elif o in ("-p", "--protocol"):
            proto = None if a == "all" else PROTOS.get(a.lower(), None)
            if proto is None and a != "all":
                proto = int(a) or None
        elif o in ("-s", "--source", "-d", "--destination"):
            net = ipaddress.ip_network(a, strict=False)
            fam = net.version
            key = "saddr" if o in ("-s", "--source") else "daddr"
            exprs.append(f"{'ip' if fam == 4 else 'ip6'} {key} {net}")
        elif o in ("--sport", "--source-port"):
            l4.append(f"th sport {_ports(a)}")
        elif o in ("--dport", "--destination-port"):
            l4.append(f"th dport {_ports(a)}")
        elif o in ("--icmp-type", "--icmpv6-type"):
            v6 = o == "--icmpv6-type"
            names = ICMP6 if v6 else ICMP4
            if a.lower() in names:
                t, c = names[a.lower()]
            else:
                t, _, c = a.partition("/")
                t, c = int(t), (int(c) if c else None)
            kw = "icmpv6" if v6 else "icmp"
            l4.append(f"{kw} type {t}")
            if c is not None:
                l4.append(f"{kw} code {c}")
        elif o == "--tcp-flags":
            mask, comp = _flags(a), _flags(words[i])
            i += 1
            l4.append(f"tcp flags & ({_nft_flags(mask)}) == "
                      f"{_nft_flags(comp) if comp else '0x0'}")
        elif o in ("--ctstate", "--state"):
            states = ",".join(STATES[s.upper()] for s in a.split(","))
            exprs.insert(0, f"ct state {{ {states} }}")
        elif o in ("-m", "--match"):
            pass
        elif o in ("-j", "--jump"):
            verdict = a.lower()
        else:
            raise RuleError(f"unknown option {o!r}")
    if verdict is None:
        raise RuleError("no verdict")
    if proto == 1:
        fam = 4
    if proto == 58:
        fam = 6
    head = []
    if fam is not None:
        head.append(f"meta nfproto ipv{fam}")
    if proto is not None:
        head.append(f"meta l4proto {proto}")
    return " ".join(head + exprs + l4 + [verdict]), None


def to_nft(text: str, table: str = "zeronf_fw",
           hook: str = "forward", priority: int = 0) -> str:
    """The rule file @text as an nft script: a table of family inet with
    one base chain on @hook."""
    policy = "accept"
    stmts = []
    for n, line in enumerate(text.splitlines(), 1):
        words = shlex.split(line.split("#", 1)[0])
        if not words:
            continue
        try:
            stmt, pol = rule_to_nft(words)
        except (RuleError, ValueError, IndexError, KeyError) as e:
            raise RuleError(f"line {n}: {e}") from None
        if pol is not None:
            policy = pol
        else:
            stmts.append(stmt)
    body = "\n".join(f"    {s}" for s in stmts)
    return (f"table inet {table} {{\n"
            f"  chain filter {{\n"
            f"    type filter hook {hook} priority {priority}; "
            f"policy {policy};\n{body}\n  }}\n}}\n")

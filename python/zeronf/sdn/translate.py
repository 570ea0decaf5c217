"""OpenFlow 1.3 matches and actions to the manager's OpenFlow table and back
(docs/sdn.md "Matches and actions").

The manager's table (mgr/sdn/oft.h, the of.* commands) keeps matches by
OXM field name ("in_port", "eth_dst", "ipv4_src", "tcp_dst", ...), masked
fields as "value/mask", and an entry's actions as one of: a ZeroNF chain
(services, then a port or not), the controller, NORMAL (the flow director's
pipeline) or drop. An OpenFlow action list maps onto that as follows, and
anything else is refused with the error the spec names:

- no output: drop;
- output:CONTROLLER alone: a packet-in (its max_len);
- output:NORMAL alone: the flow director;
- output:P for ZeroNF port P - 1, after outputs to services (OpenFlow port
  0xf000 + S (61440 + S) is ZeroNF service S): the chain [svc:S..., port:P-1]; the
  services come in order and the port ends it (OpenFlow would copy the
  packet to each output: ZeroNF chains pass one packet through its steps).
"""
from __future__ import annotations

import ipaddress

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

SERVICE_PORT_BASE = 0xf000  # OpenFlow port of ZeroNF service S: base + S


class OFError(Exception):
    """An OpenFlow error to send: type and code (ofproto_v1_3 names)."""

    def __init__(self, etype: str, code: str, message: str = ""):
        super().__init__(message or f"{etype}/{code}")
        self.etype = getattr(ofp, etype)
        self.code = getattr(ofp, code)


# OXM fields the table matches (the manager checks values and
# prerequisites again: any client may call it).
FIELDS = {"in_port", "eth_dst", "eth_src", "eth_type", "vlan_vid",
          "ip_proto", "ipv4_src", "ipv4_dst", "ipv6_src", "ipv6_dst",
          "tcp_src", "tcp_dst", "udp_src", "udp_dst", "sctp_src", "sctp_dst",
          "icmpv4_type", "icmpv4_code", "icmpv6_type", "icmpv6_code",
          "tcp_flags", "arp_op", "arp_spa", "arp_tpa"}
MASKABLE = {"eth_dst", "eth_src", "vlan_vid", "ipv4_src", "ipv4_dst",
            "ipv6_src", "ipv6_dst", "tcp_flags", "arp_spa", "arp_tpa"}


def match_to_json(match: parser.OFPMatch) -> dict:
    out = {}
    for name, value in match._fields2:  # os-ken's (name, value|(v, m))
        if name not in FIELDS:
            raise OFError("OFPET_BAD_MATCH", "OFPBMC_BAD_FIELD",
                          f"{name}: not a field this switch matches")
        if isinstance(value, tuple):
            v, m = value
            if isinstance(v, int):
                out[name] = f"{v:#x}/{m:#x}"
            else:
                out[name] = f"{v}/{m}"
        else:
            out[name] = value
    return out


def _masked(name: str, text: str):
    """The manager's "value/mask" (or "addr/len") back to os-ken's
    (value, mask)."""
    v, m = text.split("/", 1)
    if name in ("ipv4_src", "ipv4_dst", "arp_spa", "arp_tpa",
                "ipv6_src", "ipv6_dst"):
        if m.isdigit():
            net = ipaddress.ip_network(f"{v}/{m}", strict=False)
            m = str(net.netmask)
        return (v, m)
    if name in ("eth_src", "eth_dst"):
        return (v, m)
    return (int(v, 0), int(m, 0))


def json_to_match(d: dict) -> parser.OFPMatch:
    kw = {}
    for name, value in d.items():
        kw[name] = _masked(name, value) if isinstance(value, str) and \
            "/" in value else value
    return parser.OFPMatch(**kw)


def _outputs(instructions) -> list:
    """The output actions of a flow entry's instructions, in order."""
    outs = []
    for inst in instructions:
        if isinstance(inst, parser.OFPInstructionActions):
            if inst.type == ofp.OFPIT_CLEAR_ACTIONS:
                continue  # one table: no action set carried on
            for a in inst.actions:
                if isinstance(a, parser.OFPActionOutput):
                    outs.append(a)
                elif isinstance(a, parser.OFPActionGroup):
                    raise OFError("OFPET_BAD_ACTION", "OFPBAC_BAD_OUT_GROUP",
                                  "groups: not yet (docs/sdn.md)")
                else:
                    raise OFError("OFPET_BAD_ACTION", "OFPBAC_BAD_TYPE",
                                  f"{type(a).__name__}: not an action "
                                  "this switch does (docs/sdn.md)")
        elif isinstance(inst, parser.OFPInstructionGotoTable):
            raise OFError("OFPET_BAD_INSTRUCTION", "OFPBIC_BAD_TABLE_ID",
                          "one table")
        else:
            raise OFError("OFPET_BAD_INSTRUCTION", "OFPBIC_UNSUP_INST",
                          f"{type(inst).__name__}: not supported")
    return outs


def actions_to_json(outs: list, n_ports: int, flow_entry: bool) -> list:
    """Output actions as the manager's: one action object for a flow
    entry (a list of one), one per output for a packet-out (each gets its
    copy there)."""
    def port_step(p: int) -> str | None:
        if 1 <= p <= n_ports:
            return f"port:{p - 1}"
        if SERVICE_PORT_BASE < p <= SERVICE_PORT_BASE + 255:
            return f"svc:{p - SERVICE_PORT_BASE}"
        return None

    if not flow_entry:
        res = []
        for a in outs:
            named = {ofp.OFPP_FLOOD: "flood", ofp.OFPP_ALL: "all",
                     ofp.OFPP_IN_PORT: "in_port", ofp.OFPP_TABLE: "table",
                     ofp.OFPP_NORMAL: "normal"}
            if a.port in named:
                res.append({"type": named[a.port]})
                continue
            step = port_step(a.port)
            if step is None:
                raise OFError("OFPET_BAD_ACTION", "OFPBAC_BAD_OUT_PORT",
                              f"output:{a.port}: no such port")
            res.append({"type": "chain", "steps": [step]})
        return res
    if not outs:
        return [{"type": "drop"}]
    if len(outs) == 1 and outs[0].port == ofp.OFPP_CONTROLLER:
        return [{"type": "controller", "max_len": outs[0].max_len}]
    if len(outs) == 1 and outs[0].port == ofp.OFPP_NORMAL:
        return [{"type": "normal"}]
    steps = []
    for i, a in enumerate(outs):
        step = port_step(a.port)
        last = i == len(outs) - 1
        if step is None or (step.startswith("port:") and not last):
            raise OFError("OFPET_BAD_ACTION", "OFPBAC_BAD_OUT_PORT",
                          f"output:{a.port}: a flow entry outputs to "
                          "services, then at most one port (docs/sdn.md)")
        steps.append(step)
    return [{"type": "chain", "steps": steps}]


def flow_entry_actions(instructions, n_ports: int) -> dict:
    return actions_to_json(_outputs(instructions), n_ports, True)[0]


def json_to_instructions(a: dict) -> list:
    """The manager's action object back to OpenFlow instructions."""
    t = a.get("type")
    if t == "drop":
        return []
    if t == "controller":
        acts = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER,
                                       a.get("max_len", 0xffff))]
    elif t == "normal":
        acts = [parser.OFPActionOutput(ofp.OFPP_NORMAL, 0)]
    else:
        acts = []
        for s in a.get("steps", []):
            kind, _, n = s.partition(":")
            if kind == "port":
                acts.append(parser.OFPActionOutput(int(n) + 1, 0))
            elif kind == "svc":
                acts.append(parser.OFPActionOutput(
                    SERVICE_PORT_BASE + int(n), 0))
    return [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, acts)]

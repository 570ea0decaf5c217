"""A custom os-ken application for the SDN tests (test_sdn_traffic.py): a
learning switch, as os-ken's simple_switch_13, that also steers two kinds
of traffic through ZeroNF services on their way: TCP to or from port 5001
through service 1 (DPI), UDP to port 5002 through service 2 (a filter).
ZeroNF service S is OpenFlow port 0xf000 + S (docs/sdn.md): an entry's
outputs to services come first and its output to a port ends it."""
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER
from os_ken.controller.handler import set_ev_cls
from os_ken.lib.packet import ethernet, packet
from os_ken.ofproto import ofproto_v1_3

SERVICE_PORT = 0xf000


class Steer13(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mac_to_port = {}

    def add_flow(self, dp, priority, match, actions):
        p = dp.ofproto_parser
        inst = [p.OFPInstructionActions(dp.ofproto.OFPIT_APPLY_ACTIONS,
                                        actions)]
        dp.send_msg(p.OFPFlowMod(datapath=dp, priority=priority,
                                 match=match, instructions=inst))

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        dp = ev.msg.datapath
        p, o = dp.ofproto_parser, dp.ofproto
        self.add_flow(dp, 0, p.OFPMatch(),
                      [p.OFPActionOutput(o.OFPP_CONTROLLER,
                                         o.OFPCML_NO_BUFFER)])

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in(self, ev):
        msg = ev.msg
        dp = msg.datapath
        p, o = dp.ofproto_parser, dp.ofproto
        in_port = msg.match["in_port"]
        eth = packet.Packet(msg.data).get_protocols(ethernet.ethernet)[0]
        table = self.mac_to_port.setdefault(dp.id, {})
        table[eth.src] = in_port
        out = table.get(eth.dst, o.OFPP_FLOOD)
        if out != o.OFPP_FLOOD:
            to = p.OFPActionOutput(out)
            svc = {n: p.OFPActionOutput(SERVICE_PORT + n) for n in (1, 2)}
            self.add_flow(dp, 1, p.OFPMatch(in_port=in_port,
                                            eth_dst=eth.dst), [to])
            for f in (dict(ip_proto=6, tcp_dst=5001),
                      dict(ip_proto=6, tcp_src=5001)):
                self.add_flow(dp, 10, p.OFPMatch(
                    in_port=in_port, eth_dst=eth.dst, eth_type=0x800, **f),
                    [svc[1], to])
            self.add_flow(dp, 10, p.OFPMatch(
                in_port=in_port, eth_dst=eth.dst, eth_type=0x800,
                ip_proto=17, udp_dst=5002), [svc[2], to])
        data = msg.data if msg.buffer_id == o.OFP_NO_BUFFER else None
        dp.send_msg(p.OFPPacketOut(datapath=dp, buffer_id=msg.buffer_id,
                                   in_port=in_port,
                                   actions=[p.OFPActionOutput(out)],
                                   data=data))

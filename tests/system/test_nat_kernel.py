"""The NAT NF against the Linux kernel's masquerade: the same TCP, UDP
and ICMP flows from two private addresses (some with the same source
port or identifier to the same server: a clash; one from a privileged
port) through a kernel router (nftables masquerade) and through ZeroNF's
NAT NF (a bump in the wire between two namespaces), each flow checked
end to end (its echo came back whole), and the NF's translations
compared with the kernel's conntrack table while the flows live: the
same public source port (or identifier) wherever the kernel kept the
original, a different one wherever it changed it, none shared."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from harness import wait_for
from netns import Host, no_offloads, sh, unique_tag

HERE = Path(__file__).resolve().parent
PUBLIC, SERVER = "198.51.100.1", "198.51.100.2"
FLOWS = [["tcp", "10.0.0.2", 40000], ["tcp", "10.0.0.3", 40000],
         ["tcp", "10.0.0.2", 40001], ["tcp", "10.0.0.3", 800],
         ["udp", "10.0.0.2", 5353], ["udp", "10.0.0.3", 5353],
         ["udp", "10.0.0.3", 6000],
         ["icmp", "10.0.0.2", 777], ["icmp", "10.0.0.3", 777]]


def mac(h: Host, dev: str) -> str:
    out = h.run("ip", "-o", "link", "show", dev).stdout
    return out.split("link/ether ")[1].split()[0]


def load(cli: Host, srv: Host):
    """Server up, flows up: (the load process, its 'up' results, the
    server process)."""
    serve = srv.popen(sys.executable, str(HERE / "natserve.py"))
    assert json.loads(serve.stdout.readline()) == {"ready": True}
    p = cli.popen(sys.executable, str(HERE / "natload.py"), SERVER,
                  json.dumps(FLOWS), stdin=__import__("subprocess").PIPE)
    line = p.stdout.readline()
    assert line, p.stderr.read()
    return p, json.loads(line)["up"], serve


def finish(p, serve) -> None:
    p.stdin.write("\n")
    p.stdin.flush()
    assert json.loads(p.stdout.readline())["closed"] > 0
    p.wait(timeout=30)
    serve.kill()
    serve.wait()


def kernel_translations(tag: str) -> dict:
    """The flows through a kernel router with masquerade: proto, source
    address and port (identifier) -> the public port (identifier)."""
    cli, rtr, srv = (Host(f"{tag}c", "10.0.0.2"), Host(f"{tag}r", "10.0.0.1"),
                     Host(f"{tag}s", SERVER))
    try:
        sh("ip", "link", "add", f"zk{tag}a", "type", "veth", "peer", "name",
           f"zk{tag}b")
        sh("ip", "link", "add", f"zk{tag}c", "type", "veth", "peer", "name",
           f"zk{tag}d")
        cli.adopt(f"zk{tag}a")
        cli.run("ip", "addr", "add", "10.0.0.3/24", "dev", f"zk{tag}a")
        cli.run("ip", "route", "add", "default", "via", "10.0.0.1")
        rtr.adopt(f"zk{tag}b")
        sh("ip", "link", "set", f"zk{tag}c", "netns", rtr.ns)
        rtr.run("ip", "addr", "add", f"{PUBLIC}/24", "dev", f"zk{tag}c")
        rtr.run("ip", "link", "set", f"zk{tag}c", "up")
        no_offloads(f"zk{tag}c", rtr.run)
        srv.adopt(f"zk{tag}d")
        rtr.run("sysctl", "-qw", "net.ipv4.ip_forward=1")
        rtr.run("nft", "add table ip nat; add chain ip nat post { type nat "
                "hook postrouting priority 100; }; add rule ip nat post "
                f"ip saddr 10.0.0.0/24 oifname zk{tag}c masquerade")
        p, up, serve = load(cli, srv)
        assert all(up), up
        table = rtr.run("conntrack", "-L", "-f", "ipv4").stdout
        finish(p, serve)
    finally:
        for h in (cli, rtr, srv):
            h.close()
    out = {}
    for line in table.splitlines():
        proto = line.split()[0]
        srcs = re.findall(r"src=(\S+)", line)
        if proto in ("tcp", "udp"):
            sp = re.findall(r"sport=(\d+)", line)
            dp = re.findall(r"dport=(\d+)", line)
            out[(proto, srcs[0], int(sp[0]))] = int(dp[1])
        elif proto == "icmp":
            ids = re.findall(r"id=(\d+)", line)
            out[(proto, srcs[0], int(ids[0]))] = int(ids[1])
    return out


def test_nat_translates_as_the_kernels_masquerade(managers):
    tag = unique_tag(7)
    want = kernel_translations(tag)
    flows = {(p, a, port) for p, a, port in FLOWS}
    assert flows <= set(want), (flows, want)
    # the kernel kept some ports and changed others: both cases are here
    kept = {f for f in flows if want[f] == f[2]}
    assert kept and kept != flows

    cli, srv = Host(f"{tag}x", "10.0.0.2"), Host(f"{tag}y", SERVER)
    try:
        pc, ps = cli.attach_veth(), srv.attach_veth()
        cli.run("ip", "addr", "add", "10.0.0.3/24", "dev", f"zh{cli.tag}")
        cli.run("ip", "route", "add", f"{SERVER}/32", "dev", f"zh{cli.tag}")
        # a bump in the wire: each side reaches the other's MAC directly
        cli.run("ip", "neigh", "add", SERVER, "lladdr",
                mac(srv, f"zh{srv.tag}"), "dev", f"zh{cli.tag}")
        srv.run("ip", "neigh", "add", PUBLIC, "lladdr",
                mac(cli, f"zh{cli.tag}"), "dev", f"zh{srv.tag}")
        m = managers(ports=[f"net_af_packet0,iface={pc}",
                            f"net_af_packet1,iface={ps}"], chain="1")
        nf = m.start_nf("nat", 1, nf_args=["--snat",
                                           f"10.0.0.0/24={PUBLIC}"])
        m.call("chain.set", hops=["svc:1", "port:1"], port=0)
        m.call("chain.set", hops=["svc:1", "port:0"], port=1)
        p, up, serve = load(cli, srv)
        assert all(up), list(zip(FLOWS, up))
        table = m.call("nf.call", instance=nf.instance, command="nat.list",
                       args={"max": 40})
        finish(p, serve)
        # published once a tick
        counters = wait_for(lambda: (lambda c: c if c["translated_in"] > 0
                                     else None)(
            m.call("nf.list")["nfs"][0]["counters"]), 30, "counters")
    finally:
        cli.close()
        srv.close()
    got = {}
    for s in table["sessions"]:
        name = {6: "tcp", 17: "udp", 1: "icmp"}[s["proto"]]
        assert s["xlat"]["src"] == PUBLIC
        got[(name, s["orig"]["src"], s["orig"]["sport"])] = \
            s["xlat"]["sport"]
    assert flows <= set(got), (flows, got)
    for f in flows:
        if f in kept:
            assert got[f] == f[2], (f, got[f])
        else:
            assert got[f] != f[2], (f, got[f], want[f])
    # no two flows to the same server endpoint share a public port
    ends = [(f[0], got[f]) for f in flows]
    assert len(set(ends)) == len(ends) or all(
        e[0] == "udp" for e in ends)
    assert counters["translated_out"] > 0 and counters["translated_in"] > 0

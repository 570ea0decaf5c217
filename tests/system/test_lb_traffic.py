"""The load balancer NF with real kernel TCP: a client namespace opens
connections to a VIP; the NF (NAT mode, Maglev) sends each to one of
three backend namespaces (on a Linux bridge behind ZeroNF's second port)
and brings their replies back from the VIP. Every connection completes,
each on the backend the NF's own Maglev lookup names for it, every
backend gets some; a backend marked down gets no new connection while
the ones it has go on (echoes still come back whole)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness import wait_for
from netns import Host, no_offloads, sh, unique_tag

HERE = Path(__file__).resolve().parent
VIP, CLIENT = "10.9.0.100", "10.0.0.2"
BACKENDS = {"be1": "10.9.0.11", "be2": "10.9.0.12", "be3": "10.9.0.13"}


def mac(h: Host, dev: str) -> str:
    out = h.run("ip", "-o", "link", "show", dev).stdout
    return out.split("link/ether ")[1].split()[0]


def ask(p, cmd: str):
    p.stdin.write(cmd + "\n")
    p.stdin.flush()
    line = p.stdout.readline()
    assert line, p.stderr.read()
    return json.loads(line)


def test_connections_reach_the_backends_maglev_names(managers):
    tag = unique_tag(8)
    br, zl = f"zb{tag}", f"zl{tag}"
    cli = Host(f"{tag}c", CLIENT)
    bes = {n: Host(f"{tag}{i}", a)
           for i, (n, a) in enumerate(BACKENDS.items())}
    procs = []
    try:
        pc = cli.attach_veth()
        sh("ip", "link", "add", br, "type", "bridge")
        sh("sysctl", "-qw", f"net.ipv6.conf.{br}.disable_ipv6=1")
        sh("ip", "link", "set", br, "up")
        sh("ip", "link", "add", zl, "type", "veth", "peer", "name",
           zl + "p")
        for d in (zl, zl + "p"):
            sh("sysctl", "-qw", f"net.ipv6.conf.{d}.disable_ipv6=1")
            sh("ip", "link", "set", d, "up")
            no_offloads(d)
        sh("ip", "link", "set", zl + "p", "master", br)
        cmac = mac(cli, f"zh{cli.tag}")
        for n, h in bes.items():
            pi = h.attach_veth()
            sh("ip", "link", "set", pi, "master", br)
            # replies to the client, straight to its MAC (the NF on the
            # way puts the VIP back as their source)
            h.run("ip", "route", "add", f"{CLIENT}/32", "dev",
                  f"zh{h.tag}")
            h.run("ip", "neigh", "add", CLIENT, "lladdr", cmac, "dev",
                  f"zh{h.tag}")
            procs.append(h.popen(sys.executable, str(HERE / "lbserve.py"),
                                 BACKENDS[n], n))
            assert procs[-1].stdout.readline().strip() == "ready"
        cli.run("ip", "route", "add", f"{VIP}/32", "dev", f"zh{cli.tag}")
        cli.run("ip", "neigh", "add", VIP, "lladdr", "02:00:00:00:00:01",
                "dev", f"zh{cli.tag}")
        m = managers(ports=[f"net_af_packet0,iface={pc}",
                            f"net_af_packet1,iface={zl}"], chain="1")
        args = ["--vip", f"web={VIP}:80"]
        for n, h in bes.items():
            args += ["--backend", f"web={n}@{BACKENDS[n]}:8080,mac="
                     f"{mac(h, f'zh{h.tag}')}"]
        nf = m.start_nf("lb", 1, nf_args=args)
        m.call("chain.set", hops=["svc:1", "port:1"], port=0)
        m.call("chain.set", hops=["svc:1", "port:0"], port=1)

        def lookup(sport):
            return m.call("nf.call", instance=nf.instance,
                          command="lb.lookup",
                          args={"vip": "web", "src": CLIENT,
                                "sport": sport})["backend"]
        load = cli.popen(sys.executable, str(HERE / "lbload.py"),
                         stdin=subprocess.PIPE)
        first = ask(load, f"open {VIP} 80 41000 60")
        assert all(name in BACKENDS for _, name in first), first
        assert all(name == lookup(p) for p, name in first)
        assert set(n for _, n in first) == set(BACKENDS)
        on_be2 = [p for p, n in first if n == "be2"]
        r = m.call("nf.call", instance=nf.instance, command="backend.set",
                   args={"vip": "web", "backend": "be2", "up": False})
        assert [b["up"] for b in r["backends"]] == [True, False, True]
        later = ask(load, f"open {VIP} 80 42000 60")
        assert all(n in ("be1", "be3") for _, n in later), later
        assert all(n == lookup(p) for p, n in later)
        pings = dict(ask(load, "ping"))
        assert on_be2 and all(pings[p] for p in on_be2)
        assert all(pings.values())
        assert ask(load, "close") == "closed"
        load.wait(timeout=30)
        c = wait_for(lambda: (lambda c: c if c["new_conns"] >= 120
                              else None)(
            m.call("nf.list")["nfs"][0]["counters"]), 30, "counters")
        assert c["new_conns"] == 120 and c["no_backend"] == 0
        lst = m.call("nf.call", instance=nf.instance,
                     command="backend.list", args={"vip": "web"})
        assert sum(b["conns"] for b in lst["backends"]) == 120
    finally:
        for p in procs:
            p.kill()
        cli.close()
        for h in bes.values():
            h.close()
        subprocess.run(["ip", "link", "del", zl], capture_output=True)
        subprocess.run(["ip", "link", "del", br], capture_output=True)

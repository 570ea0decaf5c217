"""deploy/nfv-chain.yaml with `zeronf up`: clients on one segment (two
network namespaces on a bridge) reach a web service on three backends
(three more on another bridge) through ZeroNF's firewall, NAT, DPI and
load balancer NFs, each direction through the chain the other way
round. Real kernel TCP (HTTP) end to end: every request answered by a
backend, all three used, every NF seeing what it should (the firewall
each connection opened, the NAT and the load balancer each translated,
the DPI classifying the flows as HTTP), and the instance down leaves
nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness import REPO, unique_name, wait_for
from netns import Host, no_offloads, sh, unique_tag
from zeronf import Client

HERE = Path(__file__).resolve().parent
DEPLOY = REPO / "deploy" / "nfv-chain.yaml"
VIP = "198.51.100.100"
CLIENTS = ["10.0.0.2", "10.0.0.3"]
BACKENDS = {"be1": "10.9.0.11", "be2": "10.9.0.12", "be3": "10.9.0.13"}
PORT_MAC = {"znfcli0": "02:00:00:00:0c:01", "znfbe0": "02:00:00:00:0b:01"}

GET = """
import json, sys, urllib.request
got = []
for i in range(int(sys.argv[2])):
    try:
        with urllib.request.urlopen(f"http://{sys.argv[1]}/{i}",
                                    timeout=10) as r:
            got.append([r.status, r.read().decode()])
    except Exception as e:
        got.append([0, str(e)])
print(json.dumps(got))
"""


def zeronf(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zeronf", *args],
                          capture_output=True, text=True, timeout=120)


def segment(br: str, port_if: str) -> None:
    """A bridge, and the veth of a ZeroNF port on it."""
    sh("ip", "link", "add", br, "type", "bridge")
    sh("ip", "link", "add", port_if, "address", PORT_MAC[port_if], "type",
       "veth", "peer", "name", port_if + "p")
    for d in (br, port_if, port_if + "p"):
        sh("sysctl", "-qw", f"net.ipv6.conf.{d}.disable_ipv6=1")
        sh("ip", "link", "set", d, "up")
    no_offloads(port_if)
    no_offloads(port_if + "p")
    sh("ip", "link", "set", port_if + "p", "master", br)


def host(tag: str, addr: str, br: str, mac: str | None = None) -> Host:
    h = Host(tag, addr)
    pi = h.attach_veth()
    if mac:
        h.run("ip", "link", "set", f"zh{h.tag}", "address", mac)
    sh("ip", "link", "set", pi, "master", br)
    return h


def test_clients_reach_backends_through_the_chain(tmp_path):
    for d in ("znfcli0", "znfbe0"):  # what a run before left
        subprocess.run(["ip", "link", "del", d], capture_output=True)
    tag = unique_tag(9)
    brc, brb = f"zc{tag}", f"zb{tag}"
    name = unique_name("nfv")
    hosts, procs = [], []
    try:
        segment(brc, "znfcli0")
        segment(brb, "znfbe0")
        for i, (be, a) in enumerate(BACKENDS.items()):
            h = host(f"{tag}b{i}", a, brb, f"02:00:00:00:09:1{i + 1}")
            h.run("ip", "route", "add", "198.51.100.1/32", "dev",
                  f"zh{h.tag}")
            h.run("ip", "neigh", "add", "198.51.100.1", "lladdr",
                  PORT_MAC["znfbe0"], "dev", f"zh{h.tag}")
            procs.append(h.popen(sys.executable, str(HERE / "lbserve.py"),
                                 a, be, "http"))
            assert procs[-1].stdout.readline().strip() == "ready"
            hosts.append(h)
        clients = []
        for i, a in enumerate(CLIENTS):
            h = host(f"{tag}c{i}", a, brc)
            h.run("ip", "route", "add", f"{VIP}/32", "dev", f"zh{h.tag}")
            h.run("ip", "neigh", "add", VIP, "lladdr", PORT_MAC["znfcli0"],
                  "dev", f"zh{h.tag}")
            clients.append(h)
            hosts.append(h)
        r = zeronf("up", str(DEPLOY), "--name", name)
        assert r.returncode == 0, r.stdout + r.stderr
        try:
            answers = []
            for h in clients:
                out = h.run(sys.executable, "-c", GET, VIP, "20").stdout
                answers += json.loads(out)
            assert all(s == 200 and b in BACKENDS for s, b in answers), \
                answers
            assert {b for _, b in answers} == set(BACKENDS)
            with Client(name) as c:
                def nfs():
                    return {n["name"].rstrip("0123456789").rstrip("-_"):
                            n["counters"] for n in c.nfs()}
                # counters are published once a tick
                got = wait_for(lambda: (lambda n: n if n.get("lb", {}).get(
                    "new_conns", 0) >= 40 and n.get("nat", {}).get(
                    "sessions_made", 0) >= 40 else None)(nfs()), 30,
                    "the NFs' counters")
                fw = next(n["instance"] for n in c.nfs()
                          if n["name"].startswith("fw"))
                rules = c.call("nf.call", instance=fw,
                               command="rules.list", args={})
            # each connection opened by the rule for them; the hosts'
            # own chatter (IGMP, neighbour discovery) to the policy
            assert rules["rules"][2]["hits"] == 40, rules
            assert got["fw"]["dropped_rule"] == 0, got["fw"]
            # a session each; those a RST closed may have left the
            # table already (its 10 s timeout, the kernel's)
            assert got["nat"]["translated_out"] > 0 and \
                got["nat"]["translated_in"] > 0 and \
                got["nat"]["sessions_made"] == 40 and \
                got["nat"]["sessions"] <= 40
            assert got["lb"]["new_conns"] == 40 and \
                got["lb"]["from_backend"] > 0
        finally:
            r = zeronf("down", name)
            assert r.returncode == 0, r.stdout + r.stderr
        logs = REPO / "out" / f"{name}-logs"
        report = (logs / "dpi-flows.out").read_text()
        assert report.count("HTTP") >= 40, report[-2000:]
    finally:
        for p in procs:
            p.kill()
        for h in hosts:
            h.close()
        for d in ("znfcli0", "znfbe0", brc, brb):
            subprocess.run(["ip", "link", "del", d], capture_output=True)
        os.environ.pop("ZERONF_INSTANCE", None)

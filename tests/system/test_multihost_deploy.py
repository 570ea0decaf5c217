"""A deployment of two hosts (deploy/multihost.yaml, docs/multihost.md):
`zeronf up` starts each host's manager in its network namespace, puts
them on the fabric and sets the paths; kernel TCP between a client
namespace on the first host and a server namespace on the second crosses
the chain; `zeronf apply` of the file with a service moved to the other
host while a transfer runs: no byte lost, the service runs where the file
now says; `zeronf down` of the file stops both."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest
import yaml

from harness import REPO, scaled, wait_for
from zeronf.client import Client
from netns import Host, no_offloads, sh, unique_tag
from test_kernel_traffic import SERVER, tcp_transfer

# Sends until the file argv[3] exists: one connection held across a change
STREAM = textwrap.dedent("""
    import hashlib, os, socket, sys
    s = socket.create_connection((sys.argv[1], 5001), timeout=60)
    h, n, chunk = hashlib.sha256(), 0, os.urandom(1 << 16)
    while not os.path.exists(sys.argv[2]):
        s.sendall(chunk); h.update(chunk); n += len(chunk)
    s.shutdown(socket.SHUT_WR); s.recv(1)
    print(n, h.hexdigest(), flush=True)
""")

EXAMPLE = REPO / "deploy" / "multihost.yaml"


def zeronf(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "zeronf", *args], cwd=REPO,
                       capture_output=True, text=True, timeout=180)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


class Namespace:
    def __init__(self, name: str):
        self.ns = name
        sh("ip", "netns", "add", name)
        self.run("ip", "link", "set", "lo", "up")

    def run(self, *a: str, check: bool = True):
        return sh("ip", "netns", "exec", self.ns, *a, check=check)

    def close(self) -> None:
        sh("ip", "netns", "del", self.ns, check=False)


def veth(a: str, a_ns: str, b: str, b_ns: str, mtu: int = 1500) -> None:
    sh("ip", "link", "add", a, "mtu", str(mtu), "netns", a_ns, "type",
       "veth", "peer", "name", b, "mtu", str(mtu), "netns", b_ns)
    for dev, ns in ((a, a_ns), (b, b_ns)):
        run = lambda *x, ns=ns, check=True: sh(  # noqa: E731
            "ip", "netns", "exec", ns, *x, check=check)
        run("sysctl", "-q", "-w", f"net.ipv6.conf.{dev}.disable_ipv6=1",
            check=False)
        run("ip", "link", "set", dev, "up")
        no_offloads(dev, run)


@pytest.fixture
def site(tmp_path):
    """Namespaces: the two ZeroNF hosts (edge, core), a client behind
    edge, a server behind core; the example file rewritten to them."""
    tag = unique_tag(7)
    edge, core = Namespace(f"zne{tag}"), Namespace(f"znc{tag}")
    cli, srv = Host(tag + "x", "10.234.0.1"), Host(tag + "y", "10.234.0.2")
    name = f"mh{tag}"
    try:
        veth("lan", edge.ns, "cli0", cli.ns)
        veth("fab", edge.ns, "fab", core.ns, mtu=1600)
        veth("wan", core.ns, "srv0", srv.ns)
        for h, dev in ((cli, "cli0"), (srv, "srv0")):
            h.run("ip", "addr", "add", f"{h.addr}/24", "dev", dev)
        text = EXAMPLE.read_text()
        text = text.replace("zn-mh-edge", edge.ns).replace(
            "zn-mh-core", core.ns).replace(
            "/tmp/zeronf-{name}-logs", str(tmp_path / "{name}-logs"))
        f = tmp_path / "multihost.yaml"
        f.write_text(text)
        yield f, name, cli, srv
    finally:
        for inst in (f"{name}-edge", f"{name}-core"):
            zeronf("-i", inst, "down", check=False)
        for x in (cli, srv, edge, core):
            x.close()


def nfs_of(instance: str) -> dict[str, dict]:
    import json
    r = zeronf("-i", instance, "--json", "nfs")
    return {n["name"].rsplit("-", 1)[0]: n for n in json.loads(r.stdout)}


def transfer_ok(cli, srv, nbytes: int, during=None) -> bool:
    sent, got = tcp_transfer([cli, srv], nbytes, during)
    return sent == got and int(got[0]) == nbytes


def test_up_then_apply_moves_a_service_under_tcp_then_down(site):
    f, name, cli, srv = site
    r = zeronf("up", "--name", name, str(f))
    assert f"'{name}' is up: 2 hosts" in r.stdout, r.stdout
    assert transfer_ok(cli, srv, 4 << 20)
    assert "fw" in nfs_of(f"{name}-core") and \
        "fw" not in nfs_of(f"{name}-edge")
    # fw moves to edge: the paths now go edge (mon, fw) -> core (fwd)
    doc = yaml.safe_load(f.read_text())
    edge, core = doc["hosts"]
    fw = next(x for x in core["services"] if x["name"] == "fw")
    core["services"].remove(fw)
    edge["services"].append(fw)

    def there(hops):
        return [h.replace("fw@core", "fw@edge") if h != "fw" else "fw@edge"
                for h in hops]
    edge["ports"][0]["chain"] = there(edge["ports"][0]["chain"])
    core["ports"][1]["chain"] = there(core["ports"][1]["chain"])
    for p in doc["paths"]:
        p["hops"] = there(p["hops"])
    moved = yaml.safe_dump(doc)
    f2 = f.with_name("moved.yaml")
    f2.write_text(moved)
    # one TCP connection, sending throughout the change
    stop = f.with_name("stop")
    rx0 = nfs_of(f"{name}-edge")["mon"]["rx"]
    server = srv.popen(sys.executable, "-c", SERVER)
    assert server.stdout.readline().strip() == "ready"
    client = cli.popen(sys.executable, "-c", STREAM, srv.addr, str(stop))
    wait_for(lambda: nfs_of(f"{name}-edge")["mon"]["rx"] > rx0 + 2000,
             scaled(30), "the connection flowing")
    out = {"r": zeronf("apply", "--name", name, str(f2), check=False)}
    # the same connection goes on through fw's new place
    wait_for(lambda: nfs_of(f"{name}-edge").get("fw", {}).get("rx", 0) >
             1000, scaled(30), "the connection through fw on edge")
    stop.touch()
    sent = client.communicate(timeout=60)[0].split()
    got = server.communicate(timeout=60)[0].split()
    assert sent == got and int(got[0]) > 0, (sent, got)
    assert out["r"].returncode == 0, out["r"].stdout + out["r"].stderr
    assert "fw" in nfs_of(f"{name}-edge") and \
        "fw" not in nfs_of(f"{name}-core")
    assert transfer_ok(cli, srv, 4 << 20)
    r = zeronf("down", "--name", name, str(f2))
    assert r.stdout.count("is down") == 2, r.stdout
    assert not zeronf("-i", f"{name}-edge", "status", check=False) \
        .returncode == 0


# SYNs from spoofed sources to the server's port 80, from the client's
# namespace on its interface, about RATE per second until argv[4] exists
FLOOD = textwrap.dedent("""
    import os, random, socket, struct, sys, time
    dev, dst, mac, stop = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    eth = bytes.fromhex(mac.replace(":", "")) + s.getsockname()[4] + \\
        b"\\x08\\x00"
    rnd, d = random.Random(7), socket.inet_aton(dst)
    sent, t0 = 0, time.monotonic()
    while not os.path.exists(stop):
        src = struct.pack("!I", 0x0B000000 | rnd.getrandbits(24))
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40, 0, 0x4000, 64, 6,
                         0, src, d)
        tcp = struct.pack("!HHIIBBHHH", rnd.randint(1024, 65535), 80, 1, 0,
                          5 << 4, 0x02, 65535, 0, 0)
        s.send(eth + ip + tcp)
        sent += 1
        if sent % 50 == 0:  # about 5000 a second
            time.sleep(max(0, t0 + sent / 5000 - time.monotonic()))
    print(sent, flush=True)
""")


def test_a_syn_flood_is_stopped_at_the_edge_host(site):
    """NetVM's DoS case across hosts: edge's monitor sees a SYN flood, a
    reaction puts edge's filter into the port's path, the connection
    that was open keeps flowing end to end and, from then on, none of the
    flood reaches core."""
    f, name, cli, srv = site
    doc = yaml.safe_load(f.read_text())
    edge = doc["hosts"][0]
    edge["services"].append({"name": "filter", "id": 4, "nf": {
        "binary": "zeronf-filter",
        "args": ["--syn-rate", "0", "--syn-burst", "0"]}})
    edge["reactions"] = [{"name": "synflood", "when": {
        "service": "mon", "counter": "tcp_syn", "above": 1000, "for_s": 1},
        "insert": {"service": "filter", "after": "mon",
                   "remove_after_s": 60}}]
    f.write_text(yaml.safe_dump(doc))
    zeronf("up", "--name", name, str(f))
    stop = f.with_name("stop")
    server = srv.popen(sys.executable, "-c", SERVER)
    assert server.stdout.readline().strip() == "ready"
    client = cli.popen(sys.executable, "-c", STREAM, srv.addr, str(stop))
    wait_for(lambda: nfs_of(f"{name}-core")["fw"]["rx"] > 2000, scaled(30),
             "the connection flowing")
    mac = srv.run("cat", "/sys/class/net/srv0/address").stdout.strip()
    flood = cli.popen(sys.executable, "-c", FLOOD, "cli0", srv.addr, mac,
                      str(stop))
    try:
        with Client(f"{name}-edge") as c:
            wait_for(lambda: any(e["type"] == "react.insert" for e in
                                 c.call("event.list")["events"]),
                     scaled(30), "the filter put in")
            hops = c.call("chain.get", port=0)["hops"]
        # on edge's path, with the filter put in after the monitor
        assert hops == ["svc:1", "svc:4", "svc:2@2", "svc:3@2",
                        "port:1@2"], hops
        time.sleep(0.5)  # what had left edge before
        core_syn = nfs_of(f"{name}-core")["fw"]["counters"]["tcp_syn"]
        edge0 = nfs_of(f"{name}-edge")["filter"]["counters"]
        rx0 = nfs_of(f"{name}-core")["fw"]["rx"]
        wait_for(lambda: nfs_of(f"{name}-edge")["filter"]["counters"]
                 ["syn_dropped"] > edge0["syn_dropped"] + 2000, scaled(30),
                 "the flood dropped at edge")
        # the open connection crossed the filter to core meanwhile...
        assert nfs_of(f"{name}-core")["fw"]["rx"] > rx0 + 1000
        # ...and no SYN of the flood did
        assert nfs_of(f"{name}-core")["fw"]["counters"]["tcp_syn"] == \
            core_syn
    finally:
        stop.touch()
        n = int(flood.communicate(timeout=60)[0].split()[0])
    assert n > 2000
    sent = client.communicate(timeout=60)[0].split()
    got = server.communicate(timeout=60)[0].split()
    assert sent == got and int(got[0]) > 0, (sent, got)


def test_each_host_brought_up_on_its_own(site):
    """As on real hosts: `zeronf up --host NAME` on each machine. Edge
    comes up first, its peer core nowhere: it learns core's MAC address
    by ARP once core is there. Over Ethernet (no address to ask for), a
    peer whose MAC address the file does not give and whose manager is not
    here is refused, naming it."""
    f, name, cli, srv = site
    for h in ("edge", "core"):
        r = zeronf("up", "--name", name, "--host", h, str(f))
        assert f"'{name}' is up: 1 host," in r.stdout, r.stdout
    assert transfer_ok(cli, srv, 4 << 20)
    with Client(f"{name}-edge") as c:
        core = c.call("fabric.show")["peers"][0]
    assert core["name"] == "core" and core["mac_learned"], core
    for inst in (f"{name}-edge", f"{name}-core"):
        zeronf("-i", inst, "down")
    doc = yaml.safe_load(f.read_text())
    doc["fabric"]["encap"] = "ethernet"
    f.write_text(yaml.safe_dump(doc))
    r = zeronf("up", "--name", name, "--host", "edge", str(f), check=False)
    assert r.returncode == 1 and "host core: its fabric port's MAC" in \
        r.stderr, r.stdout + r.stderr

"""Packet tests of tenants (mgr/tenant/tenant.c, tenant_hot.c): real captures in
through net_pcap on a port sliced among two tenants (by VLAN, destination
MAC or IP prefix), each tenant's packets through its own NF (in its own
trust group) and out of its own port. Each output is exactly that tenant's
share of the input, in order per flow (the share worked out here, apart
from the manager's classifier); what no slice takes is counted as
no_tenant; an NF sending into another tenant loses its packets as
cross_tenant and the other tenant sees none of them."""

from __future__ import annotations

import ipaddress
import json
import struct
import subprocess
import sys

import pytest

from harness import DATA, MGR_BIN, wait_for
from pcaputil import assert_same_per_flow, flow_key, read_frames, write_pcap
from zeronf.client import Client, ZeroNFError, tenant_socket_path

WIKI = DATA / "pcap/wikipedia.pcap"
BT = DATA / "pcap/bittorrent.pcap"
GROUPS = ["--trust-group", "red:2047", "--trust-group", "blue:2047",
          "--trust-group", "grey:1023"]
TENANTS = ["--tenant", "red=red,services=10-19",
           "--tenant", "blue=blue,services=020-29",
           "--slice", "red:1", "--slice", "blue:2"]


def tag(frame: bytes, vid: int) -> bytes:
    return frame[:12] + struct.pack("!HH", 0x8100, vid) + frame[12:]


def vlan_of(f: bytes):
    """The outer VLAN id (802.1Q or 802.1ad), None if untagged."""
    if len(f) < 18 or struct.unpack_from("!H", f, 12)[0] not in (0x8100,
                                                                  0x88A8):
        return None
    return struct.unpack_from("!H", f, 14)[0] & 0xFFF


def dst_ip(f: bytes):
    """The destination address after the outer VLAN, None for other
    frames and IPv4 headers that do not say version 4."""
    if len(f) < 14:
        return None
    off = 18 if vlan_of(f) is not None else 14
    et = struct.unpack_from("!H", f, off - 2)[0]
    if et == 0x0800 and len(f) >= off + 20 and f[off] >> 4 == 4:
        return ipaddress.ip_address(f[off + 16:off + 20])
    if et == 0x86DD and len(f) >= off + 40:
        return ipaddress.ip_address(f[off + 24:off + 40])
    return None


def matches(f: bytes, kind: str, value: str) -> bool:
    if kind == "vlan":
        return vlan_of(f) == int(value)
    if kind == "mac":
        return len(f) >= 6 and f[:6] == bytes.fromhex(value.replace(":", ""))
    ip = dst_ip(f)
    net = ipaddress.ip_network(value)
    return ip is not None and ip.version == net.version and ip in net


def vlan_capture(tmp_path):
    """bittorrent.pcap with its flows tagged 10, 20 or 30 by turns, and
    its first 7 frames untagged."""
    from pcaputil import flow_key
    order: dict = {}
    frames = []
    for i, f in enumerate(read_frames(BT)):
        k = order.setdefault(flow_key(f), len(order))
        frames.append(f if i < 7 else tag(f, (10, 20, 30)[k % 3]))
    path = tmp_path / "tagged.pcap"
    write_pcap(path, frames)
    return path, frames


def run_tenants(managers, tmp_path, pcap, slices, red_nf=(), blue_args=(),
                setup=None, args=(), groups=GROUPS):
    """Port 0 (the capture) sliced as `slices` [(tenant, kind, value)];
    red: NF 10 then port 1; blue: NF 20 then port 2. Returns the outputs,
    stats, tenant.list and group.list once idle."""
    outs = [tmp_path / "red.pcap", tmp_path / "blue.pcap"]
    args = list(groups + TENANTS) + list(args)
    for t, kind, value in slices:
        args += ["--slice", f"{t}:0:{kind}={value}"]
    m = managers(ports=[f"net_pcap0,rx_pcap={pcap}",
                        f"net_pcap1,tx_pcap={outs[0]}",
                        f"net_pcap2,tx_pcap={outs[1]}"],
                 rx_paused=True, args=args)
    m.start_nf("forward", 10, "red-fw", nf_args=list(red_nf),
               lib_args=["--trust-group", "red"])
    m.start_nf("forward", 20, "blue-fw", nf_args=list(blue_args),
               lib_args=["--trust-group", "blue"])
    assert m.call("chain.set", tenant="red", hops=["10", "port:1"]) == \
        {"tenant": "red", "hops": ["svc:10", "port:1"], "warnings": []}
    m.call("chain.set", tenant="blue", hops=["svc:20", "port:2"])
    if setup is not None:
        setup(m)
    m.call("rx.set", enabled=True)
    n = len(read_frames(pcap))
    wait_for(lambda: m.call("port.list")["ports"][0]["rx"] >= n, 60,
             "the capture read")
    st = m.wait_idle()
    tl = {t["name"]: t for t in m.call("tenant.list")["tenants"]}
    gl = {g["name"]: g for g in m.call("group.list")["groups"]}
    assert m.shutdown() == 0
    return [read_frames(o) for o in outs], st, tl, gl


def test_malformed_frames_find_their_tenant_or_none(managers, tmp_path):
    """Every frame of tcpdump's test captures (truncated, bad lengths,
    fuzzed fields, any link type) through a port sliced by prefix (IPv4
    and IPv6), VLAN and MAC: each tenant's output is exactly the frames
    this test's own classifier gives it, in order; the rest no_tenant."""
    from harness import CORPORA
    from test_malformed import merged_corpus
    if not (CORPORA / "tcpdump-4.99.3/tests").exists():
        pytest.skip("corpus not present")
    pcap = tmp_path / "corpus.pcap"
    merged_corpus(pcap)
    slices = [("red", "prefix", "0.0.0.0/1"), ("blue", "vlan", "1"),
              ("blue", "prefix", "::/0"),
              ("red", "mac", "ff:ff:ff:ff:ff:ff")]
    want = {"red": [], "blue": []}
    rest = 0
    for f in read_frames(pcap):
        t = next((t for t, k, v in slices if matches(f, k, v)), None)
        if t is None:
            rest += 1
        else:
            want[t].append(f)
    assert min(len(want["red"]), len(want["blue"]), rest) > 100
    # A sliced port waits for no tenant: rings and pools that hold the
    # whole capture, so that nothing is lost to a first hop not keeping
    # up (what would be: ingress_full).
    (red, blue), st, tl, gl = run_tenants(
        managers, tmp_path, pcap, slices,
        args=["--ring-size", "16384", "--pool-size", "32767"],
        groups=["--trust-group", "red:16383", "--trust-group", "blue:16383",
                "--trust-group", "grey:1023"])
    assert st["drops"]["ingress_full"] == 0
    assert red == want["red"] and blue == want["blue"]
    assert st["drops"]["no_tenant"] == rest
    assert all(g["pool"]["in_use"] == 0 for g in gl.values())


@pytest.mark.parametrize("capture, slices", [
    ("vlan", [("red", "vlan", "10"), ("blue", "vlan", "0020")]),
    ("wiki", [("red", "mac", "00:13:7f:be:8c:ff"),
              ("blue", "prefix", "141.142.0.0/16")]),
    # the first match wins: red's /24 before blue's /16
    ("wiki", [("red", "prefix", "141.142.220.0/24"),
              ("blue", "prefix", "141.142.0.0/16")]),
])
def test_each_tenant_gets_its_slice(managers, tmp_path, capture, slices):
    if capture == "vlan":
        pcap, frames = vlan_capture(tmp_path)
    else:
        pcap, frames = WIKI, read_frames(WIKI)
    want = {"red": [], "blue": []}
    rest = 0
    for f in frames:
        t = next((t for t, k, v in slices if matches(f, k, v)), None)
        if t is None:
            rest += 1
        else:
            want[t].append(f)
    assert want["red"] and want["blue"] and rest  # the test can fail
    (red, blue), st, tl, gl = run_tenants(managers, tmp_path, pcap, slices)
    assert_same_per_flow(want["red"], red)
    assert_same_per_flow(want["blue"], blue)
    assert st["drops"]["no_tenant"] == rest
    assert sum(st["drops"].values()) == rest
    for t in ("red", "blue"):
        c = tl[t]["counters"]
        assert c["rx"] == len(want[t])
        assert c["rx_bytes"] == sum(len(f) for f in want[t])
        assert (c["ingress_full"], c["no_chain"], c["cross_tenant"]) == \
            (0, 0, 0)
        assert tl[t]["n_nfs"] == 1 and tl[t]["nfs"]["rx"] == len(want[t])
        # Port 0 is shared: each tenant's packets copied into its pool.
        assert gl[t]["copied_in"] == len(want[t])
        assert gl[t]["pool"]["in_use"] == 0
    assert tl["red"]["slices"][0] == {"port": 1}
    assert tl["blue"]["services"] == [20, 29]
    kind, value = slices[1][1], slices[1][2]
    assert tl["blue"]["slices"][1] == {
        "port": 0, kind: int(value) if kind == "vlan" else value}


def test_a_tenants_rules_take_only_its_packets(managers, tmp_path):
    """Red's rules, put in through red's control socket: UDP drops, and
    one TCP flow (both directions) drops. Red's UDP and that flow's
    packets in red's share drop; blue's share, the same protocols and
    the other direction of the same flow, is untouched. Each tenant's
    socket lists and deletes only its own rules."""
    slices = [("red", "mac", "00:13:7f:be:8c:ff"),
              ("blue", "prefix", "141.142.0.0/16")]
    frames = read_frames(WIKI)
    share = {"red": [], "blue": []}
    for f in frames:
        t = next((t for t, k, v in slices if matches(f, k, v)), None)
        if t:
            share[t].append(f)
    tcp = next(f for f in share["red"] if f[23] == 6)
    key = flow_key(tcp)
    assert any(flow_key(f) == key for f in share["blue"])  # can fail
    ip = lambda b: str(ipaddress.ip_address(b))  # noqa: E731
    flow = {"proto": "tcp", "src": ip(tcp[26:30]), "dst": ip(tcp[30:34]),
            "sport": struct.unpack_from("!H", tcp, 34)[0],
            "dport": struct.unpack_from("!H", tcp, 36)[0]}
    ids = {}

    def setup(m):
        red = Client(path=tenant_socket_path(m.name, "red"))
        blue = Client(path=tenant_socket_path(m.name, "blue"))
        ids["red"] = red.call("rule.add", match={"proto": "udp"},
                              chain=["drop"])["id"]
        assert red.call("flow.add", flows=[{"flow": flow, "chain": ["drop"],
                                            "both": True}])["added"] == 2
        ids["op"] = m.call("rule.add", match={"proto": "icmp"},
                           chain=["drop"], priority=1)["id"]
        # Each sees its own; the operator sees all, with their owners.
        assert [r["id"] for r in red.call("rule.list")["rules"]] == \
            [ids["red"]]
        assert blue.call("rule.list")["rules"] == []
        assert blue.call("flow.list")["count"] == 0
        assert red.call("flow.list")["count"] == 2
        assert {r["id"]: r["tenant"] for r in m.call("rule.list")["rules"]} \
            == {ids["red"]: "red", ids["op"]: None}
        with pytest.raises(ZeroNFError, match="no rule"):
            blue.call("rule.del", id=ids["red"])
        assert blue.call("flow.del", flows=[{"flow": flow}])["missing"] == 1
        # A flow of red's is not blue's to replace.
        with pytest.raises(ZeroNFError, match="has a rule of a tenant"):
            blue.call("flow.add", flows=[{"flow": flow,
                                          "chain": ["svc:20"]}])
        with pytest.raises(ZeroNFError, match="not tenant blue's"):
            blue.call("rule.add", match={"proto": "udp"}, chain=["svc:10"])
        red.close()
        blue.close()

    (out_red, out_blue), st, tl, _ = run_tenants(managers, tmp_path, WIKI,
                                                 slices, setup=setup)
    icmp = [f for f in frames if f[12:14] == b"\x08\x00" and f[23] == 1]
    assert not any(f in share["red"] for f in icmp)  # the operator's rule
    want_red = [f for f in share["red"] if f[23] not in (17,) and
                flow_key(f) != key]
    want_blue = [f for f in share["blue"] if f[23] != 1]
    assert_same_per_flow(want_red, out_red)
    assert_same_per_flow(want_blue, out_blue)
    assert st["drops"]["chain"] == (len(share["red"]) - len(want_red)) + \
        (len(share["blue"]) - len(want_blue))


def test_an_nf_cannot_send_into_another_tenant(managers, tmp_path):
    """Red's NF sends every packet to blue's service, then out of blue's
    port: all of them drop as cross_tenant, for red; blue's NF and port
    get only blue's packets."""
    slices = [("red", "vlan", "10"), ("blue", "vlan", "20")]
    pcap, frames = vlan_capture(tmp_path)
    blue = [f for f in frames if vlan_of(f) == 20]
    n_red = sum(vlan_of(f) == 10 for f in frames)
    for red_nf in (["--to-service", "20"], ["--out-port", "2"]):
        (out_red, out_blue), st, tl, _ = run_tenants(
            managers, tmp_path, pcap, slices, red_nf=red_nf)
        assert out_red == []
        assert_same_per_flow(blue, out_blue)
        assert tl["red"]["counters"]["cross_tenant"] == n_red
        assert st["drops"]["cross_tenant"] == n_red
        nf = {x["name"]: x for x in st["nfs"]}
        assert nf["red-fw"]["drops"]["cross_tenant"] == n_red
        assert nf["blue-fw"]["rx"] == len(blue)


def test_an_nf_cannot_send_its_tenant_to_another_host(managers, tmp_path):
    """Red's NF puts every packet on the operator's chain to another host
    (a service path: chain 253, ids being given from 255 down), whose
    fabric port is blue's port 2: none leaves (no tunnel in port 2's
    output, nothing in red's), all drop as cross_tenant; a tenant's
    chains stay on this host."""
    slices = [("red", "vlan", "10"), ("blue", "vlan", "20")]
    pcap, frames = vlan_capture(tmp_path)
    n_red = sum(vlan_of(f) == 10 for f in frames)

    def setup(m):
        m.call("fabric.set", port=2, host=1, ip="10.9.0.1")
        m.call("fabric.peer.set", host=2, ip="10.9.0.2",
               mac="02:00:00:00:00:02")
        assert m.call("path.set", spi=5, hops=["svc:1@2"])["chain"] == 253
        with pytest.raises(Exception, match="a tenant's chain stays"):
            m.call("chain.set", tenant="red", hops=["svc:10", "svc:1@2"])
    (out_red, out_blue), st, tl, _ = run_tenants(
        managers, tmp_path, pcap, slices, red_nf=["--chain", "253"],
        setup=setup)
    assert out_red == []
    # port 2 sent blue's packets and the fabric's ARP probes, no tunnel
    assert not [f for f in out_blue if len(f) > 37 and f[12:14] ==
                b"\x08\x00" and f[36:38] == (4790).to_bytes(2, "big")]
    assert tl["red"]["counters"]["cross_tenant"] == n_red
    assert st["drops"]["cross_tenant"] == n_red


def test_tenant_services_and_chains_are_its_own(managers):
    m = managers(ports=["net_null0", "net_null1", "net_null2"],
                 rx_paused=True,
                 args=GROUPS + TENANTS + ["--slice", "red:0:vlan=10",
                                          "--slice", "blue:0:vlan=20"])
    # Registration: a tenant's NF registers its services only, an NF of
    # no tenant none of a tenant's.
    for svc, group, why in ((20, "red", "Permission denied"),
                            (10, None, "Permission denied"),
                            (10, "grey", "Permission denied")):
        nf = m.start_nf("forward", svc, f"x{svc}", wait=False,
                        lib_args=["--trust-group", group] if group else [])
        assert nf.proc.wait(20) != 0
        assert f"refused registration of service {svc}: {why}" in \
            nf.proc.output()
    m.start_nf("forward", 11, "red-ok", lib_args=["--trust-group", "red"])
    bad = [
        (dict(tenant="red", hops=["20"]), "hop 0: service 20 is not "
         "tenant red's"),
        (dict(tenant="red", hops=["11", "port:2"]), "hop 1: port 2 has no "
         "slice of tenant red"),
        (dict(tenant="green", hops=["11"]), "no tenant 'green'"),
        (dict(tenant="red", port=1, hops=["11"]), "not both"),
        (dict(hops=["11", "21"]), "hop 1: service 21 and an earlier hop "
         "are of different tenants"),
        (dict(hops=["1", "11"]), "of different tenants"),
        (dict(port=0, hops=["1"]), "port 0 is sliced among tenants"),
    ]
    for params, message in bad:
        with pytest.raises(Exception, match=message):
            m.call("chain.set", **params)
    assert m.call("chain.get", tenant="red") == {"tenant": "red",
                                                  "hops": []}
    m.call("chain.set", tenant="red", hops=["11", "port:1", "drop"])
    m.call("chain.set", tenant="red", hops=[])

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "zeronf", "-i", m.name,
                               *args], capture_output=True, text=True,
                              timeout=20)
    r = cli("chain", "--tenant", "red", "set", "svc:11,port:1")
    assert r.returncode == 0 and json.loads(r.stdout) == ["svc:11", "port:1"]
    r = cli("chain", "--tenant", "red", "set", "svc:21")
    assert r.returncode == 1 and "service 21 is not tenant red's" in r.stderr
    r = cli("tenants")
    red = json.loads(r.stdout)[0]
    assert red["name"] == "red" and red["chain"] == ["svc:11", "port:1"]
    assert red["n_nfs"] == 1 and red["slices"] == [{"port": 1},
                                                   {"port": 0, "vlan": 10}]
    r = cli("chain", "--tenant", "red", "clear")
    assert r.returncode == 0 and json.loads(r.stdout) == []
    m.call("chain.set", hops=["1", "port:2"])  # no tenant's: allowed
    m.call("rule.add", match={"proto": "udp"}, chain=["svc:12"])
    assert m.shutdown() == 0


@pytest.mark.parametrize("args, message", [
    (["--tenant", "red"], "NAME=GROUP[,services=LO-HI][,uid=N][,cpu=PCT]"),
    (["--tenant", "red=pink"], "--tenant red: no --trust-group pink"),
    (["--tenant", "red=red", "--tenant", "red=blue"], "given twice"),
    (["--tenant", "a=red", "--tenant", "b=red"], "one trust group each"),
    (["--tenant", "a=red,services=10-20", "--tenant",
      "b=blue,services=20-30"], "their services overlap"),
    (["--tenant", "a=red,services=20-10"], "services=LO-HI (1 <= LO"),
    (["--tenant", "a=red,svc=1-2"], "after the group, services=LO-HI"),
    (["--tenant", "a=red,uid=-1"], "uid=N, cpu=PERCENT (1..102400) or mem=MB"),
    (["--tenant", "a=red,cpu=0"], "cpu=PERCENT"),
    (["--tenant", "a=red,services=1-2,"], "or mem=MB"),
    (["--tenant", "a=red", "--slice", "b:0"], "no --tenant b"),
    (["--tenant", "a=red", "--slice", "a:3"], "names port 3 but only 1"),
    (["--tenant", "a=red", "--slice", "a:0:vlan=4095"], "vlan=1..4094"),
    (["--tenant", "a=red", "--slice", "a:0:mac=00:11:22:33:44"],
     "vlan=1..4094, mac="),
    (["--tenant", "a=red", "--slice", "a:0:prefix=10.1.2.3/16"],
     "bits set past its length"),
    (["--tenant", "a=red", "--slice", "a:0:prefix=10.1.0.0/33"],
     "prefix=ADDRESS/LENGTH"),
    (["--tenant", "a=red", "--tenant", "b=blue", "--slice", "a:0:vlan=5",
      "--slice", "b:0:vlan=05"], "port 0's slice given twice (a, b)"),
    (["--tenant", "a=red", "--slice", "a"], "TENANT:PORT"),
    (["--tenant", "a=red", "--fdir-rehash"], "does not know tenants"),
    (["--tenant", "a=red", "--slice", "a:0", "--port-group", "0=blue"],
     "--port-group 0 is not tenant a's group"),
])
def test_bad_tenants_are_refused(args, message):
    r = subprocess.run([str(MGR_BIN), "-i", "ztnbad", "-p", "net_null0",
                        *GROUPS, *args], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode != 0 and message in r.stderr, r.stderr

"""Tenants' control credentials (mgr/core/ctl.c): each tenant has a control
socket of its own, mode 0600 and owned by the user --tenant's uid= names;
a client on it sees and changes only its tenant (its NFs, its chain, its
counters) and is refused every other command. Tried by a real other user
(uid 65534) that can use its tenant's socket and no other."""

from __future__ import annotations

import json
import re
import os
import shutil
import stat
import subprocess
import sys

import pytest

from zeronf.client import (Client, ZeroNFError, runtime_dir,
                           tenant_socket_path)

NOBODY = 65534
GROUPS = ["--trust-group", "red:1023", "--trust-group", "blue:1023"]
TENANTS = ["--tenant", f"red=red,services=10-19,uid={NOBODY}",
           "--tenant", "blue=blue,services=20-29",
           "--slice", "red:0:vlan=10", "--slice", "blue:0:vlan=20",
           "--slice", "red:1", "--slice", "blue:2"]

# Run as another user: the system's Python (the test's may be under a
# directory only root reads), nothing but a socket.
AS_NOBODY = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print(json.dumps({"connect": e.errno})); sys.exit(0)
s.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": sys.argv[2],
                      "params": json.loads(sys.argv[3])}).encode() + b"\n")
buf = b""
while not buf.endswith(b"\n"):
    buf += s.recv(65536)
print(buf.decode())
"""


def as_nobody(path, method, **params):
    py = shutil.which("python3", path="/usr/bin:/bin")
    r = subprocess.run([py, "-c", AS_NOBODY, str(path), method,
                        json.dumps(params)], capture_output=True, text=True,
                       timeout=20, preexec_fn=lambda: (os.setgid(NOBODY),
                                                       os.setuid(NOBODY)))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture
def tenants(managers):
    m = managers(ports=["net_null0", "net_null1", "net_null2"],
                 rx_paused=True, args=GROUPS + TENANTS)
    m.start_nf("forward", 10, "red-fw", lib_args=["--trust-group", "red"])
    m.start_nf("forward", 20, "blue-fw", lib_args=["--trust-group", "blue"])
    m.start_nf("forward", 1, "plain")
    return m


def test_a_tenant_socket_sees_and_changes_only_its_tenant(tenants):
    m = tenants
    red = tenant_socket_path(m.name, "red")
    with Client(path=red) as c:
        assert [n["name"] for n in c.call("nf.list")["nfs"]] == ["red-fw"]
        assert [t["name"] for t in c.call("tenant.list")["tenants"]] == \
            ["red"]
        assert c.call("chain.set", hops=["10", "port:1"])["hops"] == \
            ["svc:10", "port:1"]
        assert c.call("chain.get")["hops"] == ["svc:10", "port:1"]
        assert c.call("chain.get", tenant="red")["hops"] == \
            ["svc:10", "port:1"]
        assert c.call("version")["protocol"] == "zeronf-ctl"
        refused = [("chain.set", dict(tenant="blue", hops=["20"]),
                    "sets its own chain only"),
                   ("chain.set", dict(port=1, hops=["10"]),
                    "sets its own chain only"),
                   ("chain.set", dict(hops=["20"]),
                    "service 20 is not tenant red's"),
                   ("chain.get", dict(tenant="blue"), "own chain only"),
                   ("rx.set", dict(enabled=True), "rx.set: not open to a "
                    "tenant (tenant red's control socket)"),
                   ("status", {}, "not open to a tenant"),
                   ("stats", {}, "not open to a tenant"),
                   ("shutdown", {}, "not open to a tenant")]
        for method, params, message in refused:
            with pytest.raises(ZeroNFError, match=re.escape(message)) as e:
                c.call(method, **params)
            assert e.value.code == -1  # -EPERM
        # The schema says which methods a tenant may call.
        methods = c.call("schema")["methods"]
        assert sorted(k for k, v in methods.items() if v.get("tenant")) == \
            ["chain.get", "chain.set", "flow.add", "flow.del", "flow.list",
             "help", "launch.list", "nf.call", "nf.list", "nf.remove",
             "nf.restart", "nf.scale", "nf.start", "nf.stop", "nf.update",
             "rule.add", "rule.del", "rule.list", "schema", "tenant.list",
             "version"]
    # The operator sees what red did, and everything.
    with m.client() as c:
        assert c.call("chain.get", tenant="red")["hops"] == \
            ["svc:10", "port:1"]
        assert c.call("chain.get", tenant="blue")["hops"] == []
        assert len(c.call("nf.list")["nfs"]) == 3
    # The CLI, as red.
    r = subprocess.run([sys.executable, "-m", "zeronf", "-i", m.name, "--as",
                        "red", "nfs", "--json"], capture_output=True,
                       text=True, timeout=20)
    assert r.returncode == 0 and [n["name"] for n in json.loads(r.stdout)] \
        == ["red-fw"]
    r = subprocess.run([sys.executable, "-m", "zeronf", "-i", m.name, "--as",
                        "red", "rx", "on"], capture_output=True, text=True,
                       timeout=20)
    assert r.returncode == 1 and "not open to a tenant" in r.stderr


def test_only_the_tenants_user_reaches_its_socket(tenants):
    m = tenants
    red, blue = (tenant_socket_path(m.name, t) for t in ("red", "blue"))
    st = os.stat(red)
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == NOBODY
    assert os.stat(blue).st_uid == 0
    got = as_nobody(red, "tenant.list")
    assert [t["name"] for t in got["result"]["tenants"]] == ["red"]
    assert as_nobody(red, "status")["error"]["code"] == -1
    assert as_nobody(blue, "tenant.list") == {"connect": 13}  # EACCES
    admin = os.path.join(runtime_dir(m.name), "zeronf.sock")
    assert as_nobody(admin, "status")["connect"] in (13, 2)
    assert m.shutdown() == 0
    # Its sockets and their directory go with the manager.
    assert not os.path.exists(os.path.dirname(red))


def test_a_tenants_nfs_get_its_cpu_share_and_memory(managers, tmp_path):
    """--tenant cpu=20,mem=300: the tenant's launched NFs run in its
    cgroup, which holds them to 20 % of one CPU and 300 MB together. A
    flood at many times what its NF can do at that share: the NF uses no
    more than its share (and the excess drops, counted for the tenant)."""
    from harness import DATA, NF_BIN, scaled, wait_for
    from pcaputil import read_frames, write_pcap
    frames = [f[:12] + b"\x81\x00\x00\x0a" + f[12:]
              for f in read_frames(DATA / "pcap/bittorrent.pcap")]
    write_pcap(tmp_path / "red.pcap", frames)
    m = managers(ports=[f"net_pcap0,rx_pcap={tmp_path / 'red.pcap'},"
                        "infinite_rx=1", "net_null0,no-rx=1"],
                 rx_paused=True,
                 args=["--trust-group", "red:4095", "--tenant",
                       "red=red,services=10-19,cpu=20,mem=300",
                       "--slice", "red:0:vlan=10", "--slice", "red:1"])
    # 20 us a packet: 50 kpps at a whole CPU, 10 kpps at its share.
    m.call("nf.start", name="busy", binary=str(NF_BIN["forward"]),
           service=10, trust_group="red", args=["--cost-ns", "20000"])
    wait_for(lambda: any(n["name"] == "busy" and n["state"] == "running"
                         for n in m.call("nf.list")["nfs"]), scaled(20),
             "busy running")
    pid = next(n["pid"] for n in m.call("nf.list")["nfs"])
    assert f"/zeronf/{m.name}/tenant-red/busy" in \
        open(f"/proc/{pid}/cgroup").read()
    cg = "/sys/fs/cgroup"
    if os.path.exists(f"{cg}/cgroup.controllers"):  # v2
        d = f"{cg}/zeronf/{m.name}/tenant-red"
        assert open(f"{d}/cpu.max").read().split() == ["20000", "100000"]
        assert int(open(f"{d}/memory.max").read()) == 300 << 20
    else:
        d = f"zeronf/{m.name}/tenant-red"
        assert int(open(f"{cg}/cpu/{d}/cpu.cfs_quota_us").read()) == 20000
        assert int(open(f"{cg}/memory/{d}/memory.limit_in_bytes").read()) \
            == 300 << 20
    m.call("chain.set", tenant="red", hops=["10", "port:1"])
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] > 1000,
             scaled(20), "traffic through the NF")

    def cpu():
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    import time
    t0, c0 = time.monotonic(), cpu()
    time.sleep(3)
    share = (cpu() - c0) / (time.monotonic() - t0)
    red = m.call("tenant.list")["tenants"][0]["counters"]
    m.call("rx.set", enabled=False)
    assert share <= 0.25, f"the tenant's NF used {share:.0%} of a CPU"
    assert red["ingress_full"] > 0 and red["rx"] > red["ingress_full"]
    assert m.shutdown() == 0
    assert not os.path.exists(f"{cg}/cpu/zeronf/{m.name}")


def test_a_tenants_nf_started_outside_joins_its_cgroup(managers):
    """A tenant's NF that the manager did not launch (its user ran it)
    joins the tenant's cgroup when it registers, so the tenant's limits
    hold for it too; a tenant without limits leaves its NFs alone; the
    groups go when the manager stops."""
    m = managers(ports=["net_null0,no-rx=1"], rx_paused=True,
                 args=["--trust-group", "red:2047", "--trust-group",
                       "blue:2047", "--tenant",
                       "red=red,services=10-19,cpu=30,mem=200",
                       "--tenant", "blue=blue,services=20-29"])
    red = m.start_nf("forward", 10, "r1", lib_args=["--trust-group", "red"])
    blue = m.start_nf("forward", 20, "b1",
                      lib_args=["--trust-group", "blue"])
    mine = open(f"/proc/{red.proc.pid}/cgroup").read()
    assert f"/zeronf/{m.name}/tenant-red/outside" in mine, mine
    assert "/zeronf/" not in open(f"/proc/{blue.proc.pid}/cgroup").read()
    assert not any(e["type"] == "nf.cgroup"
                   for e in m.call("event.list")["events"])
    cg = "/sys/fs/cgroup"
    v2 = os.path.exists(f"{cg}/cgroup.controllers")
    d = f"{cg}/zeronf/{m.name}" if v2 else f"{cg}/cpu/zeronf/{m.name}"
    assert os.path.isdir(f"{d}/tenant-red/outside")
    assert m.shutdown() == 0
    assert not os.path.exists(d)


def test_a_deployment_with_tenants(tmp_path):
    """manager.tenants in a deployment file: `zeronf up` starts the
    manager with them and sets their chains; each tenant's traffic goes
    through its own NF to its own port; `zeronf apply` changes a
    tenant's chain; `zeronf down`."""
    from harness import DATA, unique_name, wait_for
    from pcaputil import assert_same_per_flow, flow_key, read_frames, \
        write_pcap
    order: dict = {}
    frames = []
    for f in read_frames(DATA / "pcap/bittorrent.pcap"):
        k = order.setdefault(flow_key(f), len(order))
        frames.append(f[:12] + (b"\x81\x00\x00\x0a" if k % 2 else
                                b"\x81\x00\x00\x14") + f[12:])
    write_pcap(tmp_path / "in.pcap", frames)
    name = unique_name("dt")
    f = tmp_path / "d.yaml"
    text = f"""\
name: {name}
manager:
  log_dir: logs
  trust_groups: [{{name: red}}, {{name: blue}}]
  tenants:
    - name: red
      trust_group: red
      service_ids: [10, 19]
      slices: [{{port: in, vlan: 10}}, {{port: red-out}}]
      chain: [fw-red, port:red-out]
    - name: blue
      trust_group: blue
      service_ids: [20, 29]
      slices: [{{port: in, vlan: 20}}, {{port: blue-out}}]
      chain: [fw-blue, port:blue-out]
ports:
  - name: in
    devargs: net_pcap0,rx_pcap=in.pcap
  - name: red-out
    devargs: net_pcap1,tx_pcap=red.pcap
  - name: blue-out
    devargs: net_pcap2,tx_pcap=blue.pcap
services:
  - name: fw-red
    id: 10
    trust_group: red
    nf: {{binary: zeronf-forward}}
  - name: fw-blue
    id: 20
    trust_group: blue
    nf: {{binary: zeronf-forward}}
"""
    f.write_text(text)

    from harness import zeronf_cli as zeronf
    r = zeronf("up", str(f))
    try:
        assert r.returncode == 0, r.stderr
        assert "chain of tenant red: svc:10,port:1" in r.stdout
        with Client(name) as c:
            wait_for(lambda: c.ports()[0]["rx"] >= len(frames), 30,
                     "the trace in")
            tl = {t["name"]: t for t in c.call("tenant.list")["tenants"]}
            assert tl["blue"]["chain"] == ["svc:20", "port:2"]
            assert tl["red"]["slices"] == [{"port": 0, "vlan": 10},
                                            {"port": 1}]
        f.write_text(text.replace("chain: [fw-red, port:red-out]",
                                  "chain: [fw-red, drop]"))
        r = zeronf("apply", str(f))
        assert r.returncode == 0 and \
            "~ chain of tenant red: svc:10,port:1 -> svc:10,drop" in \
            r.stdout, r.stdout + r.stderr
        with Client(name) as c:
            assert c.call("chain.get", tenant="red")["hops"] == \
                ["svc:10", "drop"]
    finally:
        r = zeronf("down", name)
    assert r.returncode == 0, r.stderr
    red = [x for x in frames if x[14:16] == b"\x00\x0a"]
    blue = [x for x in frames if x[14:16] == b"\x00\x14"]
    assert_same_per_flow(red, read_frames(tmp_path / "red.pcap"))
    assert_same_per_flow(blue, read_frames(tmp_path / "blue.pcap"))


def test_a_tenant_starts_and_stops_its_own_nfs(tenants):
    """nf.start on a tenant's socket: an NF installed with the manager, by
    name, sandboxed, in the tenant's group; the tenant sees, scales,
    calls, stops and removes its own NFs only."""
    from harness import scaled, wait_for
    m = tenants
    red = Client(path=tenant_socket_path(m.name, "red"))
    blue = Client(path=tenant_socket_path(m.name, "blue"))
    try:
        got = red.call("nf.start", name="red-more", binary="zeronf-forward",
                       service=11, replicas=2)
        assert got["sandbox"] is True and got["trust_group"] == "red"
        wait_for(lambda: sum(n["state"] == "running" for n in
                             red.call("nf.list")["nfs"]) == 3, scaled(30),
                 "red's launched NFs running")
        assert [x["name"] for x in red.call("launch.list")["launched"]] == \
            ["red-more"]
        assert blue.call("launch.list")["launched"] == []
        for params, message in (
                (dict(binary="/bin/sh"), "by name"),
                (dict(binary="../mgr/zeronf-mgr"), "by name"),
                (dict(binary="zeronf-forward", trust_group="blue"),
                 "tenant red's NFs are in its group"),
                (dict(binary="zeronf-forward", service=20),
                 "tenant red's NFs register its services only")):
            with pytest.raises(ZeroNFError, match=re.escape(message)):
                red.call("nf.start", **{"name": "x", "service": 12,
                                        **params})
        with pytest.raises(ZeroNFError, match="no launched NF named"):
            blue.call("nf.scale", name="red-more", replicas=1)
        theirs = next(n["instance"] for n in m.call("nf.list")["nfs"]
                      if n["name"] == "blue-fw")
        with pytest.raises(ZeroNFError, match="no running NF"):
            red.call("nf.stop", instance=theirs)
        with pytest.raises(ZeroNFError, match="no running NF"):
            red.call("nf.call", instance=theirs, command="x")
        red.call("nf.scale", name="red-more", replicas=1)
        red.call("nf.remove", name="red-more")
        wait_for(lambda: red.call("launch.list")["launched"] == [],
                 scaled(30), "removed")
        mine = next(n["instance"] for n in red.call("nf.list")["nfs"])
        assert red.call("nf.stop", instance=mine)["state"] == "stopping"
    finally:
        red.close()
        blue.close()
    assert m.shutdown() == 0

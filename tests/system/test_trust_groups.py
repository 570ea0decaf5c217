"""Trust groups (mgr/trust/group.c, lib/nf/nf_group.c): a group's packet pool
is a hugepage file of its own that only the group's NFs map. An NF of
another group, or of none, that reads a group's packet address faults:
the memory is not in its address space. The test NF (tests/unit/
nf_group.c) puts a secret in a buffer of its group's pool and peeks at
addresses it is given."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import stat
import struct
import subprocess
import threading
import time

import pytest

from harness import (DATA, HUGE_DIR, MGR_BIN, NF_BIN, traffic_ports,
                     unique_name, wait_for)
from zeronf import Client, ZeroNFError, runtime_dir

GROUPS = ["--trust-group", "a:1023", "--trust-group", "b:01023"]


def call(m, nf, cmd, **args):
    return m.call("nf.call", instance=nf.instance, command=cmd, args=args)


def test_a_groups_packets_are_not_mapped_outside_it(managers):
    m = managers(args=GROUPS)
    groups = {g["name"]: g for g in m.call("group.list")["groups"]}
    assert sorted(groups) == ["a", "b"]
    for g in groups.values():
        assert g["pool"] == {"size": 1023, "in_use": 0,  # 01023 is 1023
                             "foreign": 0, "header_repairs": 0}
        st = os.stat(g["file"])
        assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_size == g["bytes"]
        assert g["file"].startswith(str(HUGE_DIR))
    na = m.start_nf("test-group", 1, "in-a", lib_args=["--trust-group", "a"])
    nb = m.start_nf("test-group", 2, "in-b", lib_args=["--trust-group", "b"])
    n0 = m.start_nf("test-group", 3, "in-none")
    by_name = {n["name"]: n for n in m.call("nf.list")["nfs"]}
    assert by_name["in-a"]["trust_group"] == "a"
    assert by_name["in-b"]["trust_group"] == "b"
    assert by_name["in-none"]["trust_group"] is None
    groups = {g["name"]: g for g in m.call("group.list")["groups"]}
    assert groups["a"]["nfs"] == [na.instance]
    assert groups["b"]["nfs"] == [nb.instance]

    secret_a = call(m, na, "put", text="secret-of-a")
    secret_b = call(m, nb, "put", text="secret-of-b")
    shared = call(m, n0, "put", text="shared-pool")
    assert secret_a["pool"] == "zn_tg0" and secret_b["pool"] == "zn_tg1"
    assert m.call("group.list")["groups"][0]["pool"]["in_use"] == 1

    def peek(nf, put):
        return call(m, nf, "peek", addr=put["addr"], len=11)

    # Each group reads its own; nobody else can: the address faults.
    assert peek(na, secret_a) == {"text": "secret-of-a"}
    assert peek(nb, secret_b) == {"text": "secret-of-b"}
    for nf, put in ((nb, secret_a), (n0, secret_a), (na, secret_b),
                    (n0, secret_b)):
        assert peek(nf, put) == {"fault": True}
    # A group's NF maps none of the EAL's memory either (it is no DPDK
    # secondary, lib/nf/nf.c): the shared pool's packet faults for it.
    assert peek(na, shared) == {"fault": True}
    assert peek(n0, shared) == {"text": "shared-pool"}
    # What it maps of the manager's: its group's file, nothing else (an
    # NF of no group maps the EAL's hugepage files and configuration).
    def mapped(nf):
        with open(f"/proc/{nf.proc.pid}/maps") as f:
            return {ln.split(None, 5)[5].strip() for ln in f
                    if len(ln.split(None, 5)) == 6}
    rundir = runtime_dir(m.name) + "/"
    for nf, group in ((na, "a"), (nb, "b")):
        ours = {p for p in mapped(nf)
                if p.startswith(str(HUGE_DIR)) or p.startswith(rundir)}
        assert ours == {groups[group]["file"]}, ours
    assert any(p.startswith(str(HUGE_DIR)) and p not in
               {g["file"] for g in groups.values()} for p in mapped(n0))
    # The NFs that faulted are fine and still serve.
    assert all(n["state"] == "running" for n in m.call("nf.list")["nfs"])

    for nf in (na, nb, n0):
        nf.proc.signal(signal.SIGTERM)
        nf.proc.wait(10)
    wait_for(lambda: m.call("nf.list")["nfs"] == [], 10, "NFs gone")
    for g in m.call("group.list")["groups"]:
        assert g["pool"]["in_use"] == 0 and g["nfs"] == []
    files = [g["file"] for g in m.call("group.list")["groups"]]
    assert m.shutdown() == 0
    assert not any(os.path.exists(f) for f in files)
    assert "not returned" not in m.proc.output()


def test_a_slot_moves_between_homes(managers):
    """An NF's slot and rings live in its group's file, or in the EAL's
    memory for an NF of no group (mgr/trust/group_home.c): one slot, used in turn by
    NFs of group a, of no group, of group b and of a again, moves home
    each time, and each NF registers and forwards whole."""
    m = managers(ports=traffic_ports(DATA / "pcap/bittorrent.pcap"),
                 chain="1,port:1", rx_paused=True, args=GROUPS)
    base = m.pool()["in_use"]
    slot = None
    for group in ("a", None, "b", "a"):
        nf = m.start_nf("forward", 1, lib_args=["--trust-group", group]
                        if group else [])
        slot = nf.instance if slot is None else slot
        assert nf.instance == slot  # the lowest free slot: the same one
        m.call("rx.set", enabled=True)
        wait_for(lambda: (nf.stats() or {}).get("rx", 0) > 2000, 30,
                 f"an NF of group {group} forwarding")
        m.call("rx.set", enabled=False)
        st = m.wait_idle(baseline=base)
        assert sum(st["drops"].values()) == 0, st["drops"]
        nf.proc.signal(signal.SIGTERM)
        assert nf.proc.wait(10) == 0
        wait_for(lambda: m.nf_by_pid(nf.proc.pid) is None, 10, "NF gone")
    assert all(g["pool"]["in_use"] == 0
               for g in m.call("group.list")["groups"])
    assert m.shutdown() == 0


def test_a_groups_kicks_cannot_stand_for_anothers(managers):
    """Whatever comes on group a's kick socket is taken as of a's NFs
    only (mgr/nf/registry_kick.c): a process there flooding registration
    kicks for every low slot and generation, and REGISTER messages naming
    group b, cannot pass for NFs of b registering meanwhile (their pid is
    their own, the kernel's word on b's socket) nor make a ghost of b."""
    m = managers(args=GROUPS)
    path = os.path.join(runtime_dir(m.name), "zeronf-kick-tg0.sock")
    stop = threading.Event()

    def flood():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.setblocking(False)
        while not stop.is_set():
            for slot in range(2):  # b's NFs take slot 0, one by one
                for gen in range(1, 12):
                    for d in (b"R" + struct.pack("=HI", slot, gen),
                              b"M" + struct.pack("=BBHI", 1, 2, slot, gen)):
                        try:
                            s.sendto(d, path)
                        except OSError:
                            pass
            time.sleep(0.0001)
        s.close()

    t = threading.Thread(target=flood)
    t.start()
    try:
        for i in range(10):
            nb = m.start_nf("test-group", 2, f"in-b{i}",
                            lib_args=["--trust-group", "b"])
            n = m.nf_by_pid(nb.proc.pid)
            assert n is not None and n["trust_group"] == "b", \
                m.call("nf.list")["nfs"]
            nb.proc.signal(signal.SIGTERM)
            assert nb.proc.wait(10) == 0
            wait_for(lambda: m.call("nf.list")["nfs"] == [], 10, "gone")
    finally:
        stop.set()
        t.join()
    assert m.call("nf.list")["nfs"] == []
    assert m.shutdown() == 0


def test_a_group_the_manager_does_not_have(managers):
    m = managers(args=GROUPS)
    nf = m.start_nf("test-group", 1, lib_args=["--trust-group", "c"],
                    wait=False)
    assert nf.proc.wait(20) != 0
    assert f"manager '{m.name}' has no trust group 'c'" in nf.proc.output()
    assert m.call("nf.list")["nfs"] == []


@pytest.mark.parametrize("args,message", [
    (["--trust-group", ""], "a name of 1..31 characters"),
    (["--trust-group", ":100"], "a name of 1..31 characters"),
    (["--trust-group", "a/b"], "bad name 'a/b'"),
    (["--trust-group", "a", "--trust-group", "a:2000"], "'a' given twice"),
    (["--trust-group", "a:100"], "BUFFERS must be 1023..4194304, not '100'"),
    (["--trust-group", "a:lots"], "not 'lots'"),
    ([f"--trust-group=g{i}" for i in range(17)], "at most 16 --trust-group"),
])
def test_bad_trust_groups_are_refused(args, message):
    r = subprocess.run([str(MGR_BIN), "-i", "ztgbad", *args],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert message in r.stderr
    assert not list(HUGE_DIR.glob("ztgbadtg_*"))


def test_a_killed_managers_group_files_are_removed(tmp_path, managers):
    m = managers(args=GROUPS)
    files = [g["file"] for g in m.call("group.list")["groups"]]
    m.proc.signal(signal.SIGKILL)
    m.proc.wait(10)
    assert all(os.path.exists(f) for f in files)  # left behind
    m2 = managers(name=m.name, args=["--trust-group", "a:2047"])
    assert "removed stale state" in m2.proc.output()
    left = m2.call("group.list")["groups"]
    assert [g["name"] for g in left] == ["a"]
    assert not os.path.exists(files[1])
    assert m2.shutdown() == 0
    assert not os.path.exists(files[0])


def test_an_nf_binary_lists_the_option():
    out = subprocess.run([str(NF_BIN["forward"]), "--help"],
                         capture_output=True, text=True, timeout=10).stdout
    assert "--trust-group G" in out


@pytest.mark.skipif(shutil.which("bwrap") is None,
                    reason="no bwrap (bubblewrap)")
def test_sandboxed_nfs_cannot_open_another_groups_memory(managers):
    """What enforces it: a sandboxed NF (nf.start sandbox, trust_group)
    has its own group's file in its mount namespace and no other
    group's; mapping another group's pool is not possible, reading its
    addresses faults."""
    m = managers(args=GROUPS)
    files = {g["name"]: g["file"] for g in m.call("group.list")["groups"]}
    for name, group in (("sa", "a"), ("sb", "b"), ("s0", None)):
        spec = dict(name=name, binary=str(NF_BIN["test-group"]),
                    service=1, sandbox=True)
        if group:
            spec["trust_group"] = group
        assert m.call("nf.start", **spec)["trust_group"] == group
    wait_for(lambda: sorted(n["name"] for n in m.call("nf.list")["nfs"]
                            if n["state"] == "running") ==
             ["s0", "sa", "sb"], 30, "sandboxed NFs running")
    nfs = {n["name"]: n for n in m.call("nf.list")["nfs"]}

    def cmd(name, c, **args):
        return m.call("nf.call", instance=nfs[name]["instance"], command=c,
                      args=args)

    assert nfs["sa"]["trust_group"] == "a" and nfs["s0"]["trust_group"] is None
    secret = cmd("sa", "put", text="secret-of-a")
    assert cmd("sa", "peek", addr=secret["addr"], len=11) == \
        {"text": "secret-of-a"}
    assert cmd("sa", "open", path=files["a"]) == {"ok": True}
    for other in ("sb", "s0"):
        assert cmd(other, "peek", addr=secret["addr"]) == {"fault": True}
        assert cmd(other, "open", path=files["a"]) == {"errno": errno.ENOENT}
    assert cmd("sb", "open", path=files["b"]) == {"ok": True}
    assert cmd("sa", "open", path=files["b"]) == {"errno": errno.ENOENT}
    # Nor the EAL's memory of the manager, nor its configuration: a
    # group's NF is no DPDK secondary (an NF of no group is: it has them).
    eal = [str(p) for p in HUGE_DIR.glob(f"{m.name}*")
           if str(p) not in files.values()]
    eal += [os.path.join(runtime_dir(m.name), "config")]
    assert len(eal) >= 2
    for path in eal:
        assert cmd("s0", "open", path=path) == {"ok": True}
        for name in ("sa", "sb"):
            assert cmd(name, "open", path=path) == {"errno": errno.ENOENT}
    # Of the manager's kick sockets, its group's own (a socket: ENXIO to
    # open), not the shared one nor another group's: what comes on a
    # group's socket is taken as of that group's NFs only.
    kick = {k: os.path.join(runtime_dir(m.name), f)
            for k, f in (("shared", "zeronf-kick.sock"),
                         ("a", "zeronf-kick-tg0.sock"),
                         ("b", "zeronf-kick-tg1.sock"))}
    for name, own, other in (("sa", "a", "b"), ("sb", "b", "a")):
        assert cmd(name, "open", path=kick[own]) == {"errno": errno.ENXIO}
        for k in ("shared", other):
            assert cmd(name, "open", path=kick[k]) == {"errno": errno.ENOENT}
    # A launch into a group the manager does not have is refused.
    with pytest.raises(ZeroNFError, match="no trust group 'c'"):
        m.call("nf.start", name="sc", binary=str(NF_BIN["test-group"]),
               service=1, sandbox=True, trust_group="c")
    for name in ("sa", "sb", "s0"):
        m.call("nf.remove", name=name)
    wait_for(lambda: m.call("nf.list")["nfs"] == [], 20, "NFs gone")
    assert all(g["pool"]["in_use"] == 0
               for g in m.call("group.list")["groups"])
    assert m.shutdown() == 0


def test_a_deployment_with_trust_groups(tmp_path):
    """manager.trust_groups and a service's trust_group, through
    `zeronf up` (buffers with a leading zero: decimal)."""
    name = unique_name("tg")
    f = tmp_path / "tg.yaml"
    f.write_text(f"""\
name: {name}
manager:
  log_dir: logs
  trust_groups:
    - {{name: red, buffers: 02047}}
    - {{name: blue}}
ports:
  - devargs: net_null0
services:
  - name: fw
    nf: {{binary: {NF_BIN["forward"]}}}
    trust_group: red
  - name: mon
    nf: {{binary: {NF_BIN["forward"]}}}
chain: [fw, mon, drop]
""")

    from harness import zeronf_cli as zeronf
    r = zeronf("up", str(f))
    try:
        assert r.returncode == 0, r.stderr
        with Client(name) as c:
            groups = {g["name"]: g for g in c.call("group.list")["groups"]}
            nfs = {n["name"]: n for n in c.call("nf.list")["nfs"]}
        assert groups["red"]["pool"]["size"] == 2047
        assert groups["blue"]["pool"]["size"] == 8191
        assert nfs["fw"]["trust_group"] == "red"
        assert nfs["mon"]["trust_group"] is None
        assert groups["red"]["nfs"] == [nfs["fw"]["instance"]]
    finally:
        assert zeronf("down", name).returncode == 0
    assert not list(HUGE_DIR.glob(f"{name}tg_*"))


def test_a_group_nf_finds_the_tsc_frequency_the_manager_found(managers):
    """An NF of a trust group runs a primary EAL of its own, which
    measures the TSC's frequency where the CPU does not tell it: over a
    100 ms sleep in DPDK, which libzeronf makes 10 ms (lib/nf/
    nf_calib.c; the NF's start: make bench BENCH=nf_start). DPDK rounds
    the result to 10 MHz: it is the frequency an NF of no group takes
    from the manager's own measurement, each of several starts (within
    1 %: a preemption between DPDK's reads of the two clocks, which a
    busy machine may cause, shifts either measurement; the sleep's own
    length does not matter, it is measured)."""
    m = managers(args=["--trust-group", "a"])
    n0 = m.start_nf("test-group", 3, "in-none")
    want = call(m, n0, "tsc")["hz"]
    assert want > 0 and want % 10_000_000 == 0
    for i in range(3):
        na = m.start_nf("test-group", 1, f"in-a{i}",
                        lib_args=["--trust-group", "a"])
        got = call(m, na, "tsc")["hz"]
        assert abs(got - want) <= want / 100, (got, want)
        na.proc.signal(15)
        assert na.proc.wait(20) == 0
    assert m.shutdown() == 0

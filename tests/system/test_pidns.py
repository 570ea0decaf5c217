"""An NF in a PID namespace of its own (as a sandbox puts it, and as a
Kubernetes pod is): the manager takes its pid from the kernel (the
credentials of its REGISTER kick), not from the NF, so it watches and
reclaims the right process; the NF, which cannot see the manager's
process, watches the manager's instance lock. Several such NFs, each pid 1
of its namespace, all start: each claims a pid no other NF of the instance
has, forking past those taken (lib/nf/nf_pid.c: DPDK names a secondary's
files after its pid)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from harness import NF_BIN, scaled, wait_for

pytestmark = pytest.mark.skipif(shutil.which("unshare") is None,
                                reason="no unshare(1)")


def in_pidns(m, name: str, log: Path, env: dict | None = None
             ) -> subprocess.Popen:
    f = open(log, "w")
    return subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc",
                             str(NF_BIN["forward"]), "-i", m.name, "-s", "1",
                             "-n", name], stdout=f, stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {})})


def nf_named(m, name: str) -> dict | None:
    return next((n for n in m.call("nf.list")["nfs"] if n["name"] == name),
                None)


def test_registers_with_its_real_pid_and_is_reclaimed(managers, tmp_path):
    m = managers(ports=["net_null0,no-rx=1"], chain="1,port:0")
    p = in_pidns(m, "nsfwd", tmp_path / "nf.log")
    wait_for(lambda: (nf_named(m, "nsfwd") or {}).get("state") == "running",
             scaled(20), "NF in its PID namespace running")
    pid = nf_named(m, "nsfwd")["pid"]
    # Its pid in the manager's namespace: the NF process itself (in its
    # own namespace it is pid 1), a child of unshare.
    assert pid != 1 and pid != p.pid
    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert cmd[0].endswith(b"zeronf-forward") and b"nsfwd" in cmd
    stat = Path(f"/proc/{pid}/stat").read_text().split()
    assert int(stat[3]) == p.pid  # its parent: unshare
    # Killed: the manager sees the right process die and reclaims it.
    p.send_signal(signal.SIGKILL)  # unshare; --fork's child gets SIGKILL
    subprocess.run(["kill", "-9", str(pid)], check=False)
    p.wait(10)
    wait_for(lambda: nf_named(m, "nsfwd") is None, scaled(10), "reclaimed")
    assert m.call("status")["registry"]["died"] == 1
    assert m.shutdown() == 0
    assert not m.leftovers()  # its EAL files (named with pid 1) removed


def test_notices_its_manager_gone_without_seeing_it(managers, tmp_path):
    m = managers(ports=["net_null0,no-rx=1"], chain="1,port:0")
    p = in_pidns(m, "nsfwd", tmp_path / "nf.log")
    wait_for(lambda: (nf_named(m, "nsfwd") or {}).get("state") == "running",
             scaled(20), "NF running")
    m.proc.signal(signal.SIGKILL)
    m.proc.wait(10)
    assert p.wait(scaled(10)) == 3
    assert "is gone, exiting" in (tmp_path / "nf.log").read_text()


def children(pid: int) -> list[int]:
    p = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in p.read_text().split()] if p.exists() else []


def ns_pid(pid: int) -> int:
    """@p pid's pid in its own namespace (NSpid's last)."""
    for ln in Path(f"/proc/{pid}/status").read_text().splitlines():
        if ln.startswith("NSpid:"):
            return int(ln.split()[-1])
    raise AssertionError(f"no NSpid for {pid}")


def test_nfs_each_pid_1_of_a_namespace_all_start_in_the_slots_given(
        managers, tmp_path):
    """Three NFs, each pid 1 of its own namespace, each given its slot by
    number (ZERONF_SLOT=N: its lock file is all a pod has, the device
    plugin's mount): all three run, in those slots, the second and third
    as children of their namespace's first process, with pids no other
    NF of the instance has. A fourth given a held slot is refused, and
    says so. SIGTERM to a namespace's init stops its NF cleanly."""
    m = managers(ports=["net_null0,no-rx=1"], chain="1,port:0")
    ps = [in_pidns(m, f"ns{k}", tmp_path / f"nf{k}.log",
                   {"ZERONF_SLOT": str(5 + k)}) for k in range(3)]
    for k in range(3):
        wait_for(lambda: (nf_named(m, f"ns{k}") or {}).get("state") ==
                 "running", scaled(20), f"NF ns{k} running")
    nfs = {n["name"]: n for n in m.call("nf.list")["nfs"]}
    assert sorted(nfs[f"ns{k}"]["instance"] for k in range(3)) == [5, 6, 7]
    inner = sorted(ns_pid(nfs[f"ns{k}"]["pid"]) for k in range(3))
    assert inner == [1, 2, 3], inner  # each its own, none twice
    logs = "".join((tmp_path / f"nf{k}.log").read_text() for k in range(3))
    assert "pid 2: 1 pid(s) of other NFs passed over" in logs
    assert "pid 3: 2 pid(s) of other NFs passed over" in logs
    # a held slot: refused, with the reason
    late = in_pidns(m, "late", tmp_path / "late.log", {"ZERONF_SLOT": "5"})
    assert late.wait(scaled(20)) != 0
    assert "the slot ZERONF_SLOT names is another NF's" in \
        (tmp_path / "late.log").read_text()
    # SIGTERM to each namespace's init (the NF, or its waiter)
    for k, p in enumerate(ps):
        init = children(p.pid)[0]
        os.kill(init, signal.SIGTERM)
        assert p.wait(scaled(20)) == 0, (tmp_path / f"nf{k}.log").read_text()
    wait_for(lambda: not m.call("nf.list")["nfs"], scaled(10), "all left")
    assert m.call("status")["registry"]["died"] == 0
    assert m.shutdown() == 0
    assert not m.leftovers()

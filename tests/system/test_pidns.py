"""An NF in a PID namespace of its own (as a sandbox puts it): the manager
takes its pid from the kernel (the credentials of its REGISTER kick), not
from the NF, so it watches and reclaims the right process; the NF, which
cannot see the manager's process, watches the manager's instance lock."""
from __future__ import annotations

import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from harness import NF_BIN, scaled, wait_for

pytestmark = pytest.mark.skipif(shutil.which("unshare") is None,
                                reason="no unshare(1)")


def in_pidns(m, name: str, log: Path) -> subprocess.Popen:
    f = open(log, "w")
    return subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc",
                             str(NF_BIN["forward"]), "-i", m.name, "-s", "1",
                             "-n", name], stdout=f, stderr=subprocess.STDOUT)


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

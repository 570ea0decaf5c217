"""Sandboxed NFs (nf.start sandbox: true): they carry traffic, come back
after a crash, run with no capability in the instance's PID namespace
under their cgroup limits; and a program launched in the same sandbox
proves the isolation: it sees no host process, no other instance's files
or hugepages, cannot reach the control socket, has no network, and
cannot write its working directory nor anything of the host's."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness import DATA, HUGE_DIR, NF_BIN, conserved, scaled, \
    traffic_ports, unique_name, wait_for
from zeronf import ZeroNFError
from zeronf.client import runtime_dir

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="no bwrap (bubblewrap)")

PROBE = r"""#!/bin/sh
# Runs in the sandbox as an NF would, says what it can and cannot do.
echo "pids: $(ls /proc | grep '^[0-9]' | tr '\n' ' ')"
echo "init: $(tr '\0' ' ' < /proc/1/cmdline)"
echo "other: $(ls /var/run/dpdk/$OTHER 2>&1 | head -1)"
echo "runtime: $(ls /var/run/dpdk | tr '\n' ' ')"
echo "huge: $(ls $HUGE | tr '\n' ' ')"
echo "drivers: $(ls $DRIVERS | tr '\n' ' ')"
python3 -c "
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect('/var/run/dpdk/$SELF/zeronf.sock')
    print('control: connected')
except OSError as e:
    print('control: refused', e.errno)
"
echo "net: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status | tr '\t\n' '  '
echo
for f in /usr/probe-x /etc/probe-x /root/probe-x $HUGE/probe-x $DRIVERS/x.so; do
  touch $f 2>/dev/null && echo "wrote $f"
done
touch ./probe-here 2>/dev/null && echo "wrote here"
touch /tmp/probe-tmp && echo "wrote tmp"
echo done
"""


def driver_dir(pid: int) -> Path:
    """DPDK's driver directory, as the EAL library of process @pid
    carries it (what dpdk-pmdinfo.py reads)."""
    eal = next(ln.split()[-1] for ln in
               Path(f"/proc/{pid}/maps").read_text().splitlines()
               if "/librte_eal.so" in ln)
    data = Path(eal).read_bytes()
    i = data.index(b"DPDK_PLUGIN_PATH=") + len(b"DPDK_PLUGIN_PATH=")
    return Path(data[i:data.index(b"\0", i)].decode()).resolve()


def launched(m, name):
    return next(s for s in m.call("launch.list")["launched"]
                if s["name"] == name)


def nf_named(m, name):
    return next((n for n in m.call("nf.list")["nfs"] if n["name"] == name),
                None)


def test_sandboxed_replicas_carry_traffic_and_come_back(managers):
    m = managers(ports=traffic_ports(DATA / "pcap/bittorrent.pcap"),
                 chain="1,port:1", rx_paused=True)
    base = m.pool()["in_use"]
    m.call("nf.start", name="fw", binary=str(NF_BIN["forward"]), service=1,
           replicas=2, sandbox=True, memory_mb=64, cpus="0-1")
    wait_for(lambda: all((nf_named(m, n) or {}).get("state") == "running"
                         for n in ("fw", "fw.1")), scaled(20), "sandboxed")
    for n in ("fw", "fw.1"):
        pid = nf_named(m, n)["pid"]
        status = Path(f"/proc/{pid}/status").read_text()
        assert "CapEff:\t0000000000000000" in status
        assert "NoNewPrivs:\t1" in status
        nspid = [ln for ln in status.splitlines()
                 if ln.startswith("NSpid")][0].split()[1:]
        assert len(nspid) == 2 and nspid[0] == str(pid)  # a pid of its own
        cg = Path(f"/proc/{pid}/cgroup").read_text()
        assert f"/zeronf/{m.name}/{n}" in cg
    # Issue 29, item 15: launch.list (zeronf nf list) names the NF's own
    # pid, which a signal pauses, and bubblewrap's apart.
    for i in launched(m, "fw")["instances"]:
        assert i["pid"] == nf_named(m, i["name"])["pid"]
        assert i["sandbox_pid"] not in (None, i["pid"])
        assert "bwrap" in Path(f"/proc/{i['sandbox_pid']}/comm").read_text()
    r = subprocess.run([sys.executable, "-m", "zeronf", "-i", m.name, "nf",
                        "list"], capture_output=True, text=True, timeout=30)
    assert r.stdout.split()[:6] == ["nf", "name", "service", "state", "pid",
                                    "sandbox_pid"], r.stdout
    # Both in the same namespace, with different pids there.
    ns = {os.readlink(f"/proc/{nf_named(m, n)['pid']}/ns/pid")
          for n in ("fw", "fw.1")}
    assert len(ns) == 1 and ns != {os.readlink("/proc/self/ns/pid")}
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] > 300, 20,
             "traffic")
    # The sandbox shows DPDK's driver directory with the pool's driver
    # only: the NFs loaded net_null's themselves and send on their queues.
    for n in ("fw", "fw.1"):
        assert nf_named(m, n)["handoff"]["ports"] == [1]
    victim = nf_named(m, "fw.1")["pid"]
    os.kill(victim, signal.SIGKILL)
    wait_for(lambda: (nf_named(m, "fw.1") or {}).get("pid") not in
             (None, victim), scaled(20), "fw.1 back")
    assert launched(m, "fw")["restarts"] == 1
    m.call("rx.set", enabled=False)
    rx, out, dropped = conserved(m.wait_idle(baseline=base))
    assert rx == out + dropped
    assert m.shutdown() == 0
    assert not m.leftovers()
    for ctl in ("cpuset", "memory"):
        assert not Path(f"/sys/fs/cgroup/{ctl}/zeronf/{m.name}").exists()


def test_what_a_sandboxed_nf_cannot_do(managers, tmp_path):
    other = managers(ports=["net_null0,no-rx=1"])
    m = managers(ports=["net_null0,no-rx=1"])
    probe = tmp_path / "probe.sh"
    drivers = driver_dir(m.proc.pid)
    probe.write_text(PROBE.replace("$OTHER", other.name)
                     .replace("$DRIVERS", str(drivers))
                     .replace("$SELF", m.name)
                     .replace("$HUGE", str(HUGE_DIR)))
    probe.chmod(0o755)
    # The probe ignores the NF options it is given and exits 0.
    m.call("nf.start", name="probe", binary=str(probe), service=1,
           sandbox=True, restart="never")
    log = Path(m.call("launch.list")["log_dir"]) / "probe.log"
    wait_for(lambda: log.exists() and "done" in log.read_text(),
             scaled(20), "probe done")
    out = dict(ln.split(": ", 1) for ln in log.read_text().splitlines()
               if ": " in ln)
    pids = out["pids"].split()
    # Only the instance namespace's own (its init, the probe and the
    # pipeline it runs): small numbers, none of the host's.
    assert all(int(p) < 50 for p in pids) and str(m.proc.pid) not in pids, \
        pids
    assert "zeronf-run" in out["init"]
    assert "No such file" in out["other"]
    assert out["runtime"].split() == [m.name]
    huge = out["huge"].split()
    assert huge and all(h.startswith(f"{m.name}map_") for h in huge)
    # DPDK's drivers: only the packet pool's mempool driver, the vdev bus
    # and the PMD of the port the NF transmits on (net_null) with what it
    # needs (the PCI bus): the files that lead to them, where the host has
    # hundreds; read-only.
    assert len(list(drivers.iterdir())) > 10
    seen = out["drivers"].split()
    assert {d.split(".so")[0] for d in seen} == {
        "librte_mempool_ring", "librte_bus_vdev", "librte_net_null",
        "librte_bus_pci"}, seen
    assert not (drivers / "x.so").exists() and \
        f"wrote {drivers}/x.so" not in log.read_text()
    assert out["control"].startswith("refused")
    assert out["net"].split() == ["lo"]
    text = log.read_text()
    assert "CapEff: 0000000000000000" in text and "NoNewPrivs: 1" in text
    for f in ("/usr/probe-x", "/etc/probe-x", "/root/probe-x"):
        assert not Path(f).exists()
    assert not (HUGE_DIR / "probe-x").exists()
    # Its working directory (the manager's: the deployment file's) it
    # reads, never writes; its own /tmp it writes, which is not the host's.
    cwd = Path(os.readlink(f"/proc/{m.proc.pid}/cwd"))
    assert "wrote here" not in text and not (cwd / "probe-here").exists()
    assert "wrote tmp" in text and not Path("/tmp/probe-tmp").exists()
    assert m.shutdown() == 0 and not m.leftovers()
    assert Path(runtime_dir(other.name)).exists()  # untouched


def _mount(tmp: Path, *args: str) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", *args, str(tmp)], capture_output=True,
                       text=True)
    if r.returncode != 0:
        pytest.skip(f"mount {' '.join(args)}: {r.stderr.strip()}")
    return tmp


def test_cgroup_root_delegated_v1(managers, tmp_path):
    """--cgroup-root: a directory holding v1's cpuset and memory
    hierarchies, here subgroups of the host's bound there (what a
    container runtime delegates): the replica's groups go below them,
    with their limits, and are gone after."""
    v1 = Path("/sys/fs/cgroup")
    if (v1 / "cgroup.controllers").exists() or \
            not (v1 / "cpuset/cpuset.cpus").exists():
        pytest.skip("no cgroup v1 cpuset hierarchy")
    root = tmp_path / "cg"
    sub = unique_name("deleg")
    made, mounted = [], []
    try:
        for ctl in ("cpuset", "memory"):
            d = v1 / ctl / sub
            d.mkdir()
            made.append(d)
            if ctl == "cpuset":  # a v1 cpuset group takes no task empty
                for f in ("cpuset.cpus", "cpuset.mems"):
                    (d / f).write_text((v1 / ctl / f).read_text())
            mounted.append(_mount(root / ctl, "--bind", str(d)))
        m = managers(ports=["net_null0"], chain="1,drop",
                     args=["--cgroup-root", str(root)])
        m.call("nf.start", name="lim", binary=str(NF_BIN["forward"]),
               service=1, sandbox=True, memory_mb=96, cpus="0")
        wait_for(lambda: (nf_named(m, "lim") or {}).get("rx", 0) > 0,
                 scaled(20), "limited NF running")
        pid = nf_named(m, "lim")["pid"]
        cg = Path(f"/proc/{pid}/cgroup").read_text()
        assert f"/{sub}/zeronf/{m.name}/lim" in cg, cg
        mine = v1 / "memory" / sub / "zeronf" / m.name / "lim"
        assert int((mine / "memory.limit_in_bytes").read_text()) == 96 << 20
        assert (v1 / "cpuset" / sub / "zeronf" / m.name / "lim" /
                "cpuset.cpus").read_text().strip() == "0"
        assert m.shutdown() == 0 and not m.leftovers()
        for ctl in ("cpuset", "memory"):
            assert not (v1 / ctl / sub / "zeronf").exists()
            assert not (v1 / ctl / "zeronf" / m.name).exists()
    finally:
        for p in reversed(mounted):
            subprocess.run(["umount", str(p)], check=False)
        for d in reversed(made):
            for g in sorted(d.glob("zeronf/**/"), reverse=True):
                g.rmdir()
            d.rmdir()


def test_cgroup_v2_without_its_controllers(managers, tmp_path):
    """A real cgroup v2 file system whose cpuset and memory controllers
    are not available (on this host they belong to v1 hierarchies; on a
    v2 host: not delegated): a limit is refused with the reason and what
    the group has, nothing is left behind, and an NF without limits
    still starts."""
    root = _mount(tmp_path / "cg2", "-t", "cgroup2", "none")
    try:
        have = (root / "cgroup.controllers").read_text().split()
        if "memory" in have:
            pytest.skip("this cgroup v2 has the memory controller")
        m = managers(ports=["net_null0"], chain="1,drop",
                     args=["--cgroup-root", str(root)])
        with pytest.raises(ZeroNFError) as e:
            m.call("nf.start", name="lim", binary=str(NF_BIN["forward"]),
                   service=1, memory_mb=64)
        msg = str(e.value)
        assert "cgroup v2: the memory controller is not available in " \
            f"{root} (it has: {' '.join(have) or 'none'})" in msg, msg
        assert not (root / "zeronf").exists()
        assert not m.call("launch.list")["launched"]
        m.call("nf.start", name="free", binary=str(NF_BIN["forward"]),
               service=1)
        wait_for(lambda: (nf_named(m, "free") or {}).get("rx", 0) > 0,
                 scaled(20), "NF without limits running")
        assert m.shutdown() == 0 and not m.leftovers()
        assert not (root / "zeronf").exists()
    finally:
        subprocess.run(["umount", str(root)], check=False)

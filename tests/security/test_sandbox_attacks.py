"""Attacks from inside a sandbox (issue 28, items 1-3 and the cgroup part
of 8): a hostile program launched by the manager as a sandboxed NF of
trust group ga (tests/security/attacker.py) goes after an NF of group gb
through every process it can see (/proc/PID/mem, /proc/PID/root, ptrace,
signals), every path it can name, every directory and file it can write,
the deployment file and its own program, and the manager's logs (a link
the manager, root, would follow on the next restart). Each must fail;
before, it read and wrote gb's pool through /proc/2/root and /proc/2/mem,
reached gb's kick socket, rewrote the deployment file and its program,
and had the manager create a root file through a log link."""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import stat
from pathlib import Path

import pytest

from harness import HUGE_DIR, NF_BIN, scaled, unique_name, wait_for
from zeronf import ZeroNFError
from zeronf.client import runtime_dir

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="no bwrap (bubblewrap)")

ATTACKER = Path(__file__).with_name("attacker.py")
GROUP_BASE, GROUP_SPAN = 0x500000000000, 64 << 30  # mgr/trust/group.c


def nf_named(m, name):
    return next((n for n in m.call("nf.list")["nfs"] if n["name"] == name),
                None)


def launched(m, name):
    return next((s for s in m.call("launch.list")["launched"]
                 if s["name"] == name), None)


def reports(log: Path) -> list[dict]:
    out = []
    for ln in log.read_text(errors="replace").splitlines():
        try:
            out.append(json.loads(ln))
        except ValueError:
            pass
    return out


def run_attacker(m, name: str, spec: dict, wait_runs: int = 1, **launch):
    """Launch the attacker; wait until it finished @wait_runs runs (each
    ends with a "done" line in its log). @return (log path, reports)."""
    m.call("nf.start", name=name, binary=launch.pop("binary"),
           service=launch.pop("service", 1), sandbox=True,
           args=[json.dumps(spec)], **launch)
    log = Path(m.call("launch.list")["log_dir"]) / f"{name}.log"

    def runs():
        if not log.exists():
            return False
        done = sum(r.get("what") == "done" for r in reports(log))
        return done >= wait_runs
    wait_for(runs, scaled(60), f"{name}: {wait_runs} run(s) done")
    return log, reports(log)


def uid_of(pid: int) -> int:
    """The real uid of host process @pid."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("Uid:"))


def check_syscalls_refused(rep: list[dict]) -> None:
    """The seccomp filter (mgr/nf/sandbox_seccomp.c): every call the
    attacker made to widen the kernel's surface answered EPERM. Without
    it, a user namespace, a key, its own memory read through
    process_vm_readv and PTRACE_TRACEME were its to have."""
    calls = [r for r in rep if r.get("what") == "syscalls"]
    assert calls, rep
    for c in calls:
        assert set(c["errno"].values()) == {errno.EPERM}, c["errno"]


def check_nothing_reached(rep: list[dict], victim_cmd: str,
                          name: str) -> None:
    procs = [r for r in rep if r.get("what") == "process"]
    # It sees no process but itself and its own sandbox's init (bwrap's
    # reaper, pid 1, in its namespaces with its credentials: whatever it
    # does to that one it could do itself).
    assert all(victim_cmd not in p["cmdline"] for p in procs), procs
    assert {p["pid"] for p in procs} == {1}, procs
    assert all(p["cmdline"].split()[0].endswith("bwrap") and
               f"--hostname {name} " in p["cmdline"] for p in procs), procs
    for p in procs:
        assert p["root_file"] != "ok" and p["root_kick"] != "ok", p
    errors = [r for r in rep if r.get("what") == "error"]
    assert not errors, errors


def test_a_group_nf_cannot_reach_another_group_or_the_host(managers,
                                                            tmp_path):
    deploy = tmp_path / "a deployment"
    deploy.mkdir()
    (deploy / "zeronf.yaml").write_text("name: x\n")
    program = deploy / "attacker.py"       # a program beside the file
    shutil.copy(ATTACKER, program)
    program.chmod(0o755)  # ga's user runs it: others may read and run
    target = tmp_path / "root-was-here"
    m = managers(ports=["net_null0,no-rx=1"], cwd=deploy,
                 args=["--trust-group", "ga", "--trust-group", "gb",
                       "--log-dir", "logs"])
    groups = {g["name"]: g for g in m.call("group.list")["groups"]}
    rundir = runtime_dir(m.name)
    m.call("nf.start", name="victim", binary=str(NF_BIN["forward"]),
           service=2, sandbox=True, trust_group="gb")
    wait_for(lambda: (nf_named(m, "victim") or {}).get("state") ==
             "running", scaled(30), "victim running")
    victim_pid = nf_named(m, "victim")["pid"]
    marker = unique_name(".zn-attack")
    spec = {
        "victim_file": groups["gb"]["file"],
        "victim_addr": GROUP_BASE + 1 * GROUP_SPAN + 4096,
        "victim_kick": f"{rundir}/zeronf-kick-tg1.sock",
        "shared_kick": f"{rundir}/zeronf-kick.sock",
        "huge": str(HUGE_DIR), "rundir": rundir,
        "deploy": str(deploy / "zeronf.yaml"),
        "logs": [str(deploy / "logs"), f"{rundir}/logs"],
        "target": str(target), "marker": marker, "exit": 1,
    }
    before = (deploy / "zeronf.yaml").read_bytes(), program.read_bytes()
    # It fails on purpose: the restart (on-failure) opens its log again,
    # where it tried to leave a link to the target.
    log, rep = run_attacker(m, "evil", spec, wait_runs=2,
                            binary=str(program), trust_group="ga",
                            memory_mb=64)
    assert launched(m, "evil")["restarts"] >= 1
    m.call("nf.remove", name="evil")
    check_nothing_reached(rep, "zeronf-forward", "evil")
    for d in (r for r in rep if r.get("what") == "direct"):
        assert d["victim_file"] != "ok" and d["victim_kick"] != "ok", d
        assert d["shared_kick"] != "ok", d
        assert d["deploy"] != "ok" and d["program"] != "ok", d
    for links in (r for r in rep if r.get("what") == "links"):
        assert "linked" not in links.values(), links
    assert not target.exists()
    assert ((deploy / "zeronf.yaml").read_bytes(), program.read_bytes()) \
        == before
    # Where it could write: nothing of the host's (each directory it
    # wrote a marker in is its own: no marker on the host) but its own
    # group's memory.
    for w in (r for r in rep if r.get("what") == "writable"):
        assert w["dirs"], w  # its /tmp at least: the walk ran
        on_host = [d for d in w["dirs"] if os.path.lexists(
            os.path.join(d, marker))]
        assert not on_host, on_host
        assert set(w["files"]) <= {groups["ga"]["file"]}, w["files"]
    # No slot's lock file to take (it would have taken every free one).
    for s in (r for r in rep if r.get("what") == "slots"):
        assert s["locked"] == [], s
    # Its cgroup namespace: its own cgroup is its root, the host's
    # hierarchy is not shown (it is in zeronf/<instance>/evil there).
    me = next(r for r in rep if r.get("what") == "self")
    assert all(ln.endswith(":/") for ln in me["cgroup"].split()), me
    assert "zeronf" not in me["cgroup"]
    # Not root: a user of its group's own (gb's NF: the next id), with no
    # capability left to regain and no other group.
    victim_uid = uid_of(victim_pid)
    assert me["uid"] == me["gid"] != 0 and me["groups"] == [], me
    assert victim_uid == me["uid"] + 1, (victim_uid, me["uid"])
    assert set(me["caps"].values()) == {0} and me["no_new_privs"] == "1", me
    assert os.stat(groups["ga"]["file"]).st_uid == me["uid"]
    check_syscalls_refused(rep)
    # The victim ran through it all.
    assert nf_named(m, "victim")["pid"] == victim_pid
    assert m.shutdown() == 0


def test_the_manager_follows_no_link_to_write_a_log(managers, tmp_path):
    """The runtime directory, where a manager started by hand keeps the
    logs, is shared with sandboxed NFs of no group: a log name there that
    is a link (symbolic or hard) or a FIFO is refused, not followed or
    waited on, and such an NF finds the log directory out of its reach."""
    m = managers(ports=["net_null0,no-rx=1"])
    logs = Path(m.call("launch.list")["log_dir"])
    assert logs.parent == Path(runtime_dir(m.name))
    target = tmp_path / "root-was-here"
    (logs / "sym.log").symlink_to(target)
    elsewhere = tmp_path / "a file of someone's"
    elsewhere.write_text("theirs\n")
    os.link(elsewhere, logs / "hard.log")
    os.mkfifo(logs / "fifo.log")
    for name in ("sym", "hard", "fifo"):
        with pytest.raises(ZeroNFError, match="not a plain file"):
            m.call("nf.start", name=name, binary=str(NF_BIN["forward"]),
                   service=1, restart="never")
    assert not target.exists() and elsewhere.read_text() == "theirs\n"
    assert not m.call("launch.list")["launched"]
    # A sandboxed NF of no group has the runtime directory, not the logs.
    marker = unique_name(".zn-attack")
    _, rep = run_attacker(m, "evil0", {
        "victim_file": "/nonexistent", "victim_addr": 0,
        "victim_kick": "/nonexistent", "shared_kick": "/nonexistent",
        "deploy": "/nonexistent", "logs": [str(logs)],
        "target": str(target), "marker": marker},
        binary=str(ATTACKER), restart="never")
    check_syscalls_refused(rep)  # the same filter for NFs of no group
    for links in (r for r in rep if r.get("what") == "links"):
        assert "linked" not in links.values(), links
    assert not target.exists()
    assert not any(p.name == marker for p in logs.iterdir())
    for p in Path(runtime_dir(m.name)).glob(marker):
        p.unlink()  # the runtime directory it shares by design
    m.call("nf.remove", name="evil0")
    assert m.shutdown() == 0


def test_a_program_others_may_write_is_not_launched(managers, tmp_path):
    """A program (or a directory above it) that a user other than root
    could rewrite, or one in a directory sandboxed NFs write, is refused
    at nf.start and at each restart: it would run as the next replica."""
    m = managers(ports=["net_null0,no-rx=1"])
    d = tmp_path / "progs"
    d.mkdir()
    prog = d / "fwd"
    prog.write_text(f'#!/bin/sh\nexec "{NF_BIN["forward"]}" "$@"\n')
    os.chown(prog, 0, 100)  # writable by a group of others (users)
    prog.chmod(0o775)
    with pytest.raises(ZeroNFError, match="may be written by a user"):
        m.call("nf.start", name="a", binary=str(prog), service=1)
    prog.chmod(0o755)
    d.chmod(0o777)     # a directory anyone may write, not sticky
    with pytest.raises(ZeroNFError, match="may be written by a user"):
        m.call("nf.start", name="a", binary=str(prog), service=1)
    d.chmod(0o755)
    inrun = Path(runtime_dir(m.name)) / "fwd"
    shutil.copy(prog, inrun)
    try:
        with pytest.raises(ZeroNFError, match="NFs may write"):
            m.call("nf.start", name="a", binary=str(inrun), service=1)
    finally:
        inrun.unlink()
    # Checked again at each start: made writable after its launch, it is
    # not restarted.
    m.call("nf.start", name="a", binary=str(prog), service=1)
    wait_for(lambda: (nf_named(m, "a") or {}).get("state") == "running",
             scaled(20), "a running")
    prog.chmod(prog.stat().st_mode | stat.S_IWOTH)
    m.call("nf.restart", name="a")
    wait_for(lambda: any(e["type"] == "nf.spawn_failed" and
                         "may be written" in e["message"]
                         for e in m.call("event.list")["events"]),
             scaled(20), "restart refused")
    assert m.shutdown() == 0


def test_a_group_nf_cannot_take_every_slot(managers):
    """Every free NF slot's lock file locked by one NF: no other NF could
    claim a slot and start. A sandbox of a group has none to lock (its
    launcher claims its slot and hands it the lock); NFs of other groups
    launched while it holds on still start."""
    m = managers(ports=["net_null0,no-rx=1"],
                 args=["--trust-group", "ga", "--trust-group", "gb"])
    rundir = runtime_dir(m.name)
    log, rep = run_attacker(m, "evil", {
        "victim_file": "/nonexistent", "victim_addr": 0,
        "victim_kick": "/nonexistent", "shared_kick": "/nonexistent",
        "deploy": "/nonexistent", "logs": [], "rundir": rundir,
        "target": "/nonexistent", "marker": unique_name(".zn"),
        "hold": 120}, binary=str(ATTACKER), trust_group="ga",
        restart="never")
    assert [s["locked"] for s in rep if s.get("what") == "slots"] == [[]]
    for name, group in (("late", "gb"), ("late2", "ga")):
        m.call("nf.start", name=name, binary=str(NF_BIN["forward"]),
               service=2, sandbox=True, trust_group=group)
    wait_for(lambda: {n["name"] for n in m.call("nf.list")["nfs"]
                      if n["state"] == "running"} >= {"late", "late2"},
             scaled(30), "NFs launched after it running")
    m.call("nf.remove", name="evil")
    assert m.shutdown() == 0


def processes_named(argv0: str, arg: str | None = None) -> list[int]:
    """Host processes whose argv[0] is @argv0 (or that have @arg among
    their arguments, whatever their argv[0])."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if d.name.isdigit() and (argv[0] == argv0.encode() if arg is None
                                 else arg.encode() in argv[1:2]):
            out.append(int(d.name))
    return out


def test_a_killed_group_nfs_children_go_with_it(managers):
    """Re-registration after being marked dead: an NF the manager kills
    (for lies, or by hand) that left a child behind (a new session, out of
    its process group) would have that child claim its slot again once
    reclaimed. A launched NF of a trust group is pid 2 of a PID namespace
    of its own: when it dies, so does the namespace's init (bwrap), and
    the kernel kills everything left in it."""
    m = managers(ports=["net_null0,no-rx=1"], args=["--trust-group", "ga"])
    child = unique_name("zn-orphan")
    run_attacker(m, "evil", {
        "victim_file": "/nonexistent", "victim_addr": 0,
        "victim_kick": "/nonexistent", "shared_kick": "/nonexistent",
        "deploy": "/nonexistent", "logs": [], "target": "/nonexistent",
        "marker": unique_name(".zn"), "fork": child, "hold": 600},
        binary=str(ATTACKER), trust_group="ga", restart="never")
    kids = wait_for(lambda: processes_named(child), scaled(10),
                    "the child it left")
    # The NF's own process (the interpreter running the attacker; bwrap
    # has the script among its arguments too, further on)
    nf = processes_named("", arg=str(ATTACKER))
    assert len(nf) == 1, nf
    os.kill(nf[0], signal.SIGKILL)
    wait_for(lambda: not processes_named(child), scaled(10),
             f"the child {kids} gone with it")
    m.call("nf.remove", name="evil")
    assert m.shutdown() == 0


def test_a_program_its_groups_user_cannot_run_is_refused(managers, tmp_path):
    """An NF of a trust group runs as its group's user, not root: a
    program that user may not read and run (its mode, or a directory of
    the working directory above it that others may not enter; the
    directories bwrap makes on the way are its own, 0755) is refused at
    nf.start, saying why, rather than failing in the sandbox."""
    deploy = tmp_path / "d"
    deploy.mkdir()
    hidden = deploy / "hidden"
    hidden.mkdir()
    hidden.chmod(0o700)
    prog = hidden / "attacker.py"
    shutil.copy(ATTACKER, prog)
    prog.chmod(0o755)
    m = managers(ports=["net_null0,no-rx=1"], cwd=deploy,
                 args=["--trust-group", "ga"])
    spec = {"victim_file": "/nonexistent", "victim_addr": 0,
            "victim_kick": "/nonexistent", "shared_kick": "/nonexistent",
            "deploy": "/nonexistent", "logs": [], "target": "/nonexistent",
            "marker": unique_name(".zn")}
    with pytest.raises(ZeroNFError, match="may not read and run"):
        m.call("nf.start", name="x", binary=str(prog), service=1,
               sandbox=True, trust_group="ga", args=[json.dumps(spec)])
    hidden.chmod(0o711)  # others may pass: it runs, as ga's user
    _, rep = run_attacker(m, "y", spec, binary=str(prog), trust_group="ga",
                          restart="never")
    assert next(r for r in rep if r.get("what") == "self")["uid"] != 0
    prog.chmod(0o700)  # and not read
    with pytest.raises(ZeroNFError, match="may not read and run"):
        m.call("nf.start", name="z", binary=str(prog), service=1,
               sandbox=True, trust_group="ga", args=[json.dumps(spec)])
    m.call("nf.remove", name="y")
    assert m.shutdown() == 0

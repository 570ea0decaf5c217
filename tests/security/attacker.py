#!/usr/bin/python3
"""A hostile NF (tests/security/): launched by the manager in a sandbox in
place of an NF program, it tries every way out it can think of and prints
what it got as one JSON object per line, then exits with the status the
test asks for. It ignores the NF options the launcher gives it; its own
come after "--" as one JSON object:

  victim_file   another trust group's hugepage file (its path on the host)
  victim_addr   an address in that group's memory
  victim_kick   that group's kick socket
  shared_kick   the kick socket of NFs of no group
  huge, rundir  the hugetlbfs and runtime directories
  deploy        the deployment file beside which the manager runs
  logs          directories where the manager writes NFs' logs
  target        a host path the attacker wants root to create
  marker        the name of the files it leaves where it could write
  hold          seconds it stays, holding what it took (the slots' locks)
  fork          (optional) a name: a child is left behind, a process
                called so (argv[0]), that would outlive the NF if it could
  exit          its exit status

Everything is tried, nothing is assumed: the test decides what counts."""
from __future__ import annotations

import ctypes
import fcntl
import glob
import json
import os
import signal
import socket
import sys

PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p,
                        ctypes.c_void_p]


def say(**kw) -> None:
    print(json.dumps(kw), flush=True)


def err(e: OSError) -> str:
    return os.strerror(e.errno) if e.errno else str(e)


def try_open(path: str, flags: int) -> str:
    try:
        fd = os.open(path, flags | os.O_NONBLOCK)
    except OSError as e:
        return err(e)
    os.close(fd)
    return "ok"


def try_connect(path: str) -> str:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.connect(path)
        return "ok"
    except OSError as e:
        return err(e)
    finally:
        s.close()


def try_mem(pid: int, addr: int) -> str:
    try:
        fd = os.open(f"/proc/{pid}/mem", os.O_RDWR)
    except OSError as e:
        return "open: " + err(e)
    try:
        os.pread(fd, 8, addr)
        return "read"
    except OSError as e:
        return "read: " + err(e)
    finally:
        os.close(fd)


def try_ptrace(pid: int) -> str:
    r = libc.ptrace(PTRACE_SEIZE, pid, None, None)
    if r == 0:
        return "seized"
    return os.strerror(ctypes.get_errno())


def processes(a: dict) -> None:
    """Every process it can see: what it is, and what of it it reaches."""
    me = os.getpid()
    for p in sorted(int(x) for x in os.listdir("/proc") if x.isdigit()):
        if p == me:
            continue
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read() \
                .replace(b"\0", b" ").decode(errors="replace")
        except OSError as e:
            cmd = "?" + err(e)
        root = f"/proc/{p}/root"
        got = {
            "pid": p, "cmdline": cmd,
            "mem": try_mem(p, a["victim_addr"]),
            "ptrace": try_ptrace(p),
            "root_file": try_open(root + a["victim_file"], os.O_RDWR),
            "root_kick": try_connect(root + a["victim_kick"]),
            "fd_dir": "ok" if _listable(f"/proc/{p}/fd") else "refused",
        }
        try:
            os.kill(p, signal.SIGCONT)
            got["signal"] = "ok"
        except OSError as e:
            got["signal"] = err(e)
        say(what="process", **got)


def _listable(path: str) -> bool:
    try:
        os.listdir(path)
        return True
    except OSError:
        return False


def writable(a: dict) -> None:
    """Every directory it can create a file in, and every file it can open
    to write, outside /proc, /sys and /dev: a marker is left in each such
    directory for the test to look for on the host."""
    dirs, files = [], []
    for top, subdirs, names in os.walk("/", onerror=lambda e: None):
        if top in ("/proc", "/sys", "/dev"):
            subdirs[:] = []
            continue
        if top == "/usr":  # read-only as a whole: tried once, not walked
            subdirs[:] = []
        try:
            fd = os.open(os.path.join(top, a["marker"]),
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.close(fd)
            dirs.append(top)
        except OSError:
            pass
        for n in names:
            path = os.path.join(top, n)
            if n == a["marker"] or os.path.islink(path):
                continue
            if try_open(path, os.O_WRONLY | os.O_APPEND) == "ok":
                files.append(path)
    say(what="writable", dirs=dirs, files=files)


def direct(a: dict) -> None:
    """Paths named outright, and the links the manager might follow."""
    say(what="direct",
        victim_file=try_open(a["victim_file"], os.O_RDWR),
        victim_kick=try_connect(a["victim_kick"]),
        shared_kick=try_connect(a["shared_kick"]),
        deploy=try_open(a["deploy"], os.O_WRONLY | os.O_APPEND),
        program=try_open(os.path.realpath(sys.argv[0]),
                         os.O_WRONLY | os.O_APPEND))
    links = {}
    for d in a["logs"]:
        for n in os.listdir(d) if os.path.isdir(d) else []:
            path = os.path.join(d, n)
            try:
                os.unlink(path)
                os.symlink(a["target"], path)
                links[path] = "linked"
            except OSError as e:
                links[path] = err(e)
        path = os.path.join(d, "evil.log")
        try:
            os.symlink(a["target"], path)
            links[path] = "linked"
        except OSError as e:
            links[path] = err(e)
    say(what="links", **links)


HELD: list[int] = []


def slots(a: dict) -> None:
    """Every NF slot's lock file it can find, locked and kept: no NF
    could claim a slot then (libzeronf takes the first it can lock)."""
    locked = []
    for path in glob.glob(os.path.join(a["rundir"], "zeronf-nf*.lock")):
        try:
            fd = os.open(path, os.O_RDWR)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            HELD.append(fd)
            locked.append(path)
        except OSError:
            pass
    say(what="slots", locked=locked)


# x86_64 system call numbers
SYSCALLS = {"unshare": 272, "keyctl": 250, "bpf": 321,
            "perf_event_open": 298, "userfaultfd": 323,
            "io_uring_setup": 425, "process_vm_readv": 310, "mount": 165,
            "setns": 308, "open_by_handle_at": 304, "ptrace": 101}
CLONE_NEWUSER, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING = \
    0x10000000, 0, -2


def syscalls(a: dict) -> None:
    """System calls that widen what the kernel shows it: a user
    namespace (capabilities inside it), keys, eBPF, perf events,
    userfaultfd, io_uring, reading a process's memory (its own), mounts,
    namespaces of others, file handles, ptrace. What each answered: 0 if
    it worked, else the errno."""
    libc.syscall.restype = ctypes.c_long
    buf = ctypes.create_string_buffer(8)
    iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
    args = {
        "unshare": (CLONE_NEWUSER,),
        "keyctl": (KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1),
        "bpf": (0, None, 0),               # BPF_MAP_CREATE, no attributes
        "perf_event_open": (None, 0, -1, -1, 0),
        "userfaultfd": (0,),
        "io_uring_setup": (1, None),
        "process_vm_readv": (os.getpid(), iov, 1, iov, 1, 0),
        "mount": (b"none", b"/tmp", b"tmpfs", 0, None),
        "setns": (0, 0),
        "open_by_handle_at": (-1, None, 0),
        "ptrace": (0, 0, None, None),      # PTRACE_TRACEME
    }
    got = {}
    for name, nr in SYSCALLS.items():
        ctypes.set_errno(0)
        rc = libc.syscall(ctypes.c_long(nr), *[
            ctypes.c_long(x) if isinstance(x, int) else x
            for x in args[name]])
        got[name] = 0 if rc >= 0 else ctypes.get_errno()
    say(what="syscalls", errno=got)


def main() -> int:
    a = json.loads(sys.argv[sys.argv.index("--") + 1])
    status = dict(ln.split(":\t", 1) for ln in
                  open("/proc/self/status").read().splitlines()
                  if ":\t" in ln)
    say(what="self", pid=os.getpid(), uid=os.getuid(), gid=os.getgid(),
        groups=os.getgroups(), cgroup=open("/proc/self/cgroup").read(),
        caps={k: int(status[k], 16) for k in
              ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
        no_new_privs=status.get("NoNewPrivs", "").strip())
    for step in (processes, direct, slots, writable, syscalls):
        try:
            step(a)
        except Exception as e:  # noqa: BLE001 - reported, the test decides
            say(what="error", step=step.__name__, error=repr(e))
    if a.get("fork") and os.fork() == 0:
        os.setsid()  # out of the NF's session and process group too
        os.execv("/usr/bin/sleep", [a["fork"], "600"])
    say(what="done")
    if a.get("hold"):
        import time
        time.sleep(float(a["hold"]))
    return int(a.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())

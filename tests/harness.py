"""Test harness: real manager and NF processes, driven through the control
socket. Every process runs under a timeout and is killed at teardown; every
manager has its own instance name (EAL file prefix) so tests can run side
by side, and teardown checks that the instance left nothing behind."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from zeronf import Client, ZeroNFError, runtime_dir

REPO = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("ZERONF_BUILD", REPO / "build"))
MGR_BIN = BUILD / "mgr" / "zeronf-mgr"
NF_BIN = {n: BUILD / "nfs" / f"zeronf-{n}"
          for n in ("forward", "monitor", "speed-tester", "steer", "dpi",
                    "router", "flowmon", "filter", "firewall",
                    "ratelimit", "nat", "lb")}
BUNDLE_BIN = BUILD / "nfs" / "zeronf-bundle"
NF_BIN["test-objs"] = BUILD / "tests/unit/zeronf-test-objs"
NF_BIN["test-chaos"] = BUILD / "tests/unit/zeronf-test-chaos"
NF_BIN["test-rcu-hold"] = BUILD / "tests/unit/zeronf-test-rcu-hold"
NF_BIN["test-group"] = BUILD / "tests/unit/zeronf-test-group"
NF_BIN["test-liar"] = BUILD / "tests/unit/zeronf-test-liar"
NF_BIN["test-vandal"] = BUILD / "tests/unit/zeronf-test-vandal"
NF_BIN["test-hog"] = BUILD / "tests/unit/zeronf-test-hog"
CORPORA = Path(os.environ.get("ZERONF_CORPORA",
                              REPO.parent / "shared" / "corpora"))
DATA = REPO / "data"
HUGE_DIR = Path(os.environ.get("ZERONF_HUGE_DIR", "/mnt/huge"))

_seq = itertools.count()

# Start-up deadlines scale with this machine: conftest measures how long
# a manager and an NF take to come up here, at the start of the session,
# against START_REFERENCE_S (this project's 2-core VM, warm), and sets
# TIME_SCALE (>= 1) from it; ZERONF_TIME_SCALE overrides.
START_REFERENCE_S = 0.6
TIME_SCALE = float(os.environ.get("ZERONF_TIME_SCALE", "1"))


def scaled(seconds: float) -> float:
    return seconds * TIME_SCALE


# every name given, with the test it was given in: the session's end
# checks that no instance of them left files (tests/conftest.py)
NAMES: list[tuple[str, str]] = []


def unique_name(tag: str = "t") -> str:
    n = f"zt{os.getpid() % 100000}{tag}{next(_seq)}"
    NAMES.append((n, os.environ.get("PYTEST_CURRENT_TEST", "?")))
    return n


def wait_for(pred, timeout: float, what: str, interval: float = 0.02):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}"
                       f" (last: {last!r})")


class Proc:
    """A child process with its output in a log file."""

    def __init__(self, argv: list[str], log: Path, env: dict | None = None,
                 cwd: Path | None = None):
        self.argv = [str(a) for a in argv]
        self.log = log
        self._logf = open(log, "wb")
        self.p = subprocess.Popen(self.argv, stdout=self._logf,
                                  stderr=subprocess.STDOUT,
                                  env={**os.environ, **(env or {})},
                                  cwd=cwd, start_new_session=True)

    @property
    def pid(self) -> int:
        return self.p.pid

    def alive(self) -> bool:
        return self.p.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive():
            os.kill(self.p.pid, sig)

    def wait(self, timeout: float) -> int:
        return self.p.wait(timeout=timeout)

    def kill(self) -> None:
        if self.alive():
            os.kill(self.p.pid, signal.SIGKILL)
            self.p.wait(timeout=10)

    def output(self) -> str:
        self._logf.flush()
        return self.log.read_text(errors="replace")

    def close(self) -> None:
        self.kill()
        self._logf.close()


class Manager:
    def __init__(self, tmp: Path, ports: list[str] | None = None,
                 chain: str | None = None, name: str | None = None,
                 args: list[str] | None = None, rx_paused: bool = False,
                 wait: bool = True, cwd: Path | None = None):
        self.name = name or unique_name("m")
        self.tmp = tmp
        self.cwd = cwd  # the manager's and its NFs' (relative devargs)
        argv = [MGR_BIN, "-i", self.name, "--log-level", "info"]
        for p in ports or []:
            argv += ["-p", p]
        if chain:
            argv += ["-c", chain]
        if rx_paused:
            argv.append("--rx-paused")
        argv += args or []
        self.proc = Proc(argv, tmp / f"{self.name}.log", cwd=cwd)
        self.nfs: list[NF] = []
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout: float = 20.0) -> None:
        def ready():
            if not self.proc.alive():
                raise RuntimeError(f"manager exited ({self.proc.p.returncode}):"
                                   f"\n{self.proc.output()}")
            try:
                with self.client() as c:
                    return c.status()["ready"]
            except ZeroNFError:
                return False
        wait_for(ready, scaled(timeout), f"manager {self.name} ready")

    def client(self) -> Client:
        return Client(self.name)

    def call(self, method: str, **params):
        try:
            with self.client() as c:
                return c.call(method, **params)
        except TimeoutError as e:
            raise TimeoutError(f"{method}: no reply from manager "
                               f"{self.name}\n{self.diagnose()}") from e

    def diagnose(self) -> str:
        """What a manager that stopped answering is doing: every thread's
        stack (gdb, when installed) and the end of its log, so that a
        failure seen once in CI can be understood from its output."""
        out = []
        gdb = shutil.which("gdb")
        if gdb and self.proc.alive():
            try:
                r = subprocess.run(
                    [gdb, "-p", str(self.proc.pid), "-batch", "-nx",
                     "-ex", "thread apply all bt 12"],
                    capture_output=True, text=True, timeout=30)
                out.append("\n".join(
                    ln for ln in r.stdout.splitlines()
                    if ln.startswith(("Thread", "#"))))
            except (subprocess.SubprocessError, OSError) as e:
                out.append(f"(gdb: {e})")
        out.append("--- log (end) ---")
        out.append(self.proc.output()[-6000:])
        return "\n".join(out)

    def start_nf(self, kind: str, service: int, name: str | None = None,
                 nf_args: list[str] | None = None,
                 lib_args: list[str] | None = None, wait: bool = True,
                 env: dict | None = None) -> "NF":
        nf = NF(self, kind, service, name, nf_args, lib_args, env)
        self.nfs.append(nf)
        if wait:
            nf.wait_registered()
        return nf

    def start_bundle(self, members: list, name: str = "bundle",
                     lib_args: list[str] | None = None,
                     wait: bool = True) -> "Bundle":
        """NFs in one thread (zeronf-bundle): members are (kind, service,
        name[, nf_args]), turned in that order."""
        b = Bundle(self, members, name, lib_args)
        self.nfs.append(b)
        if wait:
            b.wait_registered()
        return b

    def nf_by_pid(self, pid: int) -> dict | None:
        for n in self.call("nf.list")["nfs"]:
            if n["pid"] == pid:
                return n
        return None

    def stats(self) -> dict:
        return self.call("stats")

    def pool(self) -> dict:
        return self.call("status")["pool"]

    def wait_idle(self, timeout: float = 30.0, settle: float = 0.3,
                  baseline: int = 0, leeway: int = 0) -> dict:
        """Wait until nothing moves: port counters stable, NF rings empty,
        every buffer back in the pool (but `baseline` buffers a port keeps
        for itself, such as net_pcap's infinite_rx copies, and up to
        `leeway` more that the test knows may be left)."""
        def snapshot():
            st = self.stats()
            key = json.dumps([[p["rx"], p["tx"]] for p in st["ports"]] +
                             [[n["rx"], n["tx"], n["staged"],
                               n["rx_ring"]["count"] if n["rx_ring"] else 0,
                               n["tx_ring"]["count"] if n["tx_ring"] else 0]
                              for n in st["nfs"]])
            return st, key
        deadline = time.monotonic() + timeout
        st, key = snapshot()
        while time.monotonic() < deadline:
            time.sleep(settle)
            st2, key2 = snapshot()
            pool = st2["status"]["pool"]
            rings_empty = all((n["rx_ring"] or {}).get("count", 0) == 0 and
                              (n["tx_ring"] or {}).get("count", 0) == 0 and
                              n["staged"] == 0 for n in st2["nfs"])
            if key2 == key and rings_empty and \
                    baseline <= pool["in_use"] <= baseline + leeway:
                return st2
            st, key = st2, key2
        keys = ("name", "pid", "state", "rx", "tx", "dequeued", "staged",
                "rx_ring", "tx_ring", "drops", "pool_held")
        nfs = [{k: n.get(k) for k in keys} for n in st["nfs"]]
        raise TimeoutError(f"manager {self.name} never went idle (pool in "
                           f"use {baseline} wanted): "
                           f"{json.dumps(st['status'])}; ports "
                           f"{json.dumps(st['ports'])}; nfs "
                           f"{json.dumps(nfs)}")

    def shutdown(self, timeout: float = 20.0) -> int:
        if self.proc.alive():
            try:
                self.call("shutdown")
            except ZeroNFError:
                self.proc.signal(signal.SIGTERM)
            rc = self.proc.wait(timeout)
        else:
            rc = self.proc.p.returncode
        for nf in self.nfs:
            try:
                nf.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        return rc

    def leftovers(self) -> list[str]:
        """Files this instance left behind (there should be none)."""
        return instance_files(self.name)

    def remove_leftovers(self) -> None:
        """Remove what a killed manager of this name left behind."""
        shutil.rmtree(runtime_dir(self.name), ignore_errors=True)
        for pat in ("map_*", "tg_*"):
            for p in HUGE_DIR.glob(f"{self.name}{pat}"):
                p.unlink(missing_ok=True)

    def close(self) -> None:
        for nf in self.nfs:
            nf.proc.close()
        self.proc.close()


def instance_files(name: str) -> list[str]:
    """What a manager of instance @p name leaves on the machine: its
    runtime directory's files (or the directory) and its hugepage files."""
    left = []
    rd = Path(runtime_dir(name))
    if rd.exists():
        left += [str(p) for p in rd.iterdir()] or [str(rd)]
    if HUGE_DIR.exists():
        left += [str(p) for p in HUGE_DIR.glob(f"{name}map_*")]
        left += [str(p) for p in HUGE_DIR.glob(f"{name}tg_*")]
    return left


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def zeronf_cli(*args, timeout: float = 90) -> subprocess.CompletedProcess:
    """The CLI as an operator runs it: python -m zeronf ARGS."""
    import sys
    return subprocess.run([sys.executable, "-m", "zeronf", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def conserved(st: dict) -> tuple[int, int, int]:
    """(in, out, dropped) over all ports: at idle, in == out + dropped."""
    rx = sum(p["rx"] for p in st["ports"])
    tx = sum(p["tx"] for p in st["ports"])
    return rx, tx, sum(st["drops"].values())


def run_then_idle(m: "Manager", base: int, pkts: int, ready=None,
                  timeout: float = 20) -> dict:
    """RX on until port 1 sent more than pkts (and ready(), when given,
    holds), then off and idle: every packet that entered went out, none
    dropped (asserted). @p base: the pool's buffers in use at idle. The
    idle stats."""
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][1]["tx"] > pkts, timeout,
             "traffic")
    if ready is not None:
        wait_for(ready, timeout, "traffic everywhere it should go")
    m.call("rx.set", enabled=False)
    st = m.wait_idle(baseline=base)
    rx, tx, dropped = conserved(st)
    assert rx == tx > 0 and dropped == 0, st["drops"]
    return st


def tap_in_two_out(managers, tmp_path: Path, tag: str, chain: str):
    """A manager whose port 0 is a net_tap (frames go in one at a time with
    the returned AF_PACKET socket's send()) and whose ports 1 and 2 write
    pcaps. Returns (manager, socket, [port 1's pcap, port 2's pcap])."""
    import socket
    outs = [tmp_path / "out1.pcap", tmp_path / "out2.pcap"]
    tap = f"zn{tag}{tmp_path.name[-6:]}".replace("_", "")[:14]
    m = managers(ports=[f"net_tap0,iface={tap}",
                        f"net_pcap1,tx_pcap={outs[0]}",
                        f"net_pcap2,tx_pcap={outs[1]}"], chain=chain)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((tap, 0))
    return m, s, outs


def traffic_ports(trace: Path) -> list[str]:
    """Port 0 replays a trace forever (net_pcap infinite_rx); port 1 is a
    sink (net_null without RX)."""
    return [f"net_pcap0,rx_pcap={trace},infinite_rx=1",
            "net_null0,no-rx=1"]


class Bundle:
    """zeronf-bundle's process: one Proc, several NFs (by name)."""

    def __init__(self, mgr: Manager, members: list, name: str,
                 lib_args: list[str] | None):
        self.mgr = mgr
        self.name = name
        self.members = [m[2] for m in members]
        argv = [BUNDLE_BIN, "-i", mgr.name, "-n", name] + \
            (lib_args or []) + ["--"]
        for m in members:
            argv += ["--nf", f"{m[0]}:{m[1]}:{m[2]}"] + \
                (list(m[3]) if len(m) > 3 else [])
        self.proc = Proc(argv, mgr.tmp / f"{mgr.name}-{name}-"
                         f"{next(_seq)}.log", cwd=mgr.cwd)
        self.instances: dict[str, int] = {}

    def nfs(self) -> dict:
        """Its NFs as nf.list shows them, by name."""
        return {n["name"]: n for n in self.mgr.call("nf.list")["nfs"]
                if n["pid"] == self.proc.pid}

    def wait_registered(self, timeout: float = 20.0) -> dict:
        def reg():
            if not self.proc.alive():
                raise RuntimeError(f"bundle {self.name} exited "
                                   f"({self.proc.p.returncode}):\n"
                                   f"{self.proc.output()}")
            mine = self.nfs()
            ok = all(mine.get(n, {}).get("state") == "running"
                     for n in self.members)
            return mine if ok else None
        mine = wait_for(reg, scaled(timeout),
                        f"bundle {self.name} registered")
        self.instances = {n: mine[n]["instance"] for n in self.members}
        return mine


class NF:
    def __init__(self, mgr: Manager, kind: str, service: int,
                 name: str | None, nf_args: list[str] | None,
                 lib_args: list[str] | None, env: dict | None = None):
        self.mgr = mgr
        self.kind = kind
        self.name = name or f"{kind}{service}"
        argv = [NF_BIN[kind], "-i", mgr.name, "-s", str(service), "-n",
                self.name] + (lib_args or [])
        if nf_args:
            argv += ["--"] + nf_args
        self.proc = Proc(argv, mgr.tmp / f"{mgr.name}-{self.name}-"
                         f"{next(_seq)}.log", env=env, cwd=mgr.cwd)
        self.instance: int | None = None

    def wait_registered(self, timeout: float = 20.0) -> dict:
        def reg():
            if not self.proc.alive():
                raise RuntimeError(f"NF {self.name} exited "
                                   f"({self.proc.p.returncode}):\n"
                                   f"{self.proc.output()}")
            info = self.mgr.nf_by_pid(self.proc.pid)
            # "starting" until its init is done: not yet sent packets;
            # "stopping" before it ran: its init failed and it is leaving
            # (it exits next: the check above then says so)
            return info if info and info["state"] == "running" else None
        info = wait_for(reg, scaled(timeout), f"NF {self.name} registered")
        self.instance = info["instance"]
        return info

    def stats(self) -> dict | None:
        return self.mgr.nf_by_pid(self.proc.pid)

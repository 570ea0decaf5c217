"""Start-up and teardown are one list (mgr/core/subsys.h): each subsystem
registers its init and teardown, the manager runs the inits in order and,
at exit or when one fails, the teardowns of all it began in reverse. A
start that fails at any step (the test hook ZN_MGR_FAIL_AT makes it fail
there) exits 1, names the step, and leaves nothing behind: no runtime
directory or control socket, no hugepage file, no cgroup, no process."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from harness import (DATA, HUGE_DIR, MGR_BIN, Manager, instance_files,
                     unique_name)

CGROUP = Path("/sys/fs/cgroup")


def subsystems() -> list[str]:
    r = subprocess.run([MGR_BIN, "--subsystems"], capture_output=True,
                       text=True, timeout=30, check=True)
    return r.stdout.split()


def leftovers(name: str) -> list[str]:
    """The instance's files (harness.instance_files), any other hugepage
    file of its name, its cgroups, its processes."""
    left = instance_files(name)
    left += [str(p) for p in HUGE_DIR.glob(f"{name}*") if str(p) not in left]
    for d in (CGROUP / "zeronf" / name, CGROUP / "cpu/zeronf" / name,
              CGROUP / "memory/zeronf" / name):
        if d.exists():
            left.append(str(d))
    ps = subprocess.run(["pgrep", "-f", f"-i {name} "], capture_output=True,
                        text=True)
    left += [f"process {p}" for p in ps.stdout.split()]
    return left


def argv(name: str) -> list[str]:
    """A manager with something for every step to make: two ports (one
    receiving into a trust group's pool), a group, a tenant, checks on."""
    return [MGR_BIN, "-i", name, "--log-level", "info",
            "-p", f"net_pcap0,rx_pcap={DATA / 'pcap/bittorrent.pcap'}",
            "-p", "net_null0,no-rx=1", "--port-group", "1=red",
            "--trust-group", "red:1023", "--tenant",
            "red=red,services=10-19,cpu=50,mem=200", "--rx-paused"]


def test_the_order_is_the_documented_one():
    names = subsystems()
    assert names[:3] == ["instance", "loop", "eal"], names
    assert names[-1] == "run", names
    assert len(names) == len(set(names)) > 20, names
    # each after what it uses
    for a, b in [("shared_memory", "trust_groups"), ("trust_groups",
                 "owner_maps"), ("owner_maps", "ports"), ("route",
                 "flow_director"), ("flow_director", "balancing"),
                 ("registry", "homes"), ("private_heap", "workers")]:
        assert names.index(a) < names.index(b), (a, b)
    hacking = (Path(__file__).parents[2] / "docs/hacking.md").read_text()
    assert " → ".join(names) in hacking


def test_a_start_failing_at_any_step_leaves_nothing(tmp_path):
    for step in subsystems():
        name = unique_name("sf")
        r = subprocess.run(argv(name), capture_output=True, text=True,
                           timeout=120,
                           env=dict(os.environ, ZN_MGR_FAIL_AT=step))
        out = r.stdout + r.stderr
        assert r.returncode == 1, f"{step}: exit {r.returncode}\n{out}"
        assert f"start-up failed at {step}" in out, out
        assert not leftovers(name), (step, leftovers(name), out)
    # and a start that does not fail, stopped, leaves nothing either
    m = Manager(tmp_path, args=argv(name)[3:])
    assert m.call("status")["ready"]
    assert m.shutdown() == 0
    assert not leftovers(m.name), leftovers(m.name)


def test_an_unknown_step_is_refused(tmp_path):
    name = unique_name("sf")
    r = subprocess.run(argv(name), capture_output=True, text=True,
                       timeout=60, env=dict(os.environ,
                                            ZN_MGR_FAIL_AT="nosuch"))
    assert r.returncode == 1
    assert "ZN_MGR_FAIL_AT=nosuch: no such subsystem" in r.stdout + r.stderr
    assert not leftovers(name)

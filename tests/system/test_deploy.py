"""System tests of deployments through the CLI, as an operator runs them:
zeronf up FILE, status, top, nf, logs, events, apply (diff, then the
changes), down; a failing NF stops `up` with its log and leaves nothing;
an instance cannot be brought up twice."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import DATA, unique_name, wait_for
from pcaputil import read_frames
from zeronf import Client
from zeronf.client import runtime_dir

TRACE = DATA / "pcap/bittorrent.pcap"


def zeronf(*args, timeout=90, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zeronf", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)


def deployment(tmp: Path, name: str, replicas: int = 2, extra: str = "",
               chain: str = "[mon, fw, port:out]", version: int = 1) -> Path:
    f = tmp / f"{name}-v{version}.yaml"
    f.write_text(f"""\
name: {name}
manager:
  log_dir: logs
ports:
  - name: in
    devargs: net_pcap0,rx_pcap={TRACE}
  - name: out
    devargs: net_pcap1,rx_pcap={TRACE},tx_pcap=out.pcap
services:
  - name: mon
    nf: {{binary: zeronf-monitor}}
  - name: fw
    nf: {{binary: zeronf-forward}}
    replicas: {replicas}
{extra}chain: {chain}
""")
    return f


@pytest.fixture
def instance(tmp_path):
    names = []

    def make(**kw):
        name = unique_name("d")
        names.append(name)
        return name, deployment(tmp_path, name, **kw)
    yield make
    for n in names:  # whatever a failed test left running
        if Path(runtime_dir(n)).exists():
            zeronf("down", n)


def test_up_operate_apply_down(instance, tmp_path):
    name, f = instance()
    r = zeronf("up", f)
    assert r.returncode == 0, r.stderr
    assert f"manager '{name}' up" in r.stdout
    assert "[2/2] fw (svc:2): 2 x zeronf-forward" in r.stdout
    assert "RX enabled" in r.stdout
    frames = read_frames(TRACE)
    with Client(name) as c:
        wait_for(lambda: c.ports()[1]["tx"] >= 2 * len(frames), 30,
                 "both traces through")
        assert c.chain_get() == ["svc:1", "svc:2", "port:1"]
        assert {n["name"] for n in c.nfs()} == {"mon", "fw", "fw.1"}
    r = zeronf("-i", name, "status")
    assert r.returncode == 0 and f"instance  {name}" in r.stdout
    r = zeronf("-i", name, "top", "-n", "2", "-d", "0.2")
    assert r.returncode == 0 and r.stdout.count("rx/s") == 4
    r = zeronf("-i", name, "nf", "list")
    assert r.returncode == 0 and "fw.1" in r.stdout
    r = zeronf("-i", name, "events", "--json")
    types = [json.loads(x)["type"] for x in r.stdout.splitlines()]
    assert types.count("nf.launch") == 3
    # Scale through the CLI, then the file's replicas are back with apply.
    r = zeronf("-i", name, "nf", "scale", "fw", "3")
    assert r.returncode == 0, r.stderr
    r = zeronf("apply", f, "--dry-run")
    assert r.returncode == 0 and "~ service fw: replicas 3 -> 2" in \
        r.stdout
    # A new version of the file: another service, a rule, a new chain.
    f2 = deployment(tmp_path, name, replicas=1, version=2,
                    chain="[mon, fw2, port:out]",
                    extra="  - name: fw2\n    nf: {binary: zeronf-forward}"
                          "\nrules:\n  - match: {proto: udp}\n"
                          "    chain: [fw, port:out]\n")
    r = zeronf("apply", f2)
    assert r.returncode == 0, r.stderr
    for line in ("+ service fw2 (svc:3): 1 x zeronf-forward",
                 "~ service fw: replicas 3 -> 1",
                 "~ chain: svc:1,svc:2,port:1 -> svc:1,svc:3,port:1",
                 '+ rule {"proto": "udp"} -> svc:2,port:1', "applied: 4"):
        assert line in r.stdout, r.stdout
    with Client(name) as c:
        assert c.chain_get() == ["svc:1", "svc:3", "port:1"]
        wait_for(lambda: {n["name"] for n in c.nfs()} ==
                 {"mon", "fw", "fw2"}, 20, "fw.1, fw.2 gone, fw2 up")
        assert len(c.call("rule.list")["rules"]) == 1
    r = zeronf("apply", f2)
    assert "already matches" in r.stdout
    r = zeronf("apply", f)  # back: fw2 removed, rule removed
    assert r.returncode == 0 and "- service fw2" in r.stdout and \
        "- rule 1" in r.stdout
    r = zeronf("-i", name, "logs", "fw")
    assert r.returncode == 0
    r = zeronf("down", name)
    assert r.returncode == 0, r.stderr
    assert not Path(runtime_dir(name)).exists()
    logs = tmp_path / "logs"
    assert {p.name for p in logs.glob("*.log")} >= {
        "manager.log", "mon.log", "fw.log", "fw.1.log", "fw2.log"}
    # Every packet went out (the same trace came in twice, on two ports:
    # so as a multiset).
    assert sorted(read_frames(tmp_path / "out.pcap")) == sorted(frames * 2)


def test_up_stops_at_a_failing_nf_and_leaves_nothing(instance, tmp_path):
    name, f = instance(extra="  - name: dpi\n    nf: {binary: zeronf-dpi, "
                             "args: [--proto-dir, /nonexistent]}\n")
    r = zeronf("up", f, "--timeout", "20")
    assert r.returncode == 1
    assert "dpi exited (" in r.stderr and "before it was ready" in r.stderr
    assert "    | " in r.stderr  # its log's last lines
    assert f"(instance '{name}' stopped)" in r.stderr
    assert not Path(runtime_dir(name)).exists()


def test_up_twice_is_refused_and_down_of_nothing_too(instance):
    name, f = instance(replicas=1)
    assert zeronf("up", f).returncode == 0
    r = zeronf("up", f)
    assert r.returncode == 1 and "already up" in r.stderr
    assert zeronf("down", name).returncode == 0
    r = zeronf("down", name)
    assert r.returncode == 1 and "is not up" in r.stderr


def test_the_demo_deployment_runs_from_another_directory(tmp_path):
    """deploy/demo.yaml's relative paths are the file's, not the shell's."""
    from harness import REPO
    name = unique_name("demo")
    r = zeronf("up", REPO / "deploy/demo.yaml", "--name", name, cwd="/")
    try:
        assert r.returncode == 0, r.stderr
        with Client(name) as c:
            wait_for(lambda: c.ports()[0]["tx"] >= 435, 30, "demo traffic")
    finally:
        assert zeronf("down", name).returncode == 0
    assert os.path.exists(REPO / "out/demo-out.pcap")


def test_apply_lists_what_needs_a_restart_and_restarts_with_it(
        instance, tmp_path):
    """Issue 29, item 2: apply compared services, chains, rules and flows
    only: a file changing a port's devargs, pool_size and ingress was
    "already matching" (rc 0). Every key is compared: what cannot change
    live is listed, nothing is applied (rc 1), and `apply --restart`
    restarts the instance with the file."""
    name, f = instance()
    r = zeronf("up", f)
    assert r.returncode == 0, r.stderr
    f2 = tmp_path / f"{name}-v2.yaml"
    f2.write_text(f.read_text().replace(
        "  log_dir: logs\n",
        "  log_dir: logs\n  pool_size: 8191\n  ingress: drop\n").replace(
        "tx_pcap=out.pcap", "tx_pcap=out2.pcap"))
    r = zeronf("apply", f2)
    assert r.returncode == 1, (r.stdout, r.stderr)
    for line in ("manager.pool_size: null -> 8191",
                 'manager.ingress: null -> "drop"', "ports[1]:"):
        assert line in r.stdout, r.stdout
    assert "nothing applied" in r.stderr and "--restart" in r.stderr
    with Client(name) as c:
        assert c.status()["pool"]["size"] != 8191
        pid = c.status()["pid"]
    r = zeronf("apply", "--restart", f2)
    assert r.returncode == 0, r.stderr
    assert "without traffic" in r.stdout
    with Client(name) as c:
        st = c.status()
        assert st["pid"] != pid and st["pool"]["size"] == 8191 and \
            st["ingress"] == "drop"
        assert {n["name"] for n in c.nfs()} == {"mon", "fw", "fw.1"}
    r = zeronf("apply", f2)
    assert r.returncode == 0 and "already matches" in r.stdout
    assert zeronf("down", name).returncode == 0


@pytest.mark.parametrize("fail", ["1", "2", "3", "4", "bad_rule"])
def test_apply_is_a_transaction(instance, tmp_path, fail):
    """Issue 29, item 1: apply of a file that validate accepts scaled fw,
    started a new service and changed the chain, then failed on a rule
    the manager refused (dport 99999), leaving the instance half-changed.
    A plan is a transaction: a failure at any step (injected at each of
    the four, or the manager's refusal of the rule, the last step) takes
    the steps done back, last first, and the instance is as the old file
    made it. The bad rule itself is now refused before anything changes
    (check.py: the manager's own parser)."""
    name, f = instance()
    r = zeronf("up", f)
    assert r.returncode == 0, r.stderr
    rule = "99999" if fail == "bad_rule" else "53"
    f2 = deployment(tmp_path, name, replicas=1, version=2,
                    chain="[mon, fw2, port:out]",
                    extra="  - name: fw2\n    nf: {binary: zeronf-forward}"
                          "\nrules:\n  - match: {proto: udp, dport: "
                          f"{rule}}}\n    chain: [fw, port:out]\n")
    env = {} if fail == "bad_rule" else {"ZN_TEST_APPLY_FAIL_AT": fail}
    r = subprocess.run([sys.executable, "-m", "zeronf", "apply", str(f2)],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, **env})
    if fail == "bad_rule":
        assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
        assert "rules[0].match: match.sport/dport" in r.stderr, r.stderr
    else:
        assert r.returncode == 1, (r.stdout, r.stderr)
        assert "rolled back" in r.stderr and "as it was" in r.stderr, \
            r.stderr
    r = zeronf("apply", f, "--dry-run")
    assert r.returncode == 0 and "already matches" in r.stdout, r.stdout
    with Client(name) as c:
        wait_for(lambda: {n["name"] for n in c.nfs()} ==
                 {"mon", "fw", "fw.1"}, 20, "the old NFs only")
        assert c.chain_get() == ["svc:1", "svc:2", "port:1"]
        assert c.call("rule.list")["rules"] == []
    assert zeronf("down", name).returncode == 0


def test_apply_updates_a_service_rolling_without_a_drop(instance, tmp_path):
    """Issue 29, item 3: apply's "replaced" step (nf.remove then nf.start)
    left the service without a replica meanwhile. A service whose
    program's options changed (its id, group and replicas not) is updated
    in place and restarted rolling (nf.update): under traffic, no packet
    finds the service empty, and its replicas run the new options."""
    name, f = instance()
    looped = f.read_text().replace(f"rx_pcap={TRACE}\n",
                                   f"rx_pcap={TRACE},infinite_rx=1\n", 1)
    f.write_text(looped)
    r = zeronf("up", f)
    assert r.returncode == 0, r.stderr
    f2 = tmp_path / f"{name}-v2.yaml"
    f2.write_text(looped.replace("nf: {binary: zeronf-forward}",
                                 "nf: {binary: zeronf-forward, args: "
                                 "[--cost-ns, '10']}"))
    with Client(name) as c:
        wait_for(lambda: c.ports()[1]["tx"] > 10000, 30, "traffic")
        before = {n["name"]: n["pid"] for n in c.nfs()}
    r = zeronf("apply", f2)
    assert r.returncode == 0, r.stderr
    assert "~ service fw: updated, rolling" in r.stdout, r.stdout
    with Client(name) as c:
        spec = next(s for s in c.call("launch.list")["launched"]
                    if s["name"] == "fw")
        assert spec["args"] == ["--cost-ns", "10"] and not spec["rolling"]
        now = {n["name"]: n["pid"] for n in c.nfs()}
        assert set(now) == set(before)
        assert now["fw"] != before["fw"] and now["fw.1"] != before["fw.1"]
        assert now["mon"] == before["mon"]
        assert c.stats()["drops"]["no_instance"] == 0
    assert zeronf("down", name).returncode == 0


def test_up_logs_are_its_own_and_the_chain_is_set_at_start(instance,
                                                          tmp_path):
    """Issue 29, item 10 (part): a failed `up` showed a previous run's
    last log lines (manager.log was appended to); every `up` logged "no
    default chain (--chain)" though the file had one."""
    name, f = instance()
    r = zeronf("up", f)
    assert r.returncode == 0, r.stderr
    logs = tmp_path / "logs"
    assert "no default chain" not in (logs / "manager.log").read_text()
    assert zeronf("down", name).returncode == 0
    # Up again: the earlier run's log set aside, not shown as this one's.
    r = zeronf("up", f)
    assert r.returncode == 0, r.stderr
    assert (logs / "manager.log.1").exists()
    assert zeronf("down", name).returncode == 0


def test_another_instance_of_a_file_logs_apart(instance, tmp_path):
    """Issue 29, item 10: `up FILE --name lab` wrote into the file's log
    directory, over the first instance's logs and the DPI NF's report.
    Another instance of a file logs in DIR-NAME (or where {name} says),
    and an NF's file named under {log_dir} follows its instance."""
    from harness import REPO
    name, f = instance(extra=(
        "  - name: dpi\n    nf:\n      binary: zeronf-dpi\n"
        "      args: [--report, '{log_dir}/dpi-flows.out', --proto-dir, "
        f"'{REPO}/nfs/dpi/ndpi-4.2']\n"),
        chain="[mon, fw, dpi, port:out]")
    other = unique_name("o")
    for n in (name, other):
        r = zeronf("up", f) if n == name else zeronf("up", f, "--name", n)
        assert r.returncode == 0, r.stderr
    for n in (name, other):
        assert zeronf("down", n).returncode == 0
    logs, apart = tmp_path / "logs", tmp_path / f"logs-{other}"
    for d, n in ((logs, name), (apart, other)):
        assert f"manager '{n}' ready" in (d / "manager.log").read_text()
        assert (d / "dpi-flows.out").exists(), list(d.iterdir())
    assert f"'{other}'" not in (logs / "manager.log").read_text()
    # {name} in the file's log_dir: each instance's own, as it says.
    g = tmp_path / "g.yaml"
    g.write_text(f.read_text().replace("log_dir: logs",
                                       "log_dir: 'by-{name}'"))
    r = zeronf("validate", g, "--name", "lab", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["log_dir"] == str(tmp_path / "by-lab")
    dpi = [s for s in json.loads(r.stdout)["services"] if s["name"] == "dpi"]
    assert dpi[0]["args"][1] == f"{tmp_path}/by-lab/dpi-flows.out"


def test_the_files_names_work_in_the_cli(instance):
    """Issue 29, items 9 and 12: the file's port and service names are
    the CLI's (`port:out`, `fw`), status shows the ports' names, a flow
    added with --both goes with one `flow del`, and a bad address is
    named as such."""
    name, f = instance()
    r = zeronf("up", f)
    assert r.returncode == 0, r.stderr
    with Client(name) as c:
        ports = c.ports()
        assert [p["name"] for p in ports] == ["in", "out"]
        assert [p["device"] for p in ports] == ["net_pcap0", "net_pcap1"]
    r = zeronf("-i", name, "chain", "fw,port:out")
    assert r.returncode == 0, r.stderr
    with Client(name) as c:
        assert c.chain_get() == ["svc:2", "port:1"]
    r = zeronf("-i", name, "chain", "fw,port:lan")
    assert r.returncode == 1 and "no port named 'lan' (ports: in, out)" \
        in r.stderr, r.stderr
    r = zeronf("-i", name, "chain", "ghost")
    assert r.returncode == 1 and "no NF named 'ghost'" in r.stderr
    r = zeronf("-i", name, "chain", "svc:99,port:out")  # item 11, as the API
    assert r.returncode == 0 and r.stderr == (
        "zeronf: warning: svc:99: no NF serves it now: its packets drop "
        "(no_instance) until one does\n"), r.stderr
    r = zeronf("-i", name, "nfs")
    assert r.stdout.split()[:9] == ["instance", "service", "name", "pid",
                                    "state", "rx", "tx", "dropped",
                                    "exit_drops"], r.stdout
    r = zeronf("-i", name, "rule", "add", "proto=udp", "dport=53",
               "--chain", "mon,port:in")
    assert r.returncode == 0, r.stderr
    with Client(name) as c:
        assert c.call("rule.list")["rules"][-1]["chain"] == \
            ["svc:1", "port:0"]
    flow = ["proto=udp", "src=10.0.0.1", "dst=10.0.0.2", "sport=1",
            "dport=2"]
    r = zeronf("-i", name, "flow", "add", *flow, "--both", "--chain", "fw")
    assert r.returncode == 0, r.stderr
    with Client(name) as c:
        assert len(c.call("flow.list")["flows"]) == 2
    r = zeronf("-i", name, "flow", "del", *flow)
    assert r.returncode == 0 and '"deleted": 2' in r.stdout, r.stdout
    with Client(name) as c:
        assert c.call("flow.list")["flows"] == []
    r = zeronf("-i", name, "flow", "add", *flow[:2], "dst=999.1.1.1",
               *flow[3:], "--chain", "fw")
    assert r.returncode == 1
    assert "flow.dst: '999.1.1.1' is not an IP address" in r.stderr
    assert zeronf("down", name).returncode == 0


def test_down_after_the_manager_was_killed_cleans_up(instance):
    """Issue 29, item 12: after kill -9 of the manager, `down` said "not
    up" and left the hugepage files until the next up."""
    import glob
    import signal
    name, f = instance()
    r = zeronf("up", f)
    assert r.returncode == 0, r.stderr
    with Client(name) as c:
        pid = c.status()["pid"]
        nfs = [n["pid"] for n in c.nfs()]
    from harness import HUGE_DIR
    huge = lambda: glob.glob(f"{HUGE_DIR}/{name}map_*")  # noqa: E731
    assert huge()
    os.kill(pid, signal.SIGKILL)
    for p in nfs:  # they leave on their own when the manager goes
        wait_for(lambda p=p: not Path(f"/proc/{p}").exists() or
                 Path(f"/proc/{p}/stat").read_text().split()[2] == "Z",
                 30, f"NF {p} gone")
    r = zeronf("down", name)
    assert r.returncode == 0, r.stderr
    assert "its manager died" in r.stdout and "hugepage files" in r.stdout
    assert huge() == [] and not Path(runtime_dir(name)).exists()
    r = zeronf("down", name)
    assert r.returncode == 1 and "is not up" in r.stderr


def test_apply_treats_cli_rules_and_flows_alike(instance, tmp_path):
    """Issue 29, item 15: apply removed rules added from the CLI but kept
    flows added from the CLI. The operator's rules and flows are the
    file's: both go when the file does not have them; the file's own
    flows are not added again when they are there."""
    flow = {"proto": "udp", "src": "10.9.0.1", "dst": "10.9.0.2",
            "sport": 5, "dport": 6}
    name, f = instance(extra="flows:\n  - flow: {proto: 17, src: 10.9.0.1, "
                       "dst: 10.9.0.2, sport: 5, dport: 6}\n    chain: "
                       "[fw, port:out]\n    both: true\n")
    r = zeronf("up", f)
    assert r.returncode == 0, r.stderr
    assert zeronf("-i", name, "rule", "add", "proto=tcp", "dport=22",
                  "--chain", "drop").returncode == 0
    assert zeronf("-i", name, "flow", "add", "proto=tcp", "src=10.1.1.1",
                  "dst=10.1.1.2", "sport=1", "dport=2", "--chain",
                  "drop").returncode == 0
    r = zeronf("apply", f, "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "- rule" in r.stdout and "- flows: 1 not in the file" in r.stdout
    assert "+ flows" not in r.stdout, r.stdout
    r = zeronf("apply", f)
    assert r.returncode == 0, r.stderr
    with Client(name) as c:
        assert c.call("rule.list")["rules"] == []
        left = c.call("flow.list")["flows"]
        assert sorted((x["flow"]["src"], x["by"]) for x in left) == [
            ("10.9.0.1", "socket"), ("10.9.0.2", "socket")], left
        assert left[0]["flow"]["proto"] == flow["proto"]
    r = zeronf("apply", f)
    assert r.returncode == 0 and "already matches" in r.stdout, r.stdout
    assert zeronf("down", name).returncode == 0


def test_a_manager_refusal_at_start_names_the_file_keys(instance, tmp_path):
    """Issue 29, item 12: the pool error named --mem/--pool-size where the
    user wrote memory_mb/pool_size."""
    name, f = instance()
    f.write_text(f.read_text().replace(
        "manager:\n", "manager:\n  memory_mb: 64\n  pool_size: 4194303\n"))
    r = zeronf("up", f)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "manager.memory_mb (--mem)" in r.stderr and \
        "manager.pool_size (--pool-size)" in r.stderr, r.stderr
    assert not Path(runtime_dir(name)).exists()


def test_a_bundle_in_a_file(instance, tmp_path):
    """`bundles:` runs services' NFs in one process, one thread (zeronf-
    bundle): up starts it as one launch, every packet of both traces goes
    through both NFs, apply scales it and replaces it when an NF's
    options change, down stops it; a bundle a file cannot have is said
    with its key."""
    name, f = instance(replicas=1, extra="bundles:\n  - name: pair\n"
                       "    bundle: [mon, fw]\n")
    r = zeronf("up", f)
    assert r.returncode == 0, r.stderr
    assert "[1/1] pair: 1 x bundle of mon, fw" in r.stdout
    frames = read_frames(TRACE)
    with Client(name) as c:
        wait_for(lambda: c.ports()[1]["tx"] >= 2 * len(frames), 30,
                 "both traces through")
        nfs = {n["name"]: n for n in c.nfs()}
        assert set(nfs) == {"mon", "fw"}
        assert nfs["mon"]["pid"] == nfs["fw"]["pid"]
        assert nfs["mon"]["rx"] == nfs["fw"]["rx"] == 2 * len(frames)
        (pair,) = c.call("launch.list")["launched"]
        assert pair["name"] == "pair" and \
            [b["name"] for b in pair["bundle"]] == ["mon", "fw"]
    r = zeronf("apply", f)
    assert "already matches" in r.stdout, r.stdout
    f2 = deployment(tmp_path, name, replicas=2, version=2,
                    extra="bundles:\n  - name: pair\n    replicas: 2\n"
                          "    bundle: [mon, fw]\n")
    r = zeronf("apply", f2)
    assert r.returncode == 0 and "~ bundle pair: replicas 1 -> 2" in \
        r.stdout, r.stdout + r.stderr
    with Client(name) as c:
        wait_for(lambda: {n["name"] for n in c.nfs()} ==
                 {"mon", "fw", "mon.1", "fw.1"}, 20, "two bundles")
    f3 = tmp_path / "v3.yaml"
    f3.write_text(f2.read_text().replace(
        "nf: {binary: zeronf-forward}",
        "nf: {binary: zeronf-forward, args: [--cost-ns, '10']}"))
    r = zeronf("apply", f3)
    assert r.returncode == 0 and "~ bundle pair: replaced" in r.stdout, \
        r.stdout + r.stderr
    r = zeronf("down", name)
    assert r.returncode == 0, r.stderr
    bad = tmp_path / "bad.yaml"
    for extra, said in (
            ("bundles:\n  - bundle: [mon, nope]\n",
             "bundles[0].bundle[1]: no service named 'nope'"),
            ("bundles:\n  - bundle: [mon]\n  - bundle: [mon, fw]\n",
             "service 'mon' is in bundle 0 already"),
            ("bundles:\n  - bundle: [fw]\n",
             "service 'fw' sets replicas 2, its bundle 1")):
        bad.write_text(deployment(tmp_path, name, replicas=2,
                                  extra=extra).read_text())
        r = zeronf("apply", bad, "--dry-run")
        assert r.returncode != 0 and said in r.stderr, (extra, r.stderr)

"""Deployment files (python/zeronf/spec.py): the bundled ones are valid,
and every kind of mistake is refused with its file, line and key, before
anything starts."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from harness import REPO
from zeronf.client import runtime_dir
from zeronf.spec import SpecError, load, schema

GOOD = """\
name: t1
ports:
  - name: wan
    devargs: net_null0
  - devargs: net_null1
services:
  - name: mon
    nf: {binary: zeronf-monitor, args: [--print, "1"]}
  - name: fw
    id: 7
    nf: {binary: zeronf-forward}
    replicas: 2
    lb: least_loaded
chain: [mon, fw, port:wan]
rules:
  - match: {proto: tcp, dport: 80}
    chain: [fw, port:1]
    priority: 3
"""


def errors_of(text: str, tmp_path: Path) -> list[str]:
    f = tmp_path / "d.yaml"
    f.write_text(text)
    with pytest.raises(SpecError) as e:
        load(f)
    return e.value.errors


def test_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(schema())


def test_bundled_deployments_are_valid():
    from zeronf import multihost
    for f in (REPO / "deploy").glob("*.yaml"):
        if multihost.is_multihost(str(f)):
            for h in multihost.load(f).hosts:
                assert h.d.services and h.d.ports, (f, h.name)
            continue
        d = load(f)
        assert d.services and d.ports, f


def test_a_good_file_resolves_names(tmp_path):
    f = tmp_path / "d.yaml"
    f.write_text(GOOD)
    d = load(f)
    assert d.chain == ["svc:1", "svc:7", "port:0"]
    assert d.rules[0]["chain"] == ["svc:7", "port:1"]
    assert [s.id for s in d.services] == [1, 7]
    assert d.service("fw").replicas == 2 and d.service("fw").lb == \
        "least_loaded"
    assert Path(d.service("mon").binary).is_absolute()
    assert load(f, name="other").name == "other"


def test_manager_options_become_its_command_line(tmp_path):
    from zeronf.orchestrate import manager_argv
    f = tmp_path / "d.yaml"
    f.write_text(GOOD.replace("name: t1\n", "name: t1\nmanager:\n"
                              "  handoff: worker\n  ingress: drop\n"
                              "  ring_size: 512\n  nf_tx_queues: 0\n"
                              "  nf_rx_queues: 2\n"))
    argv = manager_argv(load(f), Path("/x/zeronf-mgr"))
    for opt, val in (("--handoff", "worker"), ("--ingress", "drop"),
                     ("--ring-size", "512"), ("--nf-tx-queues", "0"),
                     ("--nf-rx-queues", "2")):
        assert argv[argv.index(opt) + 1] == val, argv
    bad = GOOD.replace("name: t1\n", "name: t1\nmanager:\n"
                       "  handoff: hub\n")
    assert any("manager.handoff: 'hub' is not one of" in e
               for e in errors_of(bad, tmp_path))
    bad = GOOD.replace("name: t1\n", "name: t1\nmanager:\n"
                       "  nf_rx_queues: 17\n")
    assert any("manager.nf_rx_queues" in e for e in errors_of(bad, tmp_path))


def test_trust_groups_become_options_and_launch_parameters(tmp_path):
    from zeronf.orchestrate import manager_argv, start_params
    f = tmp_path / "d.yaml"
    f.write_text(GOOD.replace("name: t1\n", "name: t1\nmanager:\n"
                              "  trust_groups:\n    - name: red\n"
                              "      buffers: 02047\n    - name: blue\n")
                 .replace("    lb: least_loaded",
                          "    lb: least_loaded\n    trust_group: red")
                 .replace("  - devargs: net_null1",
                          "  - devargs: net_null1\n    trust_group: blue"))
    d = load(f)
    argv = manager_argv(d, Path("/x/zeronf-mgr"))
    got = [argv[i + 1] for i, a in enumerate(argv) if a == "--trust-group"]
    assert got == ["red:2047", "blue"]
    assert argv[argv.index("--port-group") + 1] == "1=blue"
    assert start_params(d.service("fw"))["trust_group"] == "red"
    assert "trust_group" not in start_params(d.service("mon"))
    bad = GOOD.replace("    lb: least_loaded",
                       "    lb: least_loaded\n    trust_group: green")
    assert any("services[1].trust_group: no trust group 'green' in "
               "manager.trust_groups" in e for e in errors_of(bad, tmp_path))
    bad = GOOD.replace("  - devargs: net_null1",
                       "  - devargs: net_null1\n    trust_group: red")
    assert any("ports[1].trust_group: no trust group 'red'" in e
               for e in errors_of(bad, tmp_path))
    twice = GOOD.replace("name: t1\n", "name: t1\nmanager:\n"
                         "  trust_groups: [{name: a}, {name: a}]\n")
    assert any("trust group 'a' twice" in e
               for e in errors_of(twice, tmp_path))


@pytest.mark.parametrize("edit, expect", [
    (("    replicas: 2", "    replicas: 40"),
     "d.yaml:12: services[1].replicas: 40 is greater than the maximum"),
    (("    lb: least_loaded", "    lb: fastest"),
     "d.yaml:13: services[1].lb: 'fastest' is not one of"),
    (("    id: 7", "    id: 7\n    colour: blue"),
     "d.yaml:11: services[1].colour: unknown key 'colour'"),
    (("  - name: mon\n", "  - name: mon\n    name: mon2\n"),
     "d.yaml:8: services[0].name: duplicate key"),
    (("chain: [mon, fw, port:wan]", "chain: [mon, ghost, port:wan]"),
     "d.yaml:14: chain[1]: no service named 'ghost'"),
    (("chain: [mon, fw, port:wan]", "chain: [mon, fw, port:lan]"),
     "d.yaml:14: chain[2]: no port named 'lan'"),
    (("chain: [mon, fw, port:wan]", "chain: [mon, fw, port:2]"),
     "d.yaml:14: chain[2]: port 2: there are 2 ports"),
    (("    id: 7", "    id: 1"),
     "d.yaml:10: services[1].id: service id 1 is also 'mon's"),
    (("zeronf-forward", "no-such-nf"),
     "d.yaml:11: services[1].nf.binary: no program 'no-such-nf'"),
    (("zeronf-forward", "./nope"),  # issue 29, item 12: a path, not a name
     "d.yaml:11: services[1].nf.binary: no program /"),
    (("    priority: 3", "    priority: -3"),
     "d.yaml:18: rules[0].priority: -3 is less than the minimum of 0"),
    (("name: t1", "name: 't 1'"), "d.yaml:1: name: 't 1' does not match"),
    (("ports:", "portz:"), "d.yaml:1: (top): 'ports' is a required"),
    (("chain: [mon, fw, port:wan]", "chain: [mon, fw, port:wan"),
     "d.yaml:15: not valid YAML"),
])
def test_mistakes_are_refused_with_line_and_key(tmp_path, edit, expect):
    old, new = edit
    assert old in GOOD
    errs = errors_of(GOOD.replace(old, new, 1), tmp_path)
    assert any(expect in e for e in errs), errs
    assert all(e.startswith(str(tmp_path / "d.yaml")) for e in errs)


def test_several_mistakes_are_all_named(tmp_path):
    errs = errors_of(GOOD.replace("replicas: 2", "replicas: -1")
                     .replace("priority: 3", "priority: x"), tmp_path)
    assert len(errs) == 2, errs


def test_schema_and_name_mistakes_are_said_together(tmp_path):
    """Issue 29, item 8: docs/operations.md's bad.yaml, its three errors
    in one run (the name check ran only once the schema's were fixed)."""
    bad = GOOD.replace("name: t1\n", "name: t1\nmanager:\n  memroy_mb: 64\n") \
        .replace("replicas: 2", "replicas: 40") \
        .replace("chain: [mon, fw, port:wan]", "chain: [mon, ghost, port:wan]")
    errs = errors_of(bad, tmp_path)
    assert [e.split(": ")[1] for e in errs] == [
        "manager.memroy_mb", "services[1].replicas", "chain[1]"], errs


# Issue 29, item 1: what validate passed and the manager refused in the
# middle of an apply. The manager's own parsers say it now (check.py,
# zeronf-mgr --check), each at its line and key.
VALUES = GOOD + """flows:
  - flow: {proto: udp, src: 10.0.0.1, dst: 10.0.0.256, sport: 1, dport: 2}
    chain: [fw]
routes:
  - {service: fw, prefix: 10.0.0.0/33, next_hop: 1}
  - {service: fw, prefix: 10.1.0.0/16, next_hop: 1}
"""


def validate(path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zeronf", "validate",
                           str(path), *args], capture_output=True,
                          text=True, timeout=60)


def test_values_the_manager_refuses_are_refused_by_validate(tmp_path):
    f = tmp_path / "d.yaml"
    f.write_text(VALUES.replace("dport: 80}", "dport: 99999}")
                 .replace("    replicas: 2", "    replicas: 2\n"
                          "    cpus: '4096'"))
    r = validate(f)
    assert r.returncode == 2, r.stdout
    lines = r.stderr.splitlines()
    assert lines == [
        f"{f}:13: services[1].cpus: a CPU list such as 0-3,6",
        f"{f}:17: rules[0].match: match.sport/dport: a port or \"lo-hi\"",
        f"{f}:21: flows[0].flow.dst: '10.0.0.256' is not an IP address",
        f"{f}:24: routes[0].prefix: bad prefix '10.0.0.0/33' (want "
        f"A.B.C.D/LEN, LEN 0..32, or IPV6/LEN, LEN 0..128)"], r.stderr
    good = tmp_path / "g.yaml"
    good.write_text(VALUES.replace("10.0.0.256", "10.0.0.25")
                    .replace("/33", "/32"))
    r = validate(good)
    assert r.returncode == 0, r.stderr


def test_a_manager_option_refused_is_named_by_its_file_key(tmp_path):
    f = tmp_path / "d.yaml"
    f.write_text(GOOD.replace("name: t1\n", "name: t1\nmanager:\n"
                              "  ring_size: 1000\n"))
    r = validate(f)
    assert r.returncode == 2
    assert r.stderr == (f"{f}:3: manager.ring_size: ring_size must be a "
                        f"power of 2\n"), r.stderr


def test_up_of_a_file_the_manager_refuses_touches_nothing(tmp_path):
    out = tmp_path / "out.pcap"
    f = tmp_path / "d.yaml"
    f.write_text(GOOD.replace("name: t1", "name: never-up2")
                 .replace("devargs: net_null1",
                          f"devargs: 'net_pcap1,tx_pcap={out}'")
                 .replace("dport: 80}", "dport: 99999}"))
    r = subprocess.run([sys.executable, "-m", "zeronf", "up", str(f)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "rules[0].match: match.sport/dport" in r.stderr, r.stderr
    assert not out.exists()
    assert not Path(runtime_dir("never-up2")).exists()


def test_up_refuses_a_bad_file_and_starts_nothing(tmp_path):
    f = tmp_path / "d.yaml"
    f.write_text(GOOD.replace("name: t1", "name: never-up")
                 .replace("replicas: 2", "replicas: 99"))
    r = subprocess.run([sys.executable, "-m", "zeronf", "up", str(f)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert "services[1].replicas: 99 is greater" in r.stderr
    assert not Path(runtime_dir("never-up")).exists()


def test_a_port_chain_resolves_names(tmp_path):
    """ports[].chain: what enters from that port (and matches no rule)
    takes it; names resolve as in the default chain."""
    f = tmp_path / "d.yaml"
    f.write_text(GOOD.replace("  - devargs: net_null1",
                              "  - devargs: net_null1\n"
                              "    chain: [fw, port:wan]"))
    assert load(f).port_chains == {1: ["svc:7", "port:0"]}
    bad = GOOD.replace("  - devargs: net_null1",
                       "  - devargs: net_null1\n    chain: [nope]")
    assert any("ports[1].chain" in e and "nope" in e
               for e in errors_of(bad, tmp_path))


TENANTS = """\
manager:
  trust_groups: [{name: red}, {name: blue}]
  tenants:
    - name: r
      trust_group: red
      service_ids: [7, 9]
      uid: 0065534
      cpu_percent: 20
      memory_mb: 256
      slices: [{port: wan, vlan: 10}, {port: 1}]
      chain: [fw, port:1]
    - name: b
      trust_group: blue
      slices: [{port: 0, prefix: 10.2.0.0/16}, {port: 0, mac: "02:00:00:00:00:0b"}]
"""


def test_tenants_become_options_and_chains(tmp_path):
    """manager.tenants: --tenant and --slice options (ports by name or
    index), chains resolved as elsewhere."""
    from zeronf.orchestrate import manager_argv
    f = tmp_path / "d.yaml"
    f.write_text(GOOD.replace("name: t1\n", "name: t1\n" + TENANTS))
    d = load(f)
    argv = manager_argv(d, Path("/x/zeronf-mgr"))
    opts = [(a, argv[i + 1]) for i, a in enumerate(argv)
            if a in ("--tenant", "--slice")]
    assert opts == [("--tenant", "r=red,services=7-9,uid=65534,cpu=20,"
                     "mem=256"),
                    ("--slice", "r:0:vlan=10"), ("--slice", "r:1"),
                    ("--tenant", "b=blue"),
                    ("--slice", "b:0:prefix=10.2.0.0/16"),
                    ("--slice", "b:0:mac=02:00:00:00:00:0b")]
    assert d.tenants[0]["chain"] == ["svc:7", "port:1"]
    for old, new, message in (
            ("trust_group: blue", "trust_group: green",
             "tenants[1].trust_group: no trust group 'green'"),
            ("trust_group: blue", "trust_group: red",
             "trust group 'red' is another tenant's"),
            ("{port: 1}", "{port: lan}", "slices[1].port: no port 'lan'"),
            ("[7, 9]", "[9, 7]", "service_ids: [LO, HI]"),
            ("chain: [fw, port:1]", "chain: [nope]", "nope"),
            ("vlan: 10}", "vlan: 10, mac: \"02:00:00:00:00:01\"}",
             "slices[0]")):
        bad = GOOD.replace("name: t1\n", "name: t1\n" +
                           TENANTS.replace(old, new, 1))
        assert any(message in e for e in errors_of(bad, tmp_path)), \
            (message, errors_of(bad, tmp_path))


def test_multihost_mistakes_are_refused_with_line_and_key(tmp_path):
    """A file of several hosts (python/zeronf/multihost.py): each bad hop,
    host and port named at its line, a host's part checked as a one-host
    file's, and every mistake said at once."""
    from zeronf import multihost
    text = (REPO / "deploy" / "multihost.yaml").read_text()
    bad = (text.replace("hops: [mon@edge, fw@core, fwd@core, port:wan@core]",
                        "hops: [mon@edge, fw@nowhere, nat@core, "
                        "port:wan@core]")
           .replace("    id: 2\n", "    id: 1\n")
           .replace("fabric_port: fab\n    manager:\n      netns: zn-mh-core",
                    "fabric_port: lan\n    manager:\n      netns: zn-mh-core")
           .replace("        chain: [fwd, fw, mon@edge, port:lan@edge]",
                    "        chain: [fwd, mon@edge, port:lan@edge]")
           .replace("nf: {binary: zeronf-forward}",
                    "nf: {binary: zeronf-nosuch}"))
    f = tmp_path / "m.yaml"
    f.write_text(bad)
    lines = bad.splitlines()

    def line(s: str) -> int:
        return next(i for i, ln in enumerate(lines, 1) if s in ln)
    host_ids = [i for i, ln in enumerate(lines, 1) if ln == "    id: 1"]
    with pytest.raises(SpecError) as e:
        multihost.load(f)
    errors = e.value.errors
    want = [f"{line('fw@nowhere')}: paths[0].hops[1]: no host 'nowhere'",
            f"{line('fw@nowhere')}: paths[0].hops[2]: host core has no "
            f"service named 'nat'",
            f"{host_ids[1]}: hosts[1].id: host id 1 is also edge's",
            f"{line('fabric_port: lan')}: hosts[1].fabric_port: no port "
            f"'lan' on host core",
            f"{line('chain: [fwd, mon@edge')}: hosts[1].ports[1].chain: hops "
            f"on other hosts travel on a service path",
            f"{line('zeronf-nosuch')}: hosts[1].services[1].nf.binary: no "
            f"program 'zeronf-nosuch'"]
    for w in want:
        assert any(w in x for x in errors), (w, errors)
    assert all(x.startswith(f"{f}:") for x in errors), errors


def test_multihost_rule_after_a_far_one_is_named_at_its_index(tmp_path):
    """A rule or flow whose chain goes to another host is set after the
    fabric; a mistake in the one after it is still named at its own index
    and line (they were taken out before the check, and the next was
    named at the far one's index)."""
    from zeronf import multihost
    text = (REPO / "deploy" / "multihost.yaml").read_text()
    far = "[mon, fw@core, fwd@core, port:wan@core]"
    bad = text.replace(
        "    services:          # ids",
        "    rules:\n"
        f"      - {{match: {{proto: tcp, dport: 80}}, chain: {far}}}\n"
        "      - {match: {proto: tcp, dport: 99999}, chain: [mon]}\n"
        "    flows:\n"
        "      - flow: {proto: udp, src: 10.0.0.1, dst: 10.0.0.2, "
        "sport: 1, dport: 2}\n"
        f"        chain: {far}\n"
        "      - flow: {proto: udp, src: 10.0.0.1, dst: 10.0.0.256, "
        "sport: 1, dport: 2}\n"
        "        chain: [mon]\n"
        "    services:          # ids", 1)
    f = tmp_path / "m.yaml"
    f.write_text(bad)
    lines = bad.splitlines()

    def line(s: str) -> int:
        return next(i for i, ln in enumerate(lines, 1) if s in ln)
    m = multihost.load(f)
    edge = m.hosts[0]
    assert [r["chain"] for r in edge.d.rules] == [["svc:1"]]
    assert edge.remote[("rules", 0, "chain")]["chain"] == [
        "svc:1", "svc:2@2", "svc:3@2", "port:1@2"]
    with pytest.raises(SpecError) as e:
        multihost.check_all(m)
    assert e.value.errors == [
        f"{f}:{line('dport: 99999')}: hosts[0].rules[1].match: "
        f"match.sport/dport: a port or \"lo-hi\"",
        f"{f}:{line('10.0.0.256')}: hosts[0].flows[1].flow.dst: "
        f"'10.0.0.256' is not an IP address"], e.value.errors

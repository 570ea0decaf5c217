"""Fairness between tenants under a flood (docs/security.md "Tenants";
the set-up: tests/fairness.py). What is enforced, whatever this machine's
speed: red's NF runs in a cgroup capped at its share (cpu.max), the flood
past that share is dropped at red's ingress and counted there, and blue,
running its generator through its own NF meanwhile, loses nothing:
every packet it made came back, none dropped on its way, none refused.
What the flood costs blue in throughput and latency, and the share red's
NF gets, are measured by `make bench BENCH=tenants` (the tenant_fairness
line and its targets): times and rates are the bench's, not a test's."""

from __future__ import annotations

import pytest

import fairness
from harness import scaled, wait_for


def test_a_flooded_tenant_keeps_to_its_share(managers, tmp_path):
    cores = fairness.cores()
    if cores is None:
        pytest.skip("needs 2 CPUs: one for the manager and red, one for "
                    "blue")
    mine, blues = cores
    m = managers(**fairness.manager_kw(tmp_path, mine))
    red_pid = fairness.start_nfs(m, mine, blues)
    red_nf = next(n for n in m.call("nf.list")["nfs"]
                  if n["name"] == "red-nf")
    # Red's NF is held to its share by its tenant's cgroup.
    assert fairness.red_cpu_max(m.name) == \
        [str(fairness.RED_CPU_PCT * 1000), "100000"]
    assert red_pid in fairness.red_pids(m.name)
    reports = []
    for i, flood in enumerate([False, True, False, True]):
        m.call("rx.set", enabled=flood)
        if flood:
            rx0 = m.call("tenant.list")["tenants"][0]["counters"]["rx"]
            wait_for(lambda: m.call("tenant.list")["tenants"][0]
                     ["counters"]["rx"] > rx0, scaled(10), "red flooded")
        reports.append(fairness.blue_run(m, i, blues, seconds=1.0))
    m.call("rx.set", enabled=False)
    tenants = {t["name"]: t for t in m.call("tenant.list")["tenants"]}
    red, blue = tenants["red"]["counters"], tenants["blue"]["counters"]
    # Red was flooded past its share: the rest dropped at its ingress,
    # counted; its NF got packets all the same.
    assert red["ingress_full"] > 0 and red["rx"] > red["ingress_full"], red
    assert next(n for n in m.call("nf.list")["nfs"]
                if n["pid"] == red_nf["pid"])["rx"] > 0
    # Blue lost nothing: every packet its generator made was sent, none
    # dropped by its tenant's ingress or its NFs.
    for r in reports:
        assert r["gen_failed"] == 0 and r["received"] > 0, r
    assert blue["ingress_full"] == 0 and blue["no_chain"] == 0 and \
        blue["cross_tenant"] == 0, blue
    # (no_instance: what was on its way back to a generator that had
    # finished its run, before the next one started)
    for n in m.call("nf.list")["nfs"]:
        if n["name"].startswith("blue"):
            assert not any(v for k, v in n["drops"].items()
                           if k != "no_instance"), n
    assert m.shutdown() == 0

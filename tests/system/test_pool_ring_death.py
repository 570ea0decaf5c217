"""An NF killed inside an operation on its pool's free ring (issue 28,
item 10: the innocent never pay). The ring is shared by every process of
the pool; an operation claims a range (the side's head), fills it, then
commits it (the side's tail) once the earlier claims are committed. Found
by test_control_stress.py's hammered test under ASan, about one run in
ten: an NF killed between its claim and its commit, while putting its
lcore cache back, left every later producer waiting for its commit for
ever (DPDK's ring code); two honest NFs waited there, were killed as
stuck readers after 2 s, and their caches, already in the ring, were put
back again with the dead one's: 1,152 buffers twice in the pool. Now each
claim is recorded where the manager reads it (lib/nf/nf_pool_ring.c) and
the manager finishes the dead NF's operation (mgr/nf/pool_repair.c).

Each case kills an NF at one point of one operation (libzeronf's fault
injection, ZN_TEST_POOL_OP_DEATH) while another NF of the pool goes on;
then every buffer is back exactly once and the other NF was never
stuck."""
from __future__ import annotations

import signal

import pytest

from harness import scaled, traffic_ports, wait_for
from test_lb import many_flows  # noqa: F401 - fixture

STEPS = ["cas", "claimed", "copied", "committed"]


def registry(m) -> dict:
    return m.call("status")["registry"]


def counters(nf) -> dict:
    return (nf.stats() or {}).get("counters", {})


@pytest.mark.parametrize("step", STEPS)
def test_killed_while_putting_its_cache_back(managers, many_flows, step):
    """Forwarders sending on a port themselves: the port's driver frees
    into the NF's lcore cache, which goes back to the ring whole when
    full. The victim dies in its first such put, at `step`."""
    m = managers(ports=traffic_ports(many_flows), chain="1,port:1",
                 rx_paused=True)
    base = m.pool()["in_use"]
    honest = m.start_nf("forward", 1, "honest")
    victim = m.start_nf("forward", 1, "victim",
                        env={"ZN_TEST_POOL_OP_DEATH": f"put:{step}"})
    m.call("rx.set", enabled=True)
    assert victim.proc.wait(scaled(30)) == -signal.SIGKILL
    wait_for(lambda: registry(m)["died"] == 1, scaled(10), "reclaimed")
    # The honest one goes on: its own puts pass the dead one's range.
    tx0 = honest.stats()["tx"]
    wait_for(lambda: honest.stats()["tx"] > tx0 + 100_000, scaled(30),
             "the honest NF moving")
    m.call("rx.set", enabled=False)
    m.wait_idle(baseline=base)
    assert honest.proc.alive()
    r = registry(m)
    assert r["died"] == 1 and r["pool_ops_finished"] == 1, r
    assert m.shutdown() == 0
    assert "buffers not returned" not in m.proc.output()


@pytest.mark.parametrize("step", STEPS)
def test_killed_while_taking_from_the_pool(managers, step):
    """An NF that allocates (test-hog) dies in its first take from the
    ring, at `step`; another allocates the whole of its quota after it,
    and what the dead one took or was taking is back."""
    m = managers(ports=["net_null0,no-rx=1"], chain="1,drop",
                 args=["--pool-size", "4095"])
    base = m.pool()["in_use"]
    victim = m.start_nf("test-hog", 1, "victim", nf_args=["--mode", "alloc"],
                        env={"ZN_TEST_POOL_OP_DEATH": f"get:{step}"})
    assert victim.proc.wait(scaled(30)) == -signal.SIGKILL
    wait_for(lambda: registry(m)["died"] == 1, scaled(10), "reclaimed")
    wait_for(lambda: m.pool()["in_use"] == base, scaled(10), "all back")
    assert registry(m)["pool_ops_finished"] == 1
    other = m.start_nf("test-hog", 1, "other", nf_args=["--mode", "alloc"])
    wait_for(lambda: counters(other).get("allocated"), scaled(30),
             "the other refused")
    assert counters(other) == {"allocated": 1023, "refusals": 1}
    assert m.pool()["in_use"] == base + 1023
    other.proc.signal(signal.SIGTERM)
    assert other.proc.wait(scaled(20)) == 0
    wait_for(lambda: m.pool()["in_use"] == base, scaled(20), "all back")
    assert m.shutdown() == 0

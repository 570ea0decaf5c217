"""group.audit (mgr/trust/group_audit.c): what the owner map cannot see, a
hostile NF of a trust group that frees packets in its own process and
hands them back too (each then in the pool twice), or that keeps buffers
outside its ledger and dies, leaves the group's pool broken; once the
group has no NF, the audit makes it whole again: each buffer in the free
ring once, the lost ones counted (and put back with force)."""

from __future__ import annotations

import signal

import pytest

from harness import DATA, traffic_ports, wait_for
from zeronf.client import ZeroNFError

ARGS = ["--handoff", "worker", "--bad-desc-limit", "0",
        "--trust-group", "a:2047"]


def group_a(m):
    return next(g for g in m.call("group.list")["groups"]
                if g["name"] == "a")


def gone(m, nf):
    nf.proc.signal(signal.SIGKILL)
    nf.proc.wait(10)
    wait_for(lambda: m.nf_by_pid(nf.proc.pid) is None, 15, "reclaimed")


def test_double_frees_are_taken_out(managers):
    m = managers(ports=traffic_ports(DATA / "pcap/bittorrent.pcap"),
                 chain="1,port:1", rx_paused=True, args=ARGS)
    liar = m.start_nf("test-liar", 1, "liar",
                      lib_args=["--trust-group", "a"],
                      nf_args=["--lie", "freed_back", "--every", "5"])
    # The group has an NF: nothing to audit yet.
    with pytest.raises(ZeroNFError, match="it has NFs"):
        m.call("group.audit", group="a")
    m.call("rx.set", enabled=True)
    wait_for(lambda: (liar.stats() or {}).get("counters", {})
             .get("lies", 0) > 2000, 30, "double frees")
    m.call("rx.set", enabled=False)
    gone(m, liar)
    first = wait_for(lambda: _audit(m), 10, "the workers quiet")
    assert first["freed_twice"] > 0, first
    assert first["foreign"] == 0
    # Whole: every buffer once in the pool, nothing else.
    assert first["free"] == first["size"] - first["missing"]
    # The copies overflowed the free ring (it holds the pool's size):
    # what a full ring refused is missing; nothing holds it here (no NF,
    # a port that frees at once), so force puts it back.
    again = m.call("group.audit", group="a", force=True)
    assert again["freed_twice"] == 0 and again["foreign"] == 0, again
    assert again["recovered"] == first["missing"]
    assert again["free"] == again["size"]
    assert group_a(m)["pool"]["in_use"] == 0
    events = m.call("event.list")["events"]
    assert any(e["type"] == "group.audit" for e in events)
    assert m.call("status")["ready"]
    assert m.shutdown() == 0


def _audit(m, **kw):
    try:
        return m.call("group.audit", group="a", **kw)
    except ZeroNFError as e:
        if "try again" in str(e):
            return None
        raise


def test_a_dead_nfs_hoard_is_found_and_put_back(managers):
    """A group NF keeps 50 buffers it allocated: put back when it dies,
    as its pool's tags say (mgr/nf/pool_acct.h). One that also erases their
    tags (its group's file is its to write) loses them: the audit finds
    them, and puts them back with force."""
    m = managers(ports=["net_null0,no-rx=1"], rx_paused=True, args=ARGS)
    hoarder = m.start_nf("test-liar", 1, "hoarder",
                         lib_args=["--trust-group", "a"],
                         nf_args=["--lie", "hoard", "--every", "50"])
    wait_for(lambda: group_a(m)["pool"]["in_use"] >= 50, 10, "the hoard")
    gone(m, hoarder)
    assert group_a(m)["pool"]["in_use"] == 0
    assert m.call("status")["registry"]["allocs_returned"] == 50
    hider = m.start_nf("test-liar", 1, "hider",
                       lib_args=["--trust-group", "a"],
                       nf_args=["--lie", "hoard_hidden", "--every", "50"])
    wait_for(lambda: group_a(m)["pool"]["in_use"] >= 50, 10, "the hoard")
    gone(m, hider)
    assert group_a(m)["pool"]["in_use"] == 50
    seen = m.call("group.audit", group="a")
    assert (seen["missing"], seen["recovered"], seen["freed_twice"]) == \
        (50, 0, 0), seen
    assert group_a(m)["pool"]["in_use"] == 50  # counted, not touched
    fixed = m.call("group.audit", group="a", force=True)
    assert (fixed["missing"], fixed["recovered"]) == (50, 50), fixed
    assert fixed["free"] == fixed["size"]
    assert group_a(m)["pool"]["in_use"] == 0
    assert m.shutdown() == 0


def test_audit_refuses_what_it_cannot_do(managers):
    m = managers(ports=["net_null0,no-rx=1"], rx_paused=True, args=ARGS)
    with pytest.raises(ZeroNFError, match="no trust group 'b'"):
        m.call("group.audit", group="b")
    clean = m.call("group.audit", group="a")
    assert clean["free"] == clean["size"] and clean["missing"] == 0
    assert m.shutdown() == 0
    m = managers(ports=["net_null0,no-rx=1"], rx_paused=True,
                 args=ARGS + ["--validate", "off"])
    with pytest.raises(ZeroNFError, match="--validate on"):
        m.call("group.audit", group="a")
    assert m.shutdown() == 0

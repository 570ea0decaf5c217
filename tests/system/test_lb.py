"""Load balancing across replicas while traffic flows: modes switched at
run time, weights, and a replica killed with kill -9 (its flows continue
on the survivors, nothing leaks, the move is counted)."""

from __future__ import annotations

import signal
import time

import pytest
from scapy.all import IP, TCP, UDP, Ether, wrpcap

from harness import conserved, scaled, wait_for

ETH = dict(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")


@pytest.fixture(scope="module")
def many_flows(tmp_path_factory):
    """2000 packets of 1000 connections (both directions), no RSS."""
    pkts = []
    for c in range(1000):
        a, b = f"10.{c % 7}.{c // 7 % 250}.1", f"172.16.{c % 13}.{c % 200}"
        l4 = TCP if c % 3 else UDP
        pkts.append(Ether(**ETH) / IP(src=a, dst=b) /
                    l4(sport=1024 + c, dport=80))
        pkts.append(Ether(**ETH) / IP(src=b, dst=a) /
                    l4(sport=80, dport=1024 + c))
    path = tmp_path_factory.mktemp("lb") / "flows.pcap"
    wrpcap(str(path), pkts)
    return path


def start(managers, trace, n_replicas, lb=None):
    m = managers(ports=[f"net_pcap0,rx_pcap={trace},infinite_rx=1",
                        "net_null0,no-rx=1"],
                 chain="1,port:1", rx_paused=True)
    base = m.pool()["in_use"]
    nfs = [m.start_nf("forward", 1, f"r{i}") for i in range(n_replicas)]
    if lb:
        m.call("service.set", service=1, lb=lb)
    m.call("rx.set", enabled=True)
    return m, base, nfs


def rx_of(m) -> dict:
    return {n["instance"]: n["rx"] for n in m.call("nf.list")["nfs"]}


def grow(m, which, timeout=20):
    """Wait until each instance in `which` received more packets."""
    before = rx_of(m)

    gained = {}

    def grown():
        now = rx_of(m)
        gained.update({i: now.get(i, 0) - before.get(i, 0) for i in which})
        return all(g > 500 for g in gained.values())

    try:
        wait_for(grown, timeout, f"{which} receiving")
    except TimeoutError as e:
        raise TimeoutError(f"{e}; packets gained: {gained}") from None


def stop(m, base):
    m.call("rx.set", enabled=False)
    return m.wait_idle(baseline=base)


@pytest.mark.parametrize("lb", ["hash", "least_loaded"])
def test_kill9_one_of_four_replicas(managers, many_flows, lb):
    m, base, nfs = start(managers, many_flows, 4, lb)
    ids = [nf.instance for nf in nfs]
    grow(m, ids)
    moved0 = m.call("service.list")["services"][0]["moved_buckets"]
    victim = nfs[1]
    victim.proc.signal(signal.SIGKILL)
    victim.proc.wait(5)
    wait_for(lambda: m.nf_by_pid(victim.proc.pid) is None, scaled(10), "dead NF")
    survivors = [i for i in ids if i != victim.instance]
    grow(m, survivors)
    svc = m.call("service.list")["services"][0]
    assert sorted(svc["instances"]) == sorted(survivors)
    assert svc["lb"] == lb
    if lb == "hash":
        # Exactly the dead replica's quarter of the buckets moved.
        assert svc["moved_buckets"] - moved0 == 64
        assert sorted(svc["buckets"].values()) == [85, 85, 86]
    else:
        assert svc["moved_flows"] > 0
    st = stop(m, base)
    rx, tx, dropped = conserved(st)
    assert rx == tx + dropped
    assert dropped == st["drops"]["nf_exit"]
    assert st["status"]["pool"]["in_use"] == base  # nothing leaked
    assert m.shutdown() == 0


def test_modes_switch_while_traffic_flows(managers, many_flows):
    m, base, nfs = start(managers, many_flows, 2)
    a, b = (nf.instance for nf in nfs)
    grow(m, [a, b])
    # Weighted 1:3: b gets three quarters of the buckets, and about three
    # quarters of the packets (1000 connections of equal size).
    res = m.call("service.set", service=1, lb="weighted",
                 weights={str(b): 3})
    assert res["buckets"] == {str(a): 64, str(b): 192}
    r0 = rx_of(m)
    time.sleep(1.0)
    r1 = rx_of(m)
    share_b = (r1[b] - r0[b]) / ((r1[a] - r0[a]) + (r1[b] - r0[b]))
    assert 0.65 < share_b < 0.85, share_b
    for lb in ("least_loaded", "hash", "least_loaded", "weighted"):
        m.call("service.set", service=1, lb=lb)
        grow(m, [a, b])
    bad = [dict(service=1, lb="random"), dict(service=0, lb="hash"),
           dict(service=1, lb="weighted", weights={"x": 1}),
           dict(service=1, lb="weighted", weights={str(a): 0})]
    for p in bad:
        with pytest.raises(Exception):
            m.call("service.set", **p)
    st = stop(m, base)
    rx, tx, dropped = conserved(st)
    assert rx > 0 and rx == tx and dropped == 0, st["drops"]
    assert m.shutdown() == 0


def test_replica_joins_only_after_its_init(managers, many_flows):
    """A replica is not sent packets until its init is done: one whose init
    fails (a flow table too big for the manager's memory) costs nothing,
    and the running replica keeps every flow."""
    m, base, nfs = start(managers, many_flows, 1)
    grow(m, [nfs[0].instance])
    bad = m.start_nf("monitor", 1, "bad", wait=False,
                     nf_args=["--flows", str(many_flows.parent / "f.json"),
                              "--flow-capacity", str(1 << 26)])
    assert bad.proc.wait(20) != 0
    assert "init failed" in bad.proc.output()
    grow(m, [nfs[0].instance])
    st = stop(m, base)
    assert st["status"]["registry"]["registered"] == 2  # it did register
    rx, tx, dropped = conserved(st)
    assert rx > 0 and rx == tx and dropped == 0, st["drops"]
    assert st["status"]["pool"]["in_use"] == base
    assert m.shutdown() == 0

"""Attacks on what NFs share (issue 28): an NF that takes more than its
share of the flow table, or leaves it full behind it (item 11). Before:
one NF installed rules until the table was full (every entry of
--flow-capacity), they outlived its kill -9, and the operator's own
`flow add` then failed "flow table full" until they expired (never with
--flow-idle-s 0)."""
from __future__ import annotations

import errno
import os
import signal

import pytest

from harness import scaled, wait_for
from zeronf import ZeroNFError
from zeronf.client import Client, tenant_socket_path


def counters(nf) -> dict:
    return (nf.stats() or {}).get("counters", {})


def fdir(m) -> dict:
    return m.call("stats")["fdir"]


def test_an_nf_cannot_fill_the_flow_table_nor_leave_it_full(managers):
    m = managers(ports=["net_null0,no-rx=1"], chain="1,drop",
                 args=["--flow-capacity", "4096", "--flow-idle-s", "0"])
    f = fdir(m)
    assert f["nf_flow_quota"] == 512 and f["tenant_flow_quota"] == 1024
    hog = m.start_nf("test-hog", 1, nf_args=["--mode", "rules"])
    wait_for(lambda: counters(hog).get("refused"), scaled(30),
             "the hog refused")
    assert counters(hog) == {"rules": 512, "refused": errno.EDQUOT}
    # One that asks for its rules to outlive it: the rules all NFs keep
    # have a quota of their own.
    keeper = m.start_nf("test-hog", 1, nf_args=["--mode", "rules",
                                                 "--keep"])
    wait_for(lambda: counters(keeper).get("refused"), scaled(30),
             "the keeper refused")
    assert counters(keeper) == {"rules": 512, "refused": errno.EDQUOT}
    f = fdir(m)
    assert f["flows"] == 1024 and f["flows_kept_by_nfs"] == 512
    assert f["flows_over_quota"] == 2
    # Killed, the hog's rules go with it; the keeper's stay.
    os.kill(hog.proc.pid, signal.SIGKILL)
    wait_for(lambda: fdir(m)["flows"] == 512, scaled(20),
             "the hog's rules removed")
    assert fdir(m)["flows_of_gone_nfs"] == 512
    os.kill(keeper.proc.pid, signal.SIGKILL)
    wait_for(lambda: not m.call("nf.list")["nfs"], scaled(20), "NFs gone")
    assert fdir(m)["flows"] == 512
    # The operator's own rules find room (the quotas leave it), and are
    # not bound by them.
    flows = [{"flow": {"proto": "tcp", "src": f"10.9.{i >> 8}.{i & 255}",
                       "dst": "10.8.0.1", "sport": 1000, "dport": 80},
              "chain": ["drop"], "both": False} for i in range(1500)]
    for i in range(0, len(flows), 250):  # a request is at most 64 KiB
        m.call("flow.add", flows=flows[i:i + 250])
    assert fdir(m)["flows"] == 2012
    assert m.shutdown() == 0


def test_a_tenant_cannot_fill_the_flow_table(managers):
    """A tenant's rules (its socket's and its NFs') have a quota of their
    own; the operator's do not count against it."""
    m = managers(ports=["net_null0,no-rx=1"], chain="1,drop",
                 args=["--trust-group", "red", "--tenant",
                       "red=red,services=10-19", "--slice", "red:0",
                       "--tenant-flow-quota", "8"])

    def flows(first, n, chain):
        return [{"flow": {"proto": "udp", "src": f"10.1.0.{first + i}",
                          "dst": "10.2.0.1", "sport": 5, "dport": 6},
                 "chain": chain, "both": False} for i in range(n)]
    with Client(path=tenant_socket_path(m.name, "red")) as red:
        red.call("flow.add", flows=flows(0, 8, ["drop"]))
        with pytest.raises(ZeroNFError, match="tenant's rules are at its "
                           "quota") as e:
            red.call("flow.add", flows=flows(8, 1, ["drop"]))
        assert e.value.code == -errno.EDQUOT
        # Replacing one of its rules takes no more room.
        red.call("flow.add", flows=flows(0, 1, ["drop"]))
    m.call("flow.add", flows=flows(100, 20, ["drop"]))
    assert fdir(m)["flows"] == 28 and fdir(m)["flows_over_quota"] == 1
    assert m.shutdown() == 0

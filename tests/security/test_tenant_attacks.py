"""Attacks between tenants (issue 28, item 8): a tenant learning the names
of another's NFs by starting one of the same name (before: EEXIST, "an NF
named 'fw' is already launched"), or reaching another's NF by its name.
Names are the tenant's own: kept as "TENANT:NAME"; each tenant sees its
own names, the operator sees them whole."""
from __future__ import annotations

import pytest

from harness import scaled, wait_for
from zeronf import ZeroNFError
from zeronf.client import Client, tenant_socket_path

ARGS = ["--trust-group", "red", "--trust-group", "blue",
        "--tenant", "red=red,services=10-19",
        "--tenant", "blue=blue,services=20-29",
        "--slice", "red:0", "--slice", "blue:1"]


def test_tenants_names_are_their_own(managers):
    m = managers(ports=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                 args=ARGS)
    red = Client(path=tenant_socket_path(m.name, "red"))
    blue = Client(path=tenant_socket_path(m.name, "blue"))
    try:
        red.call("nf.start", name="fw", binary="zeronf-forward",
                 service=10)
        # The same name on another tenant's socket: its own NF, no word
        # of the other's.
        got = blue.call("nf.start", name="fw", binary="zeronf-forward",
                        service=20, replicas=2)
        assert got["name"] == "fw" and \
            [r["name"] for r in got["instances"]] == ["fw", "fw.1"]
        wait_for(lambda: len([n for n in m.call("nf.list")["nfs"]
                              if n["state"] == "running"]) == 3,
                 scaled(30), "both tenants' NFs running")
        for c, t in ((red, "red"), (blue, "blue")):
            assert [x["name"] for x in c.call("launch.list")["launched"]] \
                == ["fw"]
            assert {n["name"] for n in c.call("nf.list")["nfs"]} <= \
                {"fw", "fw.1"}
        names = sorted(n["name"] for n in m.call("nf.list")["nfs"])
        assert names == ["blue:fw", "blue:fw.1", "red:fw"], names
        assert sorted(x["name"] for x in
                      m.call("launch.list")["launched"]) == \
            ["blue:fw", "red:fw"]
        # Each changes its own only, by its own name.
        red.call("nf.scale", name="fw", replicas=2)
        blue.call("nf.remove", name="fw")
        wait_for(lambda: sorted(n["name"] for n in m.call("nf.list")["nfs"]
                                if n["state"] == "running") ==
                 ["red:fw", "red:fw.1"], scaled(30), "blue's gone")
        # Its second "fw" again, while red's runs: no conflict, no leak.
        blue.call("nf.start", name="fw", binary="zeronf-forward",
                  service=21)
        with pytest.raises(ZeroNFError, match="already launched"):
            red.call("nf.start", name="fw", binary="zeronf-forward",
                     service=11)
        with pytest.raises(ZeroNFError, match="no launched NF named"):
            blue.call("nf.scale", name="red:fw", replicas=0)
    finally:
        red.close()
        blue.close()
    assert m.shutdown() == 0

"""Attacks on the registry (issue 28, "what no attack tried yet"): a
process the manager did not register speaking in a registered NF's name.
An NF of a trust group forks: the child has the NF's slot, registration
and memory, and asks for a flow rule as the NF. What comes on a group's
kick socket other than REGISTER is taken only from the process that
registered in the slot, as the kernel names the sender (SO_PASSCRED):
the child's request is dropped (it times out), the NF's own is served.
(NFs of no group post on the message ring, in the EAL's memory, which
carries no sender: they trust each other, docs/security.md.)"""
from __future__ import annotations

import errno

from harness import scaled, wait_for


def test_a_forked_child_cannot_speak_for_its_nf(managers):
    m = managers(ports=["net_null0,no-rx=1"], chain="1,drop",
                 args=["--trust-group", "ga"])
    nf = m.start_nf("test-hog", 1, nf_args=["--mode", "fork"],
                    lib_args=["--trust-group", "ga"])

    def counters():
        return (nf.stats() or {}).get("counters", {})
    wait_for(lambda: counters().get("done"), scaled(30),
             "the child's request and the NF's own answered")
    assert counters() == {"child_rc": errno.ETIMEDOUT, "own_rc": 0,
                          "done": 1}
    flows = m.call("flow.list")["flows"]
    assert len(flows) == 1 and flows[0]["flow"]["src"] == "10.2.0.0", flows
    assert nf.proc.alive()
    assert m.shutdown() == 0

"""`make bench BENCH=trust`: a chain of 2 (the speed tester and one
forward NF) within one trust group, and across two (each packet copied
into the other group's pool by a worker, both ways: mgr/group.c)."""
from __future__ import annotations

import json

from common import TMP, emit, log, median
from harness import Manager

GROUPS = ["--trust-group", "a:16383", "--trust-group", "b:16383"]
WINDOW = 512


def trust_once(mode: str, size: int, seconds: float = 2.0) -> tuple[float,
                                                                    float]:
    """(Mpps through the chain, mean ns per copy) for mode same_group
    (both NFs in a) or cross_group (the tester in a, the forward NF in
    b)."""
    m = Manager(TMP, chain="2,1", args=GROUPS + ["--mem", "512"])
    try:
        fwd = "a" if mode == "same_group" else "b"
        m.start_nf("forward", 2, lib_args=["--trust-group", fwd])
        st = m.start_nf("speed-tester", 1, lib_args=["--trust-group", "a"],
                        nf_args=["-n", str(WINDOW), "-S", str(size),
                                 "-d", str(seconds), "-w", "1"])
        st.proc.wait(seconds + 30)
        r = json.loads([ln for ln in st.proc.output().splitlines()
                        if ln.startswith("{")][-1])
        return r["mpps"], m.call("group.list")["ns_per_copy"]
    finally:
        m.shutdown()
        m.close()


def bench_trust(runs: int) -> None:
    for size in (64, 1500):
        res: dict[str, list[tuple[float, float]]] = {"same_group": [],
                                                     "cross_group": []}
        for _ in range(runs):
            for mode in res:
                res[mode].append(trust_once(mode, size))
        log(f"trust {size} B: {res}")
        for mode, v in res.items():
            emit({"bench": "trust", "mode": mode, "size": size,
                  "mpps": median([x[0] for x in v]),
                  "ns_per_copy": round(median([x[1] for x in v]), 1),
                  "runs": [round(x[0], 3) for x in v]})


def chain2_once(handoff: str, validate: str, seconds: float = 2.0) -> float:
    """The chain bench's chain of 2 (dataplane.tester_line's layout on
    this machine), with --validate on or off."""
    m = Manager(TMP, chain="2,1",
                args=["--handoff", handoff, "--validate", validate])
    try:
        m.start_nf("forward", 2)
        st = m.start_nf("speed-tester", 1,
                        nf_args=["-n", str(WINDOW), "-d", str(seconds),
                                 "-w", "1"])
        st.proc.wait(seconds + 30)
        return json.loads([ln for ln in st.proc.output().splitlines()
                           if ln.startswith("{")][-1])["mpps"]
    finally:
        m.shutdown()
        m.close()


def bench_validate(runs: int) -> None:
    """What checking NFs' descriptors costs (mgr/desc.c), chain of 2:
    NFs handing packets to each other (the default: the worker sees
    none of them) and every hop through the worker (--handoff worker)."""
    for handoff in ("direct", "worker"):
        res: dict[str, list[float]] = {"on": [], "off": []}
        for _ in range(runs):
            for v in res:
                res[v].append(chain2_once(handoff, v))
        log(f"validate, {handoff}: {res}")
        on, off = median(res["on"]), median(res["off"])
        emit({"bench": "validate", "nfs": 2, "handoff": handoff,
              "on_mpps": on, "off_mpps": off,
              "cost_pct": round(100 * (1 - on / off), 1) if off else None,
              "runs_on": res["on"], "runs_off": res["off"]})

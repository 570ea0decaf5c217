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

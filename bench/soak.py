"""soak: NF kills and restarts, LB mode, chain and flow-rule churn under
traffic for SOAK_S seconds; memory and buffers checked at the end. Line
format: bench/run.py."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from common import log, emit
from harness import Manager
from zeronf import runtime_dir
from dataplane import N_FLOWS, trace_manager


# ---------------------------------------------------------------- soak
def telemetry_json(name: str, cmd: str) -> dict:
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(f"{runtime_dir(name)}/dpdk_telemetry.v2")
    try:
        s.recv(4096)
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 20))
    finally:
        s.close()


def soak_sample(m: Manager) -> dict:
    """The manager's resident memory and its DPDK heap in use (the
    hugepages: packet pool, rings, tables, NFs' tables it holds)."""
    rss = 0
    for line in Path(f"/proc/{m.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    heap = telemetry_json(m.name, "/eal/heap_info,0")["/eal/heap_info"]
    return {"rss_kb": rss, "heap_mb": round(heap["Alloc_size"] / 2**20, 2)}


def bench_soak(runs: int) -> None:
    """SOAK_S seconds (default 600) of churn under traffic: every ~2 s an
    NF killed with -9 or stopped and started again (forward replicas, a
    monitor, flowmon with its flow table), the balancing mode or the
    default chain changed, 500 exact flow rules and a wildcard rule
    installed and removed. Start and end taken in the same state (all NFs
    up, traffic flowing, a minute in); the pool checked once traffic
    stops: buffers_leaked = buffers not back; crashes = the manager's
    exit or deaths we did not cause."""
    import random
    del runs
    seconds = float(os.environ.get("SOAK_S", "600"))
    rnd = random.Random(1)
    m, base = trace_manager([])
    kills = stops = actions = 0
    try:
        m.call("chain.set", hops=["svc:1", "svc:2", "svc:3", "port:1"])
        nfs = {"r0": ("forward", 1, []), "r1": ("forward", 1, []),
               "mon": ("monitor", 2, []),
               "fm": ("flowmon", 3, ["--capacity", "200000"])}
        live = {k: m.start_nf(kind, svc, k, nf_args=args)
                for k, (kind, svc, args) in nfs.items()}
        m.call("rx.set", enabled=True)
        time.sleep(min(60.0, seconds / 10))
        start, t_start = soak_sample(m), time.monotonic()
        tx0 = m.call("port.list")["ports"][1]["tx"]
        deadline = t_start + seconds
        modes = ["hash", "least_loaded", "weighted"]
        rule_ids: list[int] = []
        batch: list[dict] = []
        while time.monotonic() < deadline:
            act = actions % 5
            if act in (0, 1):  # an NF killed or stopped, then back
                name = rnd.choice(sorted(live))
                nf = live[name]
                nf.proc.signal(9 if act == 0 else 15)
                nf.proc.wait(20)
                kills += act == 0
                stops += act == 1
                kind, svc, args = nfs[name]
                live[name] = m.start_nf(kind, svc, name, nf_args=args)
            elif act == 2:
                mode = modes[actions // 5 % 3]
                kw = {"weights": {str(n.instance): rnd.randint(1, 5)
                                  for k, n in live.items()
                                  if nfs[k][1] == 1}} \
                    if mode == "weighted" else {}
                m.call("service.set", service=1, lb=mode, **kw)
                m.call("chain.set", hops=(
                    ["svc:1", "svc:2", "svc:3", "port:1"] if actions % 2
                    else ["svc:1", "svc:3", "port:1"]))
            elif act == 3:  # exact rules churned
                if batch:
                    m.call("flow.del", flows=[{"flow": f["flow"]}
                                              for f in batch])
                batch = [{"flow": {"proto": "udp",
                                   "src": f"10.0.{i >> 8 & 255}.{i & 255}",
                                   "dst": "10.1.0.1",
                                   "sport": 1024 + i % 50000, "dport": 80},
                          "chain": ["svc:2", "svc:1", "port:1"]}
                         for i in rnd.sample(range(N_FLOWS), 500)]
                m.call("flow.add", flows=batch)
            else:  # a wildcard rule in, the oldest out
                rule_ids.append(m.call("rule.add", match={
                    "proto": "udp", "dport": rnd.randint(1, 1000)},
                    chain=["svc:1", "port:1"], priority=5)["id"])
                if len(rule_ids) > 3:
                    m.call("rule.del", id=rule_ids.pop(0))
            actions += 1
            time.sleep(2.0)
        # the same state as at the start: every NF up, rules back to none
        if batch:
            m.call("flow.del", flows=[{"flow": f["flow"]} for f in batch])
        for rid in rule_ids:
            m.call("rule.del", id=rid)
        m.call("chain.set", hops=["svc:1", "svc:2", "svc:3", "port:1"])
        time.sleep(5.0)
        end = soak_sample(m)
        tx1 = m.call("port.list")["ports"][1]["tx"]
        mpps = (tx1 - tx0) / (time.monotonic() - t_start) / 1e6
        m.call("rx.set", enabled=False)
        st = m.wait_idle(timeout=60, baseline=base)
        leaked = st["status"]["pool"]["in_use"] - base
        died = st["status"]["registry"]["died"]
        crashes = (0 if m.proc.alive() else 1) + max(0, died - kills)
    finally:
        m.shutdown()
        m.close()
    log(f"soak: {actions} actions, {kills} kills, {stops} stops")
    emit({"bench": "soak", "seconds": round(seconds), "actions": actions,
          "nf_kills": kills, "nf_stops": stops,
          "rss_kb_start": start["rss_kb"], "rss_kb_end": end["rss_kb"],
          "hugepage_mb_start": start["heap_mb"],
          "hugepage_mb_end": end["heap_mb"], "buffers_leaked": leaked,
          "crashes": crashes, "mpps": round(mpps, 3)})

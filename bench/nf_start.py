"""nf_start: time from `nf.start` to the NF's first packet.

  {"bench":"nf_start","sandboxed":true|false,"p50_ms":X,"p99_ms":Y}
  {"bench":"nf_start","sandboxed":true,"trust_group":true,"p50_ms":X,...}
  20 starts each of a forward NF launched by the manager (nf.start), in
  a sandbox (bubblewrap, the instance's PID namespace, a cgroup) or not,
  and sandboxed in a trust group (a PID namespace of its own, its
  group's file), interleaved (one of each in turn: a noisy machine
  affects all), while
  net_null offers packets to its service: from the command to the first
  packet the NF received (its rx counter, polled every millisecond). The
  NF is removed between starts (not timed). OpenNetVM reports 0.53 s to
  start an NF in a container.

  {"bench":"nf_death","p50_ms":X,"p99_ms":Y,"target_ms":100}
  20 NFs (started by hand) killed (SIGKILL), one at a time: from the
  kill to the manager no longer listing the NF (its pidfd wakes the
  control thread; the rest is the control socket's polling, every
  millisecond)."""
from __future__ import annotations

import statistics
import time

from harness import NF_BIN, Manager, wait_for

STARTS = 20


def _percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


KINDS = ("plain", "sandboxed", "group")


def nf_start_times(tmp, starts: int = STARTS) -> dict[str, list[float]]:
    m = Manager(tmp, ports=["net_null0"], chain="1,drop",
                args=["--trust-group", "g"])
    times: dict[str, list[float]] = {k: [] for k in KINDS}
    try:
        for i in range(len(KINDS) * starts):
            kind = KINDS[i % len(KINDS)]
            name = f"s{i}"
            params = {"name": name, "binary": str(NF_BIN["forward"]),
                      "service": 1}
            if kind != "plain":
                params.update(sandbox=True, memory_mb=256)
            if kind == "group":
                params.update(trust_group="g")
            with m.client() as c:
                t0 = time.monotonic()
                c.call("nf.start", **params)
                while True:
                    nf = next((n for n in c.nfs() if n["name"] == name),
                              None)
                    if nf is not None and nf["rx"] > 0:
                        break
                    if time.monotonic() - t0 > 30:
                        raise TimeoutError(f"{name} got no packet in 30 s")
                    time.sleep(0.001)
                times[kind].append((time.monotonic() - t0) * 1000)
                c.call("nf.remove", name=name)
            wait_for(lambda: not m.call("launch.list")["launched"], 30,
                     f"{name} removed")
    finally:
        m.shutdown()
        m.close()
    return times


def nf_death_times(tmp, kills: int = STARTS) -> list[float]:
    m = Manager(tmp, ports=["net_null0"], chain="1,drop")
    times = []
    try:
        for i in range(kills):
            nf = m.start_nf("forward", 1, f"d{i}")
            t0 = time.monotonic()
            nf.proc.signal(9)
            while m.nf_by_pid(nf.proc.pid) is not None:
                if time.monotonic() - t0 > 30:
                    raise TimeoutError(f"d{i} still listed after 30 s")
                time.sleep(0.001)
            times.append((time.monotonic() - t0) * 1000)
            nf.proc.wait(10)
    finally:
        m.shutdown()
        m.close()
    return times


def bench_nf_start(runs: int, tmp, emit, log) -> None:
    del runs  # STARTS starts of each kind are the measurement
    times = nf_start_times(tmp)
    for kind in ("sandboxed", "plain", "group"):
        t = times[kind]
        line = {"bench": "nf_start", "sandboxed": kind != "plain"}
        if kind == "group":
            line["trust_group"] = True
        emit({**line, "p50_ms": round(statistics.median(t), 1),
              "p99_ms": round(_percentile(t, 0.99), 1)})
    t = nf_death_times(tmp)
    emit({"bench": "nf_death", "p50_ms": round(statistics.median(t), 1),
          "p99_ms": round(_percentile(t, 0.99), 1), "target_ms": 100})

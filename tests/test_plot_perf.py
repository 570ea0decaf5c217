"""scripts/plot_perf.py: `make bench` output in, docs/performance.md and its
SVG figures out; tables and ratios from the lines given, other lines
ignored, missing sections said, bad input refused."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts/plot_perf.py"


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def peers_lines() -> list[dict]:
    mpps = {("zeronf", "p2p"): 40.0, ("testpmd-io", "p2p"): 68.0,
            ("testpmd-mac", "p2p"): 48.0, ("ovs-dpdk", "p2p"): 16.0,
            ("kernel", "p2p"): 0.25, ("zeronf", "flows100k"): 8.0,
            ("ovs-dpdk", "flows100k"): 2.0}
    return [{"bench": "peers", "system": s, "scenario": c, "size": b,
             "mpps": x / (1 + b / 1000)}
            for b in (64, 512, 1500) for (s, c), x in mpps.items()]


def test_peers_chain_latency(tmp_path):
    f = tmp_path / "bench.jsonl"
    lines = peers_lines() + [
        {"bench": "chain", "mode": "process", "nfs": n, "mpps": 50.0 / n,
         "worker_mpps": 25.0 / n} for n in (1, 2, 4, 8)
    ] + [{"bench": "chain", "mode": "bundle", "nfs": n, "mpps": 100.0 / n}
         for n in (2, 4, 8)] + [
        {"bench": "latency", "nfs": 2, "load_pct": 10, "p50_ns": 8000,
         "p99_ns": 21000, "cdf_ns": [[0.5, 8000], [0.9, 15000],
                                     [0.99, 21000]]},
        {"bench": "latency", "mode": "bundle", "nfs": 2, "load_pct": 10,
         "p50_ns": 1000, "p99_ns": 4000,
         "cdf_ns": [[0.5, 1000], [0.99, 4000]]}]
    f.write_text("progress on stderr would not be here\n" +
                 "\n".join(json.dumps(x) for x in lines) + "\nnot json {\n")
    out = tmp_path / "docs/performance.md"
    r = run(f, "--out", out)
    assert r.returncode == 0, r.stderr
    md = out.read_text()
    assert "| zeronf | 37.59 | 26.46 | 16.00 |" in md, md
    # zeronf / ovs-dpdk: 40 / 16 at every size, with the target.
    assert "| zeronf / ovs-dpdk | 2.50 | 2.50 | 2.50 |  (target >= 2.0)" in md
    assert "| zeronf / ovs-dpdk | 4.00 | 4.00 | 4.00 |  (target >= 1.5)" in md
    # bundled: 100 / 8 against the processes' chain of 2 (25)
    assert "| 8 | 6.25 | 0.12 | 0.25 | 3.12 | 12.50 | 0.50 |" in md
    assert "| 1 | 50.00 | 1.00 | 2.00 | 25.00 | - | - |" in md
    assert "| 2 | process | 10 % | 8.0 | 21.0 |" in md
    assert "| 2 | bundle | 10 % | 1.0 | 4.0 |" in md
    assert "Not in the input" not in md
    for name in ("peers-p2p.svg", "peers-flows100k.svg", "chain.svg",
                 "latency.svg"):
        svg = out.parent / "img" / name
        assert svg.read_text().lstrip().startswith("<?xml"), name
        assert f"](img/{name})" in md


def test_missing_sections_and_bad_input(tmp_path):
    f = tmp_path / "chain.jsonl"
    f.write_text(json.dumps({"bench": "chain", "nfs": 1, "mpps": 50.0}))
    out = tmp_path / "perf.md"
    r = run(f, "--out", out)
    assert r.returncode == 0, r.stderr
    assert "Not in the input: peers, latency lines." in out.read_text()
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"bench": "idle", "cpu_pct": 2.5}\n')
    r = run(empty, "--out", tmp_path / "x.md")
    assert r.returncode == 1 and "no peers, chain or latency" in r.stderr
    assert not (tmp_path / "x.md").exists()
    r = run(tmp_path / "nope.jsonl")
    assert r.returncode == 2 and "no such file" in r.stderr

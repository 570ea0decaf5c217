#!/usr/bin/env python3
"""Draw benchmark results into docs/performance.md.

  make bench BENCH=peers > peers.jsonl
  make bench BENCH=chain > chain.jsonl
  .venv/bin/python scripts/plot_perf.py peers.jsonl chain.jsonl

Reads the JSON lines `make bench` prints (other lines are ignored) and
writes docs/performance.md with its figures in docs/img/ (SVG, matplotlib):
Mpps per system and scenario for each frame size (peers lines), Mpps by
chain length (chain lines), and latency CDFs (latency lines that carry a
"cdf_ns" list of [percentile, ns] points). Each table and figure is drawn
only from the lines given; the page says which were missing.
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SYSTEMS = ["zeronf", "zeronf-nf_rx", "zeronf-bundle", "testpmd-io",
           "testpmd-mac", "ovs-dpdk", "kernel"]


def read_lines(files: list[Path]) -> dict[str, list[dict]]:
    by: dict[str, list[dict]] = {}
    for f in files:
        for ln in f.read_text().splitlines():
            ln = ln.strip()
            if not ln.startswith("{"):
                continue
            try:
                obj = json.loads(ln)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("bench"), str):
                by.setdefault(obj["bench"], []).append(obj)
    return by


def plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as p
    p.rcParams["svg.hashsalt"] = "zeronf"  # the same SVG for the same data
    p.rcParams["svg.fonttype"] = "none"
    return p


def peers_section(lines: list[dict], img: Path) -> list[str]:
    p = plt()
    sizes = sorted({ln["size"] for ln in lines})
    scenarios = [s for s in ("p2p", "flows100k")
                 if any(ln["scenario"] == s for ln in lines)]
    mpps = {(ln["system"], ln["scenario"], ln["size"]): ln["mpps"]
            for ln in lines}
    out = ["## ZeroNF and its peers (`make bench BENCH=peers`)", "",
           "Mpps, medians of the runs; bench/peers.py says what each system "
           "and scenario is.", ""]
    for sc in scenarios:
        systems = [s for s in SYSTEMS if any((s, sc, b) in mpps
                                             for b in sizes)]
        out += [f"### {sc}", "",
                "| system | " + " | ".join(f"{b} B" for b in sizes) + " |",
                "|---|" + "---|" * len(sizes)]
        for s in systems:
            out.append(f"| {s} | " + " | ".join(
                f"{mpps[(s, sc, b)]:.2f}" if (s, sc, b) in mpps else "-"
                for b in sizes) + " |")
        if all(("zeronf", sc, b) in mpps and ("ovs-dpdk", sc, b) in mpps
               for b in sizes):
            target = 2.0 if sc == "p2p" else 1.5
            out.append("| zeronf / ovs-dpdk | " + " | ".join(
                f"{mpps[('zeronf', sc, b)] / mpps[('ovs-dpdk', sc, b)]:.2f}"
                for b in sizes) + f" |  (target >= {target})")
        fig, ax = p.subplots(figsize=(7, 3.5))
        width = 0.8 / max(1, len(systems))
        for i, s in enumerate(systems):
            ax.bar([k + i * width for k in range(len(sizes))],
                   [mpps.get((s, sc, b), 0) for b in sizes], width, label=s)
        ax.set_xticks([k + width * (len(systems) - 1) / 2
                       for k in range(len(sizes))])
        ax.set_xticklabels([f"{b} B" for b in sizes])
        ax.set_ylabel("Mpps")
        ax.set_title(f"{sc}: Mpps per system and frame size")
        ax.legend(fontsize=8)
        fig.tight_layout()
        name = f"peers-{sc}.svg"
        fig.savefig(img / name)
        p.close(fig)
        out += ["", f"![{sc}](img/{name})", ""]
    return out


def chain_section(lines: list[dict], img: Path) -> list[str]:
    """The chain lines by mode: NFs as processes handing packets to each
    other ("process", or no mode: lines from before modes), every hop
    through a worker ("worker", or the process line's worker_mpps), NFs
    in bundles ("bundle")."""
    p = plt()
    proc = sorted((ln for ln in lines if ln.get("mode", "process") ==
                   "process"), key=lambda ln: ln["nfs"])
    pts = [(ln["nfs"], ln["mpps"]) for ln in proc]
    wk = {ln["nfs"]: ln["worker_mpps"] for ln in proc if "worker_mpps" in ln}
    wk.update({ln["nfs"]: ln["mpps"] for ln in lines
               if ln.get("mode") == "worker"})
    bun = {ln["nfs"]: ln["mpps"] for ln in lines if ln.get("mode") == "bundle"}
    out = ["## Chain length (`make bench BENCH=chain`)", "",
           "NFs as processes handing packets to each other (Mpps); worker: "
           "every hop through a manager worker (`--handoff worker`); "
           "bundled: the chain cut into one bundle a core (zeronf-bundle); "
           "all in the same run.", "",
           "| NFs | Mpps | vs 1 NF | vs 2 NFs | worker Mpps | bundled Mpps "
           "| bundled vs 2 NFs |",
           "|---|---|---|---|---|---|---|"]
    first = pts[0][1] if pts else 1
    two = dict(pts).get(2, first)
    out += [f"| {n} | {x:.2f} | {x / first:.2f} | {x / two:.2f} | "
            + (f"{wk[n]:.2f}" if n in wk else "-") + " | "
            + (f"{bun[n]:.2f} | {bun[n] / two:.2f}" if n in bun else "- | -")
            + " |" for n, x in pts]
    fig, ax = p.subplots(figsize=(5, 3.2))
    ax.plot([n for n, _ in pts], [x for _, x in pts], marker="o",
            label="NF to NF (processes)")
    for label, curve, mark in (("through a worker", wk, "s"),
                               ("bundled", bun, "^")):
        if curve:
            ns = sorted(curve)
            ax.plot(ns, [curve[n] for n in ns], marker=mark, label=label)
    if wk or bun:
        ax.legend(fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_xticks([n for n, _ in pts])
    ax.set_xticklabels([str(n) for n, _ in pts])
    ax.set_xlabel("NFs in the chain")
    ax.set_ylabel("Mpps")
    ax.set_title("Chain length vs Mpps")
    fig.tight_layout()
    fig.savefig(img / "chain.svg")
    p.close(fig)
    return out + ["", "![chain](img/chain.svg)", ""]


def latency_section(lines: list[dict], img: Path) -> list[str]:
    p = plt()
    out = ["## Latency (`make bench BENCH=latency`)", "",
           "| NFs | mode | load | p50 (us) | p99 (us) |",
           "|---|---|---|---|---|"]
    fig, ax = p.subplots(figsize=(6, 3.5))
    for ln in sorted(lines, key=lambda x: (x.get("nfs", 0),
                                           x.get("mode", "process"),
                                           x.get("load_pct", 0))):
        mode = ln.get("mode", "process")
        out.append(f"| {ln.get('nfs')} | {mode} | {ln.get('load_pct')} % | "
                   f"{ln.get('p50_ns', 0) / 1000:.1f} | "
                   f"{ln.get('p99_ns', 0) / 1000:.1f} |")
        cdf = ln.get("cdf_ns")
        if cdf:
            ax.plot([ns / 1000 for _, ns in cdf], [q for q, _ in cdf],
                    label=f"{ln.get('nfs')} NFs, {mode}, "
                    f"{ln.get('load_pct')} %")
    ax.set_xscale("log")
    ax.set_xlabel("one-way latency (us)")
    ax.set_ylabel("percentile")
    ax.set_title("Latency CDFs")
    if ax.lines:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(img / "latency.svg")
    p.close(fig)
    return out + ["", "![latency](img/latency.svg)", ""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path,
                    help="files of `make bench` output")
    ap.add_argument("--out", type=Path, default=REPO / "docs/performance.md")
    a = ap.parse_args()
    for f in a.files:
        if not f.is_file():
            print(f"plot_perf: {f}: no such file", file=sys.stderr)
            return 2
    by = read_lines(a.files)
    img = a.out.parent / "img"
    img.mkdir(parents=True, exist_ok=True)
    md = ["# Performance", "",
          f"Generated by scripts/plot_perf.py on {date.today()} from "
          f"`make bench` output ({', '.join(f.name for f in a.files)}); "
          "do not edit by hand. docs/benchmarks.md explains the numbers "
          "and what was tried.", ""]
    sections = [("peers", peers_section), ("chain", chain_section),
                ("latency", latency_section)]
    missing = []
    for name, fn in sections:
        if by.get(name):
            md += fn(by[name], img)
        else:
            missing.append(name)
    if missing:
        md += [f"Not in the input: {', '.join(missing)} lines.", ""]
    if len(missing) == len(sections):
        print("plot_perf: no peers, chain or latency lines in the input",
              file=sys.stderr)
        return 1
    a.out.write_text("\n".join(md))
    print(f"plot_perf: wrote {a.out} and its figures in {img}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

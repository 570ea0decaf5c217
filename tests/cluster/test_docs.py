"""docs/kubernetes.md's "Try it", as written: each command of its block
run in order by bash from the repository root (the cluster this session
brought up: `up` finds it; its last command, `down`, is the session's
end), the client's TCP through the sample chain checked."""
from __future__ import annotations

import json
import os
import re
import subprocess

from kube import KUBECONFIG, REPO, kubectl, wait

DOC = REPO / "docs" / "kubernetes.md"


def try_it() -> list[str]:
    text = DOC.read_text()
    part = text[text.index("## Try it"):]
    block = re.search(r"```\n(.*?)```", part, re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip()]


def run_get(cmd: str) -> str:
    """The walkthrough's `kubectl get ...` as written (its KUBECONFIG
    exported as the walkthrough does)."""
    return subprocess.run(["bash", "-c", cmd], cwd=REPO, capture_output=True,
                          text=True, timeout=60,
                          env={**os.environ, "KUBECONFIG": KUBECONFIG}
                          ).stdout


def table_rows(out: str) -> dict[str, dict[str, str]]:
    """kubectl's tables (one per kind, a blank line between) as name ->
    {column: value}, each column where its heading starts (a value may
    be empty: a chain's FROM)."""
    rows: dict[str, dict[str, str]] = {}
    for block in out.strip().split("\n\n"):
        lines = block.splitlines()
        starts = [m.start() for m in re.finditer(r"\S+", lines[0])]
        cols = list(zip(lines[0].split(), starts, starts[1:] + [None]))
        for ln in lines[1:]:
            row = {h: ln[a:b].strip() for h, a, b in cols}
            rows[row["NAME"]] = row
    return rows


def counted(cmd: str) -> dict | None:
    """The get's rows once every NetworkFunction has received and sent
    packets and every chain is Ready on both nodes, else None."""
    rows = table_rows(run_get(cmd))
    nfs = [r for n, r in rows.items() if n.startswith("networkfunction")]
    chains = [r for n, r in rows.items() if n.startswith("servicechain")]
    ok = len(nfs) == 3 and len(chains) == 2 and \
        all(r["RX"].isdigit() and int(r["RX"]) > 0 and  # not <none>
            r["TX"].isdigit() and int(r["TX"]) > 0 for r in nfs) and \
        all(r["READY"] == "True" and "znk-node1" in r["PROGRAMMED"] and
            "znk-node2" in r["PROGRAMMED"] for r in chains)
    return rows if ok else None


def test_the_walkthrough_is_the_one_tested():
    cmds = try_it()
    assert cmds[0] == "make build k8s" and cmds[-1] == "scripts/cluster.sh down"
    assert any("samples/chain.yaml" in c for c in cmds)


def test_try_it_as_written(zeronf):
    cmds = try_it()[:-1]  # down: the session's end does it
    script = "set -e\n" + "\n".join(cmds) + "\n"
    try:
        r = subprocess.run(["bash", "-c", script], cwd=REPO,
                           capture_output=True, text=True, timeout=1500)
        assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
        sent = [json.loads(ln) for ln in r.stdout.splitlines()
                if ln.startswith('{"conns"')]
        assert sent and sent[0]["ok"] == 4 and \
            sent[0]["bytes"] == 10_000_000, r.stdout[-3000:]
        # get (the doc's, again until the node agents' reports are in):
        # each NetworkFunction counted the connections' packets both
        # ways, each chain is ready and programmed on both nodes
        get = next(c for c in cmds if " get networkfunctions," in c)
        rows = wait(lambda: counted(get), 60,
                    "the walkthrough's get showing packets",
                    show=lambda: run_get(get))
        assert set(rows) >= {"networkfunction.zeronf.dev/mon",
                             "networkfunction.zeronf.dev/fwd",
                             "networkfunction.zeronf.dev/dpi",
                             "servicechain.zeronf.dev/client-to-server",
                             "servicechain.zeronf.dev/server-to-client"}
    finally:
        kubectl("delete", "-f", str(REPO / "k8s/config/samples/chain.yaml"),
                "--ignore-not-found", "--wait=true", timeout=180)
        wait(lambda: not json.loads(kubectl(
            "get", "pods", "-o", "json", "-l",
            "zeronf.dev/networkfunction").stdout)["items"],
             120, "the sample's NF pods gone",
             show=lambda: kubectl("get", "pods", "-o", "wide").stdout)

"""docs/kubernetes.md's "Try it", as written: each command of its block
run in order by bash from the repository root (the cluster this session
brought up: `up` finds it; its last command, `down`, is the session's
end), the client's TCP through the sample chain checked."""
from __future__ import annotations

import json
import re
import subprocess

from kube import REPO, kubectl, wait

DOC = REPO / "docs" / "kubernetes.md"


def try_it() -> list[str]:
    text = DOC.read_text()
    part = text[text.index("## Try it"):]
    block = re.search(r"```\n(.*?)```", part, re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip()]


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
        # get: each NetworkFunction counted its packets
        assert "networkfunction.zeronf.dev/dpi" in r.stdout, r.stdout[-3000:]
    finally:
        kubectl("delete", "-f", str(REPO / "k8s/config/samples/chain.yaml"),
                "--ignore-not-found", "--wait=true", timeout=180)
        wait(lambda: not json.loads(kubectl(
            "get", "pods", "-o", "json", "-l",
            "zeronf.dev/networkfunction").stdout)["items"],
             120, "the sample's NF pods gone",
             show=lambda: kubectl("get", "pods", "-o", "wide").stdout)

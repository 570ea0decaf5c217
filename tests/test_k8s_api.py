"""ZeroNF's Kubernetes API (k8s/api/v1alpha1, docs/kubernetes.md): the CRDs
in k8s/config/crd and the roles of the operator and the node agent in
k8s/config/rbac are what controller-gen makes of the code now (make crds). The CRDs' validation is
tested by the API server itself (tests/cluster/test_crds.py)."""
from __future__ import annotations

import filecmp
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GO = os.environ.get("GO", "/usr/local/go/bin/go")


@pytest.mark.skipif(not Path(GO).exists(), reason="no Go toolchain")
@pytest.mark.parametrize("what, where, args", [
    ("crd", "crd", ["paths=./api/...", "crd:crdVersions=v1"]),
    ("rbac", "rbac/operator", ["paths=./operator/...",
                               "rbac:roleName=zeronf-operator"]),
    ("rbac", "rbac/node", ["paths=./nodeagent/...",
                           "rbac:roleName=zeronf-node"]),
])
def test_generated_files_are_current(tmp_path, what, where, args):
    """k8s/config/crd from the API's types, k8s/config/rbac/* from the
    operator's and the node agent's markers."""
    src = REPO / "k8s"
    r = subprocess.run([GO, "tool", "controller-gen", *args,
                        f"output:{what}:dir={tmp_path}"],
                       cwd=src, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    have = sorted(p.name for p in (src / "config" / where).glob("*.yaml"))
    made = sorted(p.name for p in tmp_path.glob("*.yaml"))
    assert have == made, (have, made)
    stale = [n for n in made if not filecmp.cmp(tmp_path / n,
                                                src / "config" / where / n,
                                                shallow=False)]
    assert not stale, f"{stale}: run make crds"

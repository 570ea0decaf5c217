"""ZeroNF's Kubernetes API (k8s/api/v1alpha1, docs/kubernetes.md): the CRDs
in k8s/config/crd are what controller-gen makes of the types now (make
crds). Their validation is tested by the API server itself
(tests/cluster/test_crds.py)."""
from __future__ import annotations

import filecmp
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GO = os.environ.get("GO", "/usr/local/go/bin/go")


@pytest.mark.skipif(not Path(GO).exists(), reason="no Go toolchain")
def test_crds_are_generated_from_the_types(tmp_path):
    src = REPO / "k8s"
    r = subprocess.run([GO, "tool", "controller-gen", "paths=./api/...",
                        "crd:crdVersions=v1", f"output:crd:dir={tmp_path}"],
                       cwd=src, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    have = sorted(p.name for p in (src / "config" / "crd").glob("*.yaml"))
    made = sorted(p.name for p in tmp_path.glob("*.yaml"))
    assert have == made, (have, made)
    stale = [n for n in made if not filecmp.cmp(tmp_path / n,
                                                src / "config" / "crd" / n,
                                                shallow=False)]
    assert not stale, f"{stale}: run make crds"

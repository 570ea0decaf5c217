"""The container image and the operator's manifest, without a cluster
(tests/cluster runs them on one): the manifest passes Kubernetes' own
schemas (kubernetes-validate, strict); the Dockerfile builds what the
repository builds, copies files that exist, installs packages Debian 12
has, and runs programs that exist."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from dockerfile_parse import DockerfileParser

from harness import BUILD, REPO

# The operator's manifest (docs/kubernetes.md); what it makes runs on a
# real cluster in tests/cluster
K8S = REPO / "k8s/config/operator/operator.yaml"
DOCKERFILE = REPO / "deploy/docker/Dockerfile"


def docs() -> list[dict]:
    return [d for d in yaml.safe_load_all(K8S.read_text()) if d]


def test_operator_manifest_passes_kubernetes_schemas():
    exe = Path(sys.executable).parent / "kubernetes-validate"
    r = subprocess.run([str(exe), "--strict", str(K8S)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("passed") == len(docs())


def test_dockerfile_builds_and_runs_what_exists():
    df = DockerfileParser(path=str(DOCKERFILE))
    froms = [i["value"] for i in df.structure if i["instruction"] == "FROM"]
    assert froms == ["debian:12 AS build", "debian:12"]
    for i in df.structure:
        if i["instruction"] == "COPY" and "--from" not in i["value"]:
            src = i["value"].split()[0]
            assert (REPO / src).exists(), src
    runs = " ".join(i["value"] for i in df.structure
                    if i["instruction"] == "RUN")
    pkgs = set(re.findall(r"\b[a-z0-9][a-z0-9.+-]+\b", runs))
    setup = (REPO / "scripts/setup.sh").read_text()
    build_deps = {"meson", "ninja-build", "pkg-config", "gcc",
                  "libdpdk-dev", "libjansson-dev", "libpcap-dev",
                  "libndpi-dev"}
    assert build_deps <= set(re.findall(r"[a-z0-9.+-]+", setup))
    assert build_deps <= pkgs
    assert "bubblewrap" in pkgs  # sandboxed NFs
    cmd = [i for i in df.structure if i["instruction"] == "CMD"][-1]
    assert (BUILD / "mgr" / cmd["value"].split('"')[1]).exists()


@pytest.mark.skipif(shutil.which("apt-cache") is None, reason="no apt")
def test_runtime_packages_exist_in_debian():
    df = DockerfileParser(path=str(DOCKERFILE))
    runtime = [i["value"] for i in df.structure
               if i["instruction"] == "RUN"][-2]
    names = runtime.split("--no-install-recommends", 1)[1].split("&&")[0]
    for p in names.replace("\\", " ").split():
        r = subprocess.run(["apt-cache", "policy", p], capture_output=True,
                           text=True, timeout=60)
        assert "Candidate:" in r.stdout and "(none)" not in r.stdout, p

"""The container image and the Kubernetes manifest (no Docker or cluster
here): the manifest passes Kubernetes' own schemas (kubernetes-validate,
strict) and says what ZeroNF needs (hugepages, the shared runtime
directory, one PID namespace for an instance's NFs, no capability for
them); the Dockerfile builds what the repository builds, copies files that
exist, installs packages Debian 12 has, and runs programs that exist."""
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

K8S = REPO / "deploy/k8s/zeronf.yaml"
DOCKERFILE = REPO / "deploy/docker/Dockerfile"


def docs() -> list[dict]:
    return [d for d in yaml.safe_load_all(K8S.read_text()) if d]


def test_manifest_passes_kubernetes_schemas():
    exe = Path(sys.executable).parent / "kubernetes-validate"
    r = subprocess.run([str(exe), "--strict", str(K8S)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("passed") == len(docs())


def test_manifest_says_what_zeronf_needs():
    by_name = {d["metadata"]["name"]: d for d in docs()}
    mgr = by_name["zeronf-manager"]["spec"]["template"]["spec"]
    nfs = by_name["zeronf-nfs"]["spec"]["template"]["spec"]
    res = mgr["containers"][0]["resources"]
    assert res["requests"]["hugepages-2Mi"] == res["limits"]["hugepages-2Mi"]
    args = mgr["containers"][0]["args"]
    instance = args[args.index("-i") + 1]
    # Both pods see the same hugepages and runtime directory.
    host = {p["name"]: p["hostPath"]["path"] for p in mgr["volumes"]}
    for v in nfs["volumes"]:
        assert host[v["name"]] == v["hostPath"]["path"]
    assert nfs["shareProcessNamespace"] is True
    for c in nfs["containers"]:
        assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]
        cmd = c["command"]
        assert cmd[cmd.index("-i") + 1] == instance
        assert (BUILD / "nfs" / cmd[0]).exists(), cmd[0]
    assert (BUILD / "mgr" / mgr["containers"][0]["command"][0]).exists()


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

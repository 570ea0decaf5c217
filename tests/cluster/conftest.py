"""The cluster tests (make test-cluster, docs/kubernetes.md): a real
Kubernetes cluster from upstream binaries, brought up by
scripts/cluster.sh for the session and taken down after it, with a check
that nothing of it is left. What they use of it is in kube.py."""
from __future__ import annotations

import os

import pytest

import kube

if os.environ.get("ZERONF_CLUSTER_TESTS") != "1":
    collect_ignore_glob = ["test_*.py"]  # make test-cluster runs them


def pytest_collection_modifyitems(items):
    """test_crds.py first: it makes ZeroNFs (dry runs) while the cluster
    has none of its own (the zeronf fixture's, named default, as every
    ZeroNF is)."""
    items.sort(key=lambda it: it.path.name != "test_crds.py")


@pytest.fixture(scope="session")
def k8s():
    """The cluster, up (cluster.sh up: idempotent), with ZeroNF's images
    (cluster.sh images); down at the end, and nothing of it left."""
    kube.cluster("up")
    kube.cluster("images")
    yield
    if os.environ.get("ZERONF_CLUSTER_KEEP") == "1":
        return
    kube.cluster("down")
    left = kube.leftovers()
    assert not left, left


@pytest.fixture(scope="session")
def operator(k8s):
    """The CRDs and the operator, ready (kube.operator_up)."""
    kube.operator_up()
    yield
    kube.operator_down()


@pytest.fixture(scope="session")
def zeronf(operator):
    """The cluster's ZeroNF (kube.zeronf_up), deleted at the end with
    nothing of it left on the nodes."""
    kube.zeronf_up()
    yield
    kube.zeronf_down()

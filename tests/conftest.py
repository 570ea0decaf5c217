"""Shared fixtures. Tests need the build (make build) and hugepages
(make setup); both are done by `make test`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import MGR_BIN, NF_BIN, Manager  # noqa: E402


def pytest_sessionstart(session):
    missing = [str(p) for p in [MGR_BIN, *NF_BIN.values()] if not p.exists()]
    if missing:
        raise pytest.UsageError(f"not built: {missing} (run make build)")


@pytest.fixture
def managers(tmp_path):
    """Factory of managers; all of them and their NFs are stopped and killed
    at the end of the test, and must leave nothing behind."""
    made: list[Manager] = []

    def make(**kw) -> Manager:
        m = Manager(tmp_path, **kw)
        made.append(m)
        return m

    yield make
    for m in made:
        try:
            m.shutdown()
        except Exception:  # noqa: BLE001 - best effort, killed below
            pass
        m.close()
    # A manager that exits cleanly removes its runtime dir and hugepages;
    # what a killed one left (the point of some tests) is removed here.
    names_ok = {m.name for m in made if m.proc.p.returncode == 0}
    for m in made:
        if m.proc.p.returncode == 0:
            assert m.leftovers() == [], f"{m.name} left files behind"
        elif m.name not in names_ok:
            m.remove_leftovers()

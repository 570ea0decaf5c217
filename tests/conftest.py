"""Shared fixtures. Tests need the build (make build) and hugepages
(make setup); both are done by `make test`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import MGR_BIN, NF_BIN, Manager  # noqa: E402


def measure_start(tmp: Path) -> float:
    """Seconds for a manager and an NF to come up here (best of two)."""
    import time
    best = None
    for _ in range(2):
        t0 = time.monotonic()
        m = Manager(tmp, ports=["net_null0,no-rx=1"], chain="1,port:0")
        try:
            m.start_nf("forward", 1)
            took = time.monotonic() - t0
        finally:
            m.shutdown()
            m.close()
        best = took if best is None else min(best, took)
    return best


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    import os
    import tempfile
    missing = [str(p) for p in [MGR_BIN, *NF_BIN.values()] if not p.exists()]
    if missing:
        raise pytest.UsageError(f"not built: {missing} (run make build)")
    if "ZERONF_TIME_SCALE" not in os.environ:
        with tempfile.TemporaryDirectory(prefix="zeronf-calib-") as d:
            took = measure_start(Path(d))
        harness.TIME_SCALE = max(1.0, took / harness.START_REFERENCE_S)
        session.config._zeronf_start = took


def pytest_sessionfinish(session, exitstatus):
    """No manager of the session left files (its runtime directory, its
    hugepage files): a test that kills one removes them (the managers
    fixture does); a leftover fails the session, naming its test."""
    left = [(name, test, f) for name, test in harness.NAMES
            for f in harness.instance_files(name)]
    if left:
        for name, test, f in left:
            print(f"\nleft behind by {test}: {f}", file=sys.stderr)
        if session.exitstatus == 0:
            session.exitstatus = 1


def pytest_report_header(config):
    took = getattr(config, "_zeronf_start", None)
    return (f"zeronf: a manager and an NF start in {took:.2f} s here; "
            f"start-up deadlines x{harness.TIME_SCALE:.1f}"
            if took is not None else None)


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

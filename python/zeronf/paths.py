"""Where ZeroNF's programs and files are: the build tree when run from a
source checkout (or ZERONF_BUILD), else what is installed in PATH."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent.parent


def build_dir() -> Path | None:
    env = os.environ.get("ZERONF_BUILD")
    if env:
        return Path(env)
    b = _REPO / "build"
    return b if (b / "mgr" / "zeronf-mgr").exists() else None


def find_program(name: str) -> Path | None:
    """zeronf-mgr, zeronf-forward...: the build tree's, else PATH's."""
    b = build_dir()
    if b is not None:
        for sub in ("mgr", "nfs", "tools", "vm"):
            p = b / sub / name
            if p.is_file() and os.access(p, os.X_OK):
                return p
    found = shutil.which(name)
    return Path(found) if found else None


def find_nf(binary: str, base: Path) -> Path | None:
    """An NF program named in a deployment: absolute, relative to the
    deployment file (with a slash), or a bare name (find_program)."""
    if "/" in binary:
        p = Path(binary)
        p = p if p.is_absolute() else base / p
        return p.resolve() if p.is_file() and os.access(p, os.X_OK) else None
    return find_program(binary)


def default_log_dir(instance: str) -> Path:
    if os.getuid() == 0:
        return Path("/var/log/zeronf") / instance
    state = os.environ.get("XDG_STATE_HOME") or \
        str(Path.home() / ".local" / "state")
    return Path(state) / "zeronf" / instance

"""zeronf CLI: deployments: up FILE, down NAME, apply FILE, validate FILE."""
from __future__ import annotations

import json
import sys

from .. import change, check, orchestrate
from ..spec import SpecError, as_json, load


def _load(path: str, name: str | None = None):
    """The file, with every value checked by the manager's own code
    (check.py) before validate says valid, and up or apply touch
    anything."""
    try:
        d = load(path, name=name)
        check.check(d)
        return d
    except SpecError as e:
        for line in e.errors:
            print(line, file=sys.stderr)
        raise SystemExit(2) from None


def run_validate(a) -> int:
    d = _load(a.file, a.name)
    if a.json:
        print(json.dumps(as_json(d), indent=2))
    else:
        print(f"{a.file}: instance '{d.name}', {len(d.ports)} ports, "
              f"{len(d.services)} services, chain "
              f"{','.join(d.chain) or '(none)'}: valid")
    return 0


def _say(s: str) -> None:
    print(s, flush=True)


def _done(what: str, step) -> int:
    """Run @p step; an UpError is one line on stderr and status 1."""
    try:
        step()
    except orchestrate.UpError as e:
        print(f"zeronf: {what}: {e}", file=sys.stderr)
        return 1
    return 0


def run_up(a) -> int:
    d = _load(a.file, a.name)
    return _done("up", lambda: orchestrate.up(d, say=_say,
                                              timeout=a.timeout,
                                              keep=a.keep))


def run_down(a) -> int:
    return _done("down", lambda: orchestrate.down(a.name or a.instance,
                                                  timeout=a.timeout))


def run_apply(a) -> int:
    d = _load(a.file, a.name)
    return _done("apply", lambda: change.apply(d, say=_say,
                                               dry_run=a.dry_run,
                                               timeout=a.timeout,
                                               restart=a.restart))


def _file_parser(sub, cmd: str, what: str):
    """A command on a deployment file: FILE and --name."""
    p = sub.add_parser(cmd, help=what)
    p.add_argument("file")
    p.add_argument("--name", help="the instance's name, instead of the "
                   "file's")
    return p


def register(sub) -> None:
    p = _file_parser(sub, "up", "start the instance a deployment file "
                     "describes, and wait until it runs")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="for each step (default 60 s)")
    p.add_argument("--keep", action="store_true",
                   help="on failure, leave what started (to look at it)")
    p.set_defaults(run=run_up)
    p = sub.add_parser("down", help="stop an instance: its NFs, then its "
                       "manager")
    p.add_argument("name", nargs="?", help="default: -i's")
    p.add_argument("--timeout", type=float, default=30.0)
    p.set_defaults(run=run_down)
    p = _file_parser(sub, "apply", "change a running instance to match its "
                     "file (the changes are shown first)")
    p.add_argument("--dry-run", action="store_true",
                   help="show the changes only")
    p.add_argument("--restart", action="store_true",
                   help="restart the instance when the file changes its "
                   "manager's settings or ports (which apply cannot "
                   "change live)")
    p.add_argument("--timeout", type=float, default=60.0)
    p.set_defaults(run=run_apply)
    p = _file_parser(sub, "validate", "check a deployment file")
    p.set_defaults(run=run_validate)

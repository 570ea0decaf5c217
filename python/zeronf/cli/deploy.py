"""zeronf CLI: deployments: up FILE, down NAME, apply FILE, validate FILE.
A file of several hosts (`hosts:`, docs/multihost.md) is multihost.py's:
up, apply and validate take it whole, down takes it in place of NAME."""
from __future__ import annotations

import json
import sys

import os

from .. import change, check, multihost, orchestrate
from ..spec import SpecError, as_json, load


def _load(path: str, name: str | None = None):
    """The file, with every value checked by the manager's own code
    (check.py) before validate says valid, and up or apply touch
    anything: a Deployment, or a multihost.Multihost."""
    try:
        if multihost.is_multihost(path):
            f = multihost.load(path, name=name)
            multihost.check_all(f)
            return f
        d = load(path, name=name)
        check.check(d)
        return d
    except SpecError as e:
        for line in e.errors:
            print(line, file=sys.stderr)
        raise SystemExit(2) from None


def run_validate(a) -> int:
    d = _load(a.file, a.name)
    if isinstance(d, multihost.Multihost):
        if a.json:
            print(json.dumps(multihost.as_json(d), indent=2))
        else:
            print(f"{a.file}: '{d.name}', {len(d.hosts)} hosts ("
                  f"{', '.join(f'{h.name}: {h.instance}' for h in d.hosts)}"
                  f"), {len(d.paths)} paths: valid")
        return 0
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
    if isinstance(d, multihost.Multihost):
        return _done("up", lambda: multihost.up(d, say=_say,
                                                timeout=a.timeout,
                                                keep=a.keep, host=a.host))
    return _done("up", lambda: orchestrate.up(d, say=_say,
                                              timeout=a.timeout,
                                              keep=a.keep))


def run_down(a) -> int:
    if a.name and os.path.isfile(a.name) and multihost.is_multihost(a.name):
        f = _load(a.name, a.deployment)
        return _done("down", lambda: multihost.down(f, say=_say,
                                                    timeout=a.timeout))
    return _done("down", lambda: orchestrate.down(a.name or a.instance,
                                                  timeout=a.timeout))


def run_apply(a) -> int:
    d = _load(a.file, a.name)
    if isinstance(d, multihost.Multihost):
        return _done("apply", lambda: multihost.apply(
            d, say=_say, dry_run=a.dry_run, timeout=a.timeout))
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
    p.add_argument("--host", help="a file of several hosts: bring up only "
                   "this one (on its own machine; its peers' MAC addresses "
                   "from the file)")
    p.set_defaults(run=run_up)
    p = sub.add_parser("down", help="stop an instance: its NFs, then its "
                       "manager (or every host of a file of several)")
    p.add_argument("name", nargs="?", help="default: -i's; a file of "
                   "several hosts: each host's")
    p.add_argument("--name", dest="deployment", help="with a file of "
                   "several hosts: the deployment's name, instead of the "
                   "file's (as up --name)")
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

"""zeronf CLI: NFs the manager launches: nf start|stop|restart|scale|list,
and logs NF."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from .. import paths
from ..client import Client
from .basic import _table, show


def run_nf(a) -> int:
    with Client(a.instance) as c:
        if a.action == "list":
            res = c.call("launch.list")["launched"]
            if a.json:
                return show(res)
            rows = [{**i, "nf": s["name"], "service": s["service"],
                     "policy": s["restart"]}
                    for s in res for i in s["instances"]]
            cols = ["nf", "name", "service", "state", "pid"]
            if any(i["sandbox_pid"] for i in rows):
                cols.append("sandbox_pid")  # bubblewrap's: pid is the NF's
            print(_table(rows, cols + ["restarts", "last_exit", "policy"]))
            return 0
        if a.action == "start":
            binary = paths.find_nf(a.binary, Path.cwd())
            if binary is None:
                print(f"zeronf: nf start: no program '{a.binary}'",
                      file=sys.stderr)
                return 2
            p = {"name": a.name, "binary": str(binary),
                 "service": a.service, "replicas": a.replicas,
                 "restart": a.restart}
            if a.cpus:
                p["cpus"] = a.cpus
            if a.args:
                p["args"] = a.args
            res = c.call("nf.start", **p)
            if not a.no_wait:
                err = wait_started(c, a.name, a.wait_s)
                if err:
                    # not left restarting for ever in the live service
                    c.call("nf.remove", name=a.name)
                    print(f"zeronf: nf start {a.name}: {err}; removed",
                          file=sys.stderr)
                    return 1
                res = next((s for s in c.call("launch.list")["launched"]
                            if s["name"] == a.name), res)
            return show(res)
        if a.action == "stop":
            return show(c.call("nf.remove", name=a.name))
        if a.action == "restart":
            res = c.call("nf.restart", name=a.name)
            deadline = time.monotonic() + 120
            while res.get("rolling") and time.monotonic() < deadline:
                time.sleep(0.1)
                res = next((s for s in c.call("launch.list")["launched"]
                            if s["name"] == a.name), {})
            return show(res)
        return show(c.call("nf.scale", name=a.name, replicas=a.replicas))


def wait_started(c: Client, name: str, timeout: float) -> str | None:
    """Until every replica of @p name registered (in nf.list) or one of
    them exited first: None, or what went wrong (its exit and the last
    lines of its log)."""
    deadline = time.monotonic() + timeout
    while True:
        spec = next((s for s in c.call("launch.list")["launched"]
                     if s["name"] == name), None)
        if spec is None:
            return "gone"
        up = {n["name"] for n in c.call("nf.list")["nfs"]
              if n["state"] in ("running", "starting")}
        bad = [i for i in spec["instances"]
               if i["name"] not in up and i["last_exit"] is not None]
        if bad:
            i = bad[0]
            code = i["last_exit"]
            how = f"exit {code}" if code >= 0 else f"signal {-code}"
            log = Path(c.call("launch.list")["log_dir"]) / f"{i['name']}.log"
            tail = log.read_text(errors="replace").splitlines()[-3:] \
                if log.exists() else []
            return (f"replica {i['name']} did not start ({how})" +
                    "".join(f"\n  {ln}" for ln in tail))
        if all(i["name"] in up for i in spec["instances"]):
            return None
        if time.monotonic() > deadline:
            return f"not registered after {timeout:g} s (--wait-s)"
        time.sleep(0.05)


def run_logs(a) -> int:
    with Client(a.instance) as c:
        log_dir = Path(c.call("launch.list")["log_dir"])
    path = log_dir / f"{a.nf}.log"
    if not path.exists():
        names = sorted(p.stem for p in log_dir.glob("*.log"))
        print(f"zeronf: logs: no log of '{a.nf}' in {log_dir} (there are: "
              f"{', '.join(names) or 'none'})", file=sys.stderr)
        return 1
    with open(path, errors="replace") as f:
        lines = f.readlines()
        sys.stdout.writelines(lines[-a.n:] if a.n else lines)
        while a.follow:
            line = f.readline()
            if line:
                sys.stdout.write(line)
                sys.stdout.flush()
            else:
                time.sleep(0.2)
    return 0


def register(sub) -> None:
    p = sub.add_parser("nf", help="NFs the manager launches and "
                       "supervises: start, stop, restart, scale, list")
    acts = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    s = acts.add_parser("start", help="launch an NF (-- then its options)")
    s.add_argument("name")
    s.add_argument("binary", help="zeronf-forward, ./my-nf, /path/nf")
    s.add_argument("-s", "--service", type=int, required=True)
    s.add_argument("-r", "--replicas", type=int, default=1)
    s.add_argument("--cpus")
    s.add_argument("--restart", default="on-failure",
                   choices=["never", "on-failure", "always"])
    s.add_argument("--no-wait", action="store_true",
                   help="return once launched, not once every replica "
                   "registered")
    s.add_argument("--wait-s", type=float, default=30.0,
                   help="how long to wait for the replicas (default 30)")
    s.add_argument("args", nargs="*", help="the NF's own options")
    for act, what in (("stop", "stop every replica and forget it"),
                      ("restart", "stop and start every replica")):
        acts.add_parser(act, help=what).add_argument("name")
    s = acts.add_parser("scale", help="run this many replicas")
    s.add_argument("name")
    s.add_argument("replicas", type=int)
    acts.add_parser("list", help="launched NFs, replicas, restarts")
    p.set_defaults(run=run_nf)
    p = sub.add_parser("logs", help="an NF's output (a replica's name)")
    p.add_argument("nf")
    p.add_argument("-f", "--follow", action="store_true")
    p.add_argument("-n", type=int, default=0, help="the last N lines")
    p.set_defaults(run=run_logs)

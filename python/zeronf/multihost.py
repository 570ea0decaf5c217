"""Deployments of several hosts (docs/multihost.md): a file whose `hosts:`
each describe an instance as a deployment file does (its manager, ports,
services, chains), with the host's place on the fabric (`id`, `ip`,
`fabric_port`), and whose `paths:` are the service paths across them,
every hop with its host (`dpi@core`).

load() checks the whole file (its shape by schemas/multihost.json, each
host's part by the one-host checks of spec.py, every error at its line)
and gives each host its part as it sees it: another host's hop `dpi@core`
becomes `svc:ID@HOSTID` by that host's services, its own hop `svc:ID`.
up() starts every host's instance with RX paused, then puts each on the
fabric (its port, id, address, its peers and their MAC addresses), sets
the paths and the chains that go to other hosts, and only then enables
RX everywhere. apply() moves services between hosts under traffic: what
is new starts first, the paths switch, what is gone stops last.
"""
from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from . import change, check
from .client import Client, ZeroNFError
from .orchestrate import (Say, UpError, _save_applied, down as down_one,
                          is_up, up as up_one)
from .spec import Deployment, SpecError, _where, parse, resolve

HOST_KEYS = ("id", "ip", "fabric_port", "mac")


def schema() -> dict:
    return json.loads(resources.files("zeronf").joinpath(
        "schemas/multihost.json").read_text())


@dataclass
class Host:
    name: str
    id: int
    ip: str
    fabric_port: int
    mac: str | None
    d: Deployment                  # its part, as it sees it
    # its chains that go to other hosts, set once the fabric is: the
    # default chain, ports' chains, rules, flows (as configure sets them)
    remote: dict = field(default_factory=dict)

    @property
    def instance(self) -> str:
        return self.d.name


@dataclass
class Multihost:
    file: Path
    name: str
    encap: str
    mtu: int
    vni: int
    hosts: list[Host]
    paths: list[dict]              # {spi, hops: {host name: [steps]}}
    shown: str = ""

    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)


def is_multihost(path: str) -> bool:
    """Is the file at @p path a deployment of several hosts?"""
    try:
        data, _, _, _ = parse(path)
    except SpecError:
        return False
    return "hosts" in data


def _ids(part: dict) -> tuple[dict[str, int], dict[str, int]]:
    """A host's part's service ids and port indexes, by name."""
    svcs = {s["name"]: s.get("id", i + 1)
            for i, s in enumerate(part.get("services", []))
            if isinstance(s, dict) and "name" in s}
    ports = {p["name"]: i for i, p in enumerate(part.get("ports", []))
             if isinstance(p, dict) and "name" in p}
    return svcs, ports


def _hop(step: str, here: str, hosts: dict[str, dict],
         ids: dict[str, tuple]) -> str:
    """A hop NAME@HOST as host @p here writes it; ValueError says why
    not."""
    what, _, host = step.rpartition("@")
    if host not in hosts:
        raise ValueError(f"no host '{host}' (hosts: {', '.join(hosts)})")
    svcs, ports = ids[host]
    if what.startswith("port:"):
        p = what[5:]
        if p.isdigit():
            local = f"port:{int(p)}"
        elif p in ports:
            local = f"port:{ports[p]}"
        else:
            raise ValueError(f"host {host} has no port named '{p}'")
    elif what.startswith("svc:") or what.isdigit():
        local = f"svc:{int(what.removeprefix('svc:'))}"
    elif what in svcs:
        local = f"svc:{svcs[what]}"
    else:
        raise ValueError(f"host {host} has no service named '{what}'")
    return local if host == here else f"{local}@{hosts[host]['id']}"


def load(path: str | Path, name: str | None = None) -> Multihost:
    data, lines, shown, errors = parse(path)
    errors = list(errors)

    def err(p: tuple, msg: str) -> None:
        errors.append((lines.line(p), f"{shown}:{lines.line(p)}: "
                       f"{_where(p)}: {msg}"))

    if name is not None:
        data["name"] = name
    # the file's own keys here; each host's part is spec.py's (below)
    for e in jsonschema.Draft202012Validator(schema()).iter_errors(data):
        err(tuple(e.absolute_path), e.message)
    if errors:
        raise SpecError([m for _, m in sorted(errors)])
    hosts = {h["name"]: h for h in data["hosts"]}
    ids = {h["name"]: _ids(h) for h in data["hosts"]}
    seen_id: dict[int, str] = {}
    seen_name: set[str] = set()
    for i, h in enumerate(data["hosts"]):
        if h["name"] in seen_name:
            err(("hosts", i, "name"), f"host '{h['name']}' twice")
        seen_name.add(h["name"])
        if h["id"] in seen_id:
            err(("hosts", i, "id"), f"host id {h['id']} is also "
                f"{seen_id[h['id']]}'s")
        seen_id[h["id"]] = h["name"]
    # paths, as each host sees them
    paths: list[dict] = []
    spis: set[int] = set()
    for i, p in enumerate(data.get("paths", [])):
        if p["spi"] in spis:
            err(("paths", i, "spi"), f"path {p['spi']} twice")
        spis.add(p["spi"])
        views: dict[str, list] = {hname: [] for hname in hosts}
        for k, s in enumerate(p["hops"]):
            try:
                for hname in hosts:
                    views[hname].append(_hop(s, hname, hosts, ids))
            except ValueError as e:  # the same for every host
                err(("paths", i, "hops", k), str(e))
        paths.append({"spi": p["spi"], "hops": views})
    out: list[Host] = []
    for i, h in enumerate(data["hosts"]):
        part = {k: copy.deepcopy(v) for k, v in h.items()
                if k not in HOST_KEYS}
        part["name"] = f"{data['name']}-{h['name']}"
        remote = _localize(part, h["name"], hosts, ids, ("hosts", i), err)
        fp = h["fabric_port"]
        names = {p.get("name"): k for k, p in enumerate(h["ports"])}
        port = fp if isinstance(fp, int) else names.get(fp)
        if port is None or not 0 <= port < len(h["ports"]):
            err(("hosts", i, "fabric_port"), f"no port '{fp}' on host "
                f"{h['name']}")
            port = 0
        for key, chain in _remote_chains(remote):
            if not any(p["hops"].get(h["name"]) == chain for p in paths):
                err(("hosts", i) + key, "hops on other hosts travel on a "
                    "service path: add one with these hops to paths")
        try:
            d = resolve(part, lines, shown, Path(path), None, [],
                        prefix=("hosts", i))
        except SpecError as e:
            errors += [(0, m) for m in e.errors]
            continue
        _take_far(d, remote)
        out.append(Host(h["name"], h["id"], h["ip"], port, h.get("mac"), d,
                        remote))
    if errors:
        raise SpecError([m for _, m in sorted(errors)])
    fab = data.get("fabric", {})
    return Multihost(Path(path), data["name"], fab.get("encap", "vxlan-gpe"),
                     fab.get("mtu", 1500), fab.get("vni", 0), out, paths,
                     shown)


def _localize(part: dict, here: str, hosts: dict, ids: dict, where: tuple,
              err) -> dict:
    """Rewrite @p part's hops that name a host (NAME@HOST) as host @p here
    writes them; take the chains that go to other hosts out of it (they
    are set once the fabric is) and return them, by where they were (a
    rule or flow stays in its place, its chain [drop], until _take_far
    moves it after resolve: so every later item keeps its index)."""
    remote: dict = {}

    def conv(chain: list, key: tuple) -> tuple[list, bool]:
        """The chain in ids ("svc:ID", "port:P", "...@HOSTID"): so
        compared with the paths' views."""
        out, far = [], False
        for k, s in enumerate(chain):
            if isinstance(s, str) and s != "drop":
                try:
                    s = _hop(s if "@" in s else f"{s}@{here}", here, hosts,
                             ids)
                except ValueError as e:
                    err(where + key + (k,), str(e))
                far |= "@" in s
            out.append(s)
        return out, far

    if isinstance(part.get("chain"), list):
        chain, far = conv(part["chain"], ("chain",))
        if far:
            remote[("chain",)] = chain
            del part["chain"]
        else:
            part["chain"] = chain
    for key in ("ports", "flows", "rules"):
        keep = []
        for k, item in enumerate(part.get(key, [])):
            if not isinstance(item, dict) or "chain" not in item:
                keep.append(item)
                continue
            chain, far = conv(item["chain"], (key, k, "chain"))
            if far and key == "ports":
                remote[(key, k, "chain")] = chain
                item = {x: v for x, v in item.items() if x != "chain"}
            elif far:
                # kept in its place for resolve (its other keys checked
                # where they are written); taken out after (_take_far)
                remote[(key, k, "chain")] = chain
                item = {**item, "chain": ["drop"]}
            else:
                item = {**item, "chain": chain}
            keep.append(item)
        if key in part:
            part[key] = keep
    return remote


def _take_far(d: Deployment, remote: dict) -> None:
    """The rules and flows whose chains go to other hosts, out of @p d
    (resolved, their chain [drop]) into @p remote with their chains."""
    for key in ("rules", "flows"):
        items = getattr(d, key)
        far = sorted(k for (x, k, *_) in remote if x == key)
        for k in far:
            remote[(key, k, "chain")] = {**items[k],
                                         "chain": remote[(key, k, "chain")]}
        setattr(d, key, [v for k, v in enumerate(items) if k not in far])


def _remote_chains(remote: dict):
    for key, v in remote.items():
        yield key, v["chain"] if isinstance(v, dict) else v


def check_all(f: Multihost) -> None:
    """Each host's values by the manager's own code (check.py)."""
    errors = []
    for h in f.hosts:
        try:
            check.check(_full(h))  # each rule and flow at its index
        except SpecError as e:
            errors += e.errors
    if errors:
        raise SpecError(errors)


# ------------------------------------------------------------------ up

def _mac(f: Multihost, h: Host) -> str | None:
    """Host @p h's fabric port's MAC address: the file's, its running
    manager's here, or None: its peers learn it by ARP (not over
    Ethernet, which has no address to ask for)."""
    if h.mac:
        return h.mac
    try:
        with Client(h.instance) as c:
            return c.call("port.list")["ports"][h.fabric_port]["mac"]
    except ZeroNFError as e:
        if f.encap == "ethernet":
            raise UpError(f"host {h.name}: its fabric port's MAC address "
                          f"(encap ethernet): give it (hosts[].mac) or run "
                          f"its manager here ({e.message})") from None
        return None


def _peer_params(f: Multihost, h: Host, mac: str | None) -> dict:
    p = {"host": h.id, "ip": h.ip, "encap": f.encap, "mtu": f.mtu,
         "vni": f.vni, "name": h.name}
    if mac is not None:
        p["mac"] = mac
    return p


def _fabric(f: Multihost, say: Say, only: list[Host] | None = None) -> None:
    """Every host (of @p only) on the fabric, with every other as its
    peer."""
    macs = {h.name: _mac(f, h) for h in f.hosts}
    for h in only or f.hosts:
        with Client(h.instance) as c:
            c.call("fabric.set", port=h.fabric_port, host=h.id, ip=h.ip)
            for o in f.hosts:
                if o is not h:
                    c.call("fabric.peer.set",
                           **_peer_params(f, o, macs[o.name]))
        say(f"{h.name}: host {h.id} on port {h.fabric_port}, {h.ip}, "
            f"{len(f.hosts) - 1} peers")


def _set_remote(c: Client, h: Host, say: Say) -> None:
    """A host's chains that go to other hosts, as configure sets the
    rest."""
    for key, v in h.remote.items():
        if key == ("chain",):
            c.chain_set(v)
        elif key[0] == "ports":
            c.call("chain.set", port=key[1], hops=v)
        elif key[0] == "rules":
            c.call("rule.add", **v)
        else:
            c.call("flow.add", flows=[v])
    if h.remote:
        say(f"{h.name}: {len(h.remote)} chains to other hosts")


def up(f: Multihost, say: Say = print, timeout: float = 60.0,
       keep: bool = False, host: str | None = None) -> None:
    """Every host, or only @p host (on its machine: its peers' MAC
    addresses from the file)."""
    mine = f.hosts if host is None else [h for h in f.hosts
                                          if h.name == host]
    if not mine:
        raise UpError(f"no host '{host}' (hosts: "
                      f"{', '.join(h.name for h in f.hosts)})")
    started: list[Host] = []
    try:
        for h in mine:
            up_one(h.d, say=say, timeout=timeout, keep=keep, rx=False)
            started.append(h)
        _fabric(f, say, mine)
        for h in mine:
            with Client(h.instance) as c:
                for p in f.paths:
                    c.call("path.set", spi=p["spi"], hops=p["hops"][h.name])
                _set_remote(c, h, say)
        if f.paths:
            say(f"paths: {', '.join(str(p['spi']) for p in f.paths)}")
        for h in mine:
            with Client(h.instance) as c:
                c.rx_set(True)
        say(f"'{f.name}' is up: {len(mine)} host{'s' if len(mine) > 1 else ''}, RX enabled")
    except (UpError, ZeroNFError) as e:
        if not keep:
            for h in reversed(started):
                try:
                    down_one(h.instance, say=lambda _: None)
                except UpError:
                    pass
        raise UpError(f"{e}" + ("" if keep else
                                f"\n({len(started)} hosts stopped)")) \
            from None


def down(f: Multihost, say: Say = print, timeout: float = 30.0) -> None:
    gone = 0
    for h in reversed(f.hosts):
        if is_up(h.instance):
            down_one(h.instance, say=say, timeout=timeout)
            gone += 1
    if gone == 0:
        raise UpError(f"no host of '{f.name}' is up")


# --------------------------------------------------------------- apply

def _full(h: Host) -> Deployment:
    """A host's part with its chains to other hosts put back where the
    file has them (what apply compares with the running instance, and
    what check_all checks)."""
    d = copy.copy(h.d)
    d.port_chains = dict(d.port_chains)
    d.rules, d.flows = list(d.rules), list(d.flows)
    for key, v in sorted(h.remote.items()):  # each index after those before
        if key == ("chain",):
            d.chain = v
        elif key[0] == "ports":
            d.port_chains[key[1]] = v
        else:
            getattr(d, key[0]).insert(key[1], v)
    return d


def apply(f: Multihost, say: Say = print, dry_run: bool = False,
          timeout: float = 60.0, drain_s: float = 1.0) -> None:
    """Every host to its part of the new file, in the order that keeps
    traffic flowing: new services start on every host first, then the
    fabric's peers and the paths switch (hosts that stop a service
    last), then each host's chains and rules, and the services gone from
    a host stop after what was in flight to them has drained."""
    down_hosts = [h.name for h in f.hosts if not is_up(h.instance)]
    if down_hosts:
        raise UpError(f"hosts not up: {', '.join(down_hosts)} (zeronf up "
                      f"{f.shown})")
    plans: dict[str, list] = {}
    for h in f.hosts:
        with Client(h.instance) as c:
            plans[h.name] = change.plan(c, _full(h), say=lambda _: None)
    for h in f.hosts:
        for s in plans[h.name]:
            say(f"  {h.name}: {s.text}")
    new_paths = {p["spi"]: p for p in f.paths}
    old_paths = {}
    for h in f.hosts:
        with Client(h.instance) as c:
            for p in c.call("path.list")["paths"]:
                old_paths.setdefault(p["spi"], {})[h.name] = p["hops"]
    moved = [s for s in new_paths if any(
        old_paths.get(s, {}).get(h.name) != new_paths[s]["hops"][h.name]
        for h in f.hosts)]
    gone = [s for s in old_paths if s not in new_paths]
    for s in moved:
        say(f"  path {s}: " + "; ".join(
            f"{h}: {','.join(v)}" for h, v in new_paths[s]["hops"].items()))
    for s in gone:
        say(f"  - path {s}")
    if dry_run or not (any(plans.values()) or moved or gone):
        if not dry_run:
            say(f"'{f.name}' already matches {f.shown}")
        return
    # losing hosts last: they keep the old paths while traffic moves off
    losing = {h.name for h in f.hosts
              if any(s.phase == 3 for s in plans[h.name])}
    order = sorted(f.hosts, key=lambda h: h.name in losing)
    for h in f.hosts:  # what is new runs first, everywhere
        with Client(h.instance) as c:
            for s in plans[h.name]:
                if s.phase == 0:
                    s.run(c)
            change.wait_running(c, change.launch_counts(h.d),
                                h.d.log_dir, timeout)
    _fabric(f, say)
    for h in order:
        with Client(h.instance) as c:
            for s in moved:
                c.call("path.set", spi=s, hops=new_paths[s]["hops"][h.name])
            for s in plans[h.name]:
                if s.phase in (1, 2):
                    s.run(c)
    if losing:
        time.sleep(drain_s)  # what was in flight to the old hops
    for h in order:
        with Client(h.instance) as c:
            for s in gone:
                try:
                    c.call("path.del", spi=s)
                except ZeroNFError:
                    pass
            for s in plans[h.name]:
                if s.phase == 3:
                    s.run(c)
        _save_applied(h.d)  # what the next apply compares with (routes)
    say(f"applied: {sum(len(p) for p in plans.values())} changes, "
        f"{len(moved)} paths moved, {len(gone)} gone")


def as_json(f: Multihost) -> dict[str, Any]:
    from .spec import as_json as one
    return {"name": f.name, "encap": f.encap, "mtu": f.mtu,
            "hosts": [{**one(h.d), "host": h.name, "id": h.id,
                       "ip": h.ip, "fabric_port": h.fabric_port,
                       "instance": h.instance,
                       "remote": {"/".join(map(str, k)): v
                                  for k, v in h.remote.items()}}
                      for h in f.hosts],
            "paths": f.paths}

"""Deployment files: YAML, checked against schemas/deployment.json and then
for what a schema cannot say (names that exist, ids that do not collide,
programs that are there). Every error names the file, the line and the
key: `demo.yaml:12: services[1].replicas: 40 is greater than the maximum
of 16`. Nothing is started until the whole file is right."""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from . import paths


class SpecError(Exception):
    """A deployment file that cannot be used: `errors` has one line each."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


def schema() -> dict:
    text = resources.files("zeronf").joinpath(
        "schemas/deployment.json").read_text()
    return json.loads(text)


def _where(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else
                                                   str(p))
    return out or "(top)"


class _Lines:
    """Line of each key and item in the YAML text, by path."""

    def __init__(self, node: yaml.Node | None):
        self.at: dict[tuple, int] = {}
        self.dups: list[tuple[tuple, int]] = []
        if node is not None:
            self._walk(node, ())

    def _walk(self, node: yaml.Node, path: tuple) -> None:
        self.at.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for k, v in node.value:
                key = k.value
                if key in seen:
                    self.dups.append((path + (key,), k.start_mark.line + 1))
                seen.add(key)
                self.at[path + (key,)] = k.start_mark.line + 1
                self._walk(v, path + (key,))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                self._walk(v, path + (i,))

    def line(self, path: tuple) -> int:
        path = tuple(path)
        while path and path not in self.at:
            path = path[:-1]
        return self.at.get(path, 1)


@dataclass
class Service:
    name: str
    id: int
    binary: str        # absolute
    args: list[str]
    replicas: int
    cpus: str | None
    memory_mb: int | None
    sandbox: bool
    restart: str
    trust_group: str | None
    lb: str
    vm: dict | None = None  # in QEMU guests (docs/vm-nfs.md)


@dataclass
class Bundle:
    """Services whose NFs run in one thread (zeronf-bundle)."""
    name: str
    services: list[str]   # in turn order, the chain's
    replicas: int
    cpus: str | None
    restart: str
    trust_group: str | None


@dataclass
class Deployment:
    file: Path
    name: str
    base: Path                      # relative paths are relative to this
    manager: dict
    ports: list[dict]
    services: list[Service]
    chain: list[str]                # "svc:ID", "port:P", "drop"
    bundles: list[Bundle]
    flows: list[dict]
    port_chains: dict[int, list[str]]  # port index -> its chain
    tenants: list[dict]             # manager.tenants, ports and chains
                                    # resolved
    rules: list[dict]
    routes: list[dict]
    autoscale: list[dict]
    reactions: list[dict]
    log_dir: Path
    raw: dict = field(repr=False, default_factory=dict)
    lines: "_Lines | None" = field(repr=False, default=None)
    shown: str = ""                 # the file as the user named it
    prefix: tuple = ()              # where it is in the file: a host of a
                                    # multi-host file, ("hosts", i)

    def service(self, name: str) -> Service:
        return next(s for s in self.services if s.name == name)

    def line(self, path: tuple) -> int:
        """The line of a key's path in the file."""
        return self.lines.line(self.prefix + tuple(path)) if self.lines \
            else 1

    def at(self, path: tuple) -> str:
        """`FILE:LINE: KEY` of a key's path, for an error about it."""
        return f"{self.shown or self.file}:{self.line(path)}: " \
            f"{_where(self.prefix + tuple(path))}"


def _tenants(data: dict, groups: set[str], svc_ids: dict[str, int],
             port_ids: dict[str, int], err) -> list[dict]:
    """manager.tenants with their slices' ports as indexes and chains
    resolved; what the manager would refuse at start, said here first."""
    out, seen = [], {}
    for i, t in enumerate(data.get("manager", {}).get("tenants", [])):
        where = ("manager", "tenants", i)
        if t["name"] in seen:
            err((*where, "name"), f"tenant '{t['name']}' twice")
        if t["trust_group"] not in groups:
            err((*where, "trust_group"), f"no trust group "
                f"'{t['trust_group']}' in manager.trust_groups")
        elif t["trust_group"] in seen.values():
            err((*where, "trust_group"), f"trust group "
                f"'{t['trust_group']}' is another tenant's")
        seen[t["name"]] = t["trust_group"]
        lo, hi = t.get("service_ids", [0, 0])
        if lo > hi:
            err((*where, "service_ids"), "[LO, HI] with LO <= HI")
        slices = []
        for k, s in enumerate(t.get("slices", [])):
            if str(s["port"]) not in port_ids:
                err((*where, "slices", k, "port"), f"no port "
                    f"'{s['port']}'")
                continue
            slices.append({**s, "port": port_ids[str(s["port"])]})
        out.append({**t, "slices": slices,
                    "chain": _steps(t.get("chain", []), svc_ids, port_ids,
                                    (*where, "chain"), err)})
    return out


def _bundles(data: dict, services: list, err) -> list[Bundle]:
    """bundles: each service in one at most, of NFs a bundle can run (a
    program's module, no VM, no sandbox, no CPUs or memory of its own,
    one trust group, the bundle's replicas)."""
    by_name = {s.name: s for s in services}
    seen: dict[str, int] = {}
    out = []
    scaled = {a.get("service") for a in data.get("autoscale", [])}
    for i, b in enumerate(data.get("bundles", [])):
        names = b["bundle"]
        raw = {s["name"]: s for s in data["services"]}
        for j, n in enumerate(names):
            at = ("bundles", i, "bundle", j)
            if n not in by_name:
                err(at, f"no service named '{n}'")
                continue
            if n in seen:
                err(at, f"service '{n}' is in bundle {seen[n]} already")
            seen[n] = i
            s, r = by_name[n], raw[n]
            if r.get("replicas", b.get("replicas", 1)) != \
                    b.get("replicas", 1):
                err(at, f"service '{n}' sets replicas {r['replicas']}, "
                    f"its bundle {b.get('replicas', 1)}: a bundle's "
                    f"replicas are its services'")
            for key in ("cpus", "memory_mb", "sandbox", "vm"):
                if key in r:
                    err(at, f"service '{n}' sets {key}: in a bundle, "
                        f"{'the bundle sets it' if key == 'cpus' else 'it cannot have one'}")
            if n in scaled:
                err(at, f"service '{n}' is autoscaled: a bundle's "
                    f"services are not")
            if s.binary and not Path(s.binary + ".so").is_file():
                err(at, f"service '{n}': no module {s.binary}.so (an NF "
                    f"built with ZN_NF_REGISTER as a shared module)")
        groups = {by_name[n].trust_group for n in names if n in by_name}
        if len(groups) > 1:
            err(("bundles", i, "bundle"), "its services are in different "
                "trust groups: a bundle is one trust domain")
        name = b.get("name", "-".join(names))
        if len(name) > 24 or name in by_name or \
                any(x.name == name for x in out):
            err(("bundles", i, "name" if "name" in b else "bundle"),
                f"bundle name '{name}': 1..24 characters, not a "
                f"service's or another bundle's")
        out.append(Bundle(name=name, services=list(names),
                          replicas=b.get("replicas", 1), cpus=b.get("cpus"),
                          restart=b.get("restart", "on-failure"),
                          trust_group=next(iter(groups), None)))
    for b in out:  # the bundle's replicas are its services'
        for n in b.services:
            if n in by_name:
                by_name[n].replicas = b.replicas
    return out


def _steps(chain: list[str], svc_ids: dict[str, int],
           port_ids: dict[str, int], where: tuple, err) -> list[str]:
    out = []
    n_ports = len(set(port_ids.values()))
    for i, step in enumerate(chain):
        if step == "drop" or step.startswith("svc:") or "@" in step:
            out.append(step)  # "@": another host's, resolved (multihost.py)
        elif step.startswith("port:"):
            p = step[5:]
            if p.isdigit():
                if int(p) >= n_ports:
                    err((*where, i), f"port {int(p)}: there are "
                        f"{n_ports} ports (0..{n_ports - 1})")
                out.append(f"port:{int(p)}")
            elif p in port_ids:
                out.append(f"port:{port_ids[p]}")
            else:
                err((*where, i), f"no port named '{p}'")
        elif step in svc_ids:
            out.append(f"svc:{svc_ids[step]}")
        elif step.isdigit():
            out.append(f"svc:{int(step)}")
        else:
            err((*where, i), f"no service named '{step}'")
    return out


class _Loader(yaml.SafeLoader):
    """YAML 1.2's integers: 0-prefixed digits are decimal (02047 is 2047,
    not YAML 1.1's octal 1063, and 08 a number, not a string); 0o17 and
    0x1f stay octal and hex."""

    yaml_implicit_resolvers = {
        k: list(v) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def _decimal_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    text = loader.construct_scalar(node).replace("_", "")
    if text.lstrip("+-").isdigit():
        return int(text, 10)
    if text.lstrip("+-").startswith("0o"):
        return int(text, 8)
    return yaml.SafeLoader.construct_yaml_int(loader, node)


_Loader.add_constructor("tag:yaml.org,2002:int", _decimal_int)
_Loader.add_implicit_resolver("tag:yaml.org,2002:int",
                              re.compile(r"^(?:[-+]?[0-9][0-9_]*|0o[0-7]+)$"),
                              list("-+0123456789"))


def parse(path: str | os.PathLike, text: str | None = None
          ) -> tuple[Any, "_Lines", str, list[tuple[int, str]]]:
    """A file's YAML: (data, its lines, the name it was given, the
    duplicate keys' errors). Raises SpecError."""
    file = Path(path)
    shown = str(path)
    if text is None:
        try:
            text = file.read_text()
        except OSError as e:
            raise SpecError([f"{shown}: {e.strerror}"]) from None
    try:
        node = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - safe loader
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        msg = getattr(e, "problem", None) or str(e)
        raise SpecError([f"{shown}{line}: not valid YAML: {msg}"]) from None
    lines = _Lines(node)
    dups = [(line, f"{shown}:{line}: {_where(p)}: duplicate key")
            for p, line in lines.dups]
    if not isinstance(data, dict):
        raise SpecError([f"{shown}:1: a deployment is a mapping (name, "
                         f"ports, services, ...)"])
    return data, lines, shown, dups


def load(path: str | os.PathLike, text: str | None = None,
         name: str | None = None) -> Deployment:
    """Read and check a deployment file; @p name overrides its name (one
    file, several instances). Raises SpecError. A file of several hosts
    (`hosts:`) is multihost.load's."""
    data, lines, shown, dups = parse(path, text)
    if "hosts" in data:
        raise SpecError([f"{shown}:{lines.line(('hosts',))}: hosts: a "
                         f"deployment of several hosts (zeronf up, apply, "
                         f"validate and down read it; docs/multihost.md)"])
    return resolve(data, lines, shown, Path(path), name, dups)


def resolve(data: dict, lines: "_Lines", shown: str, file: Path,
            name: str | None, errors: list[tuple[int, str]],
            prefix: tuple = ()) -> Deployment:
    """One instance's deployment from its part of a parsed file
    (@p prefix: where that part is: () for the whole file, ("hosts", i)
    for a host of several); @p errors: those found already."""
    errors = list(errors)

    def err(p, msg: str) -> None:
        p = prefix + tuple(p)
        errors.append((lines.line(p), f"{shown}:{lines.line(p)}: "
                       f"{_where(p)}: {msg}"))

    file_name = data.get("name")
    if name is not None:
        data["name"] = name
    v = jsonschema.Draft202012Validator(schema())
    for e in v.iter_errors(data):
        path = tuple(e.absolute_path)
        if e.validator == "additionalProperties" and \
                isinstance(e.instance, dict):
            # point at each unknown key, not at the mapping holding it
            for k in sorted(set(e.instance) -
                            set(e.schema.get("properties", {}))):
                err(path + (k,), f"unknown key '{k}' (known: "
                    f"{', '.join(e.schema.get('properties', {}))})")
            continue
        err(path, e.message)
    # What a schema cannot say, said beside the schema's errors (all at
    # once): on a file the schema refused, a check that meets a value of
    # the wrong shape stops there, quietly (its error is already said).
    schema_bad = bool(errors)
    base = file.resolve().parent

    def resolve():
        port_ids: dict[str, int] = {}
        for i, p in enumerate(data["ports"]):
            if "name" in p:
                if p["name"] in port_ids:
                    err(("ports", i, "name"), f"port name '{p['name']}' "
                        f"twice")
                port_ids[p["name"]] = i
        port_ids.update({str(i): i for i in range(len(data["ports"]))})
        groups: set[str] = set()
        for i, g in enumerate(data.get("manager", {}).get("trust_groups", [])):
            if g["name"] in groups:
                err(("manager", "trust_groups", i, "name"),
                    f"trust group '{g['name']}' twice")
            groups.add(g["name"])
        for i, p in enumerate(data["ports"]):
            if "trust_group" in p and p["trust_group"] not in groups:
                err(("ports", i, "trust_group"), f"no trust group "
                    f"'{p['trust_group']}' in manager.trust_groups")
        services: list[Service] = []
        svc_ids: dict[str, int] = {}
        used: dict[int, str] = {}
        for i, s in enumerate(data["services"]):
            sid = s.get("id", i + 1)
            if s["name"] in svc_ids:
                err(("services", i, "name"), f"service '{s['name']}' twice")
            if sid in used:
                err(("services", i, "id" if "id" in s else "name"),
                    f"service id {sid} is also '{used[sid]}'s")
            used[sid] = s["name"]
            svc_ids[s["name"]] = sid
            if "trust_group" in s and s["trust_group"] not in groups:
                err(("services", i, "trust_group"), f"no trust group "
                    f"'{s['trust_group']}' in manager.trust_groups")
            if "vm" in s and "trust_group" not in s:
                err(("services", i, "vm"), "a service in VMs needs a "
                    "trust_group: a VM maps its group's packet memory")
            if "vm" in s and s.get("sandbox"):
                err(("services", i, "sandbox"), "a service in VMs is not "
                    "sandboxed (docs/vm-nfs.md, Limits)")
            vm = None
            if "vm" in s:  # its paths relative to the deployment file
                vm = dict(s["vm"])
                for k in ("kernel", "image"):
                    if k in vm:
                        vm[k] = str((base / vm[k]).resolve())
                vm["files"] = [str((base / f).resolve())
                               for f in vm.get("files", [])]
                for j, f in enumerate(vm["files"]):
                    if not Path(f).is_file():
                        err(("services", i, "vm", "files", j),
                            f"no file {f}")
            binary = paths.find_nf(s["nf"]["binary"], base)
            if binary is None:
                b = s["nf"]["binary"]
                err(("services", i, "nf", "binary"),
                    f"no program {(base / b).resolve()} (a path is relative "
                    f"to the file's directory)" if "/" in b else
                    f"no program '{b}' (a bare name is looked up next to "
                    f"zeronf-mgr, then in PATH)")
            services.append(Service(
                name=s["name"], id=sid, binary=str(binary or ""),
                args=list(s["nf"].get("args", [])),
                replicas=s.get("replicas", 1), cpus=s.get("cpus"),
                memory_mb=s.get("memory_mb"), sandbox=s.get("sandbox", False),
                restart=s.get("restart", "on-failure"), lb=s.get("lb", "hash"),
                trust_group=s.get("trust_group"), vm=vm))
        bundles = _bundles(data, services, err)
        chain = _steps(data.get("chain", []), svc_ids, port_ids, ("chain",),
                       err)
        port_chains = {i: _steps(p["chain"], svc_ids, port_ids,
                                 ("ports", i, "chain"), err)
                       for i, p in enumerate(data["ports"]) if "chain" in p}
        tenants = _tenants(data, groups, svc_ids, port_ids, err)
        flows, rules = [], []
        for i, f in enumerate(data.get("flows", [])):
            flows.append({**f, "chain": _steps(f["chain"], svc_ids, port_ids,
                                               ("flows", i, "chain"), err)})
        for i, r in enumerate(data.get("rules", [])):
            rules.append({**r, "chain": _steps(r["chain"], svc_ids, port_ids,
                                               ("rules", i, "chain"), err)})
        for key in ("routes", "autoscale"):
            for i, r in enumerate(data.get(key, [])):
                if r["service"] not in svc_ids:
                    err((key, i, "service"), f"no service named "
                        f"'{r['service']}'")
        for i, a in enumerate(data.get("autoscale", [])):
            if a.get("min", 1) > a.get("max", 16):
                err(("autoscale", i, "min"), "min is above max")
        for i, r in enumerate(data.get("reactions", [])):
            for k in ("when", "insert"):
                if r[k]["service"] not in svc_ids:
                    err(("reactions", i, k, "service"), f"no service named "
                        f"'{r[k]['service']}'")
        return services, chain, port_chains, tenants, flows, rules, bundles

    try:
        services, chain, port_chains, tenants, flows, rules, bundles = \
            resolve()
    except (KeyError, TypeError, AttributeError, ValueError, IndexError):
        if not schema_bad:
            raise
    if errors:
        raise SpecError([m for _, m in sorted(errors)])
    mgr = dict(data.get("manager", {}))
    log_dir = _log_dir(mgr.get("log_dir"), data["name"], file_name, base)
    for s in services:  # an NF's files follow its instance's logs
        s.args = [a.replace("{log_dir}", str(log_dir))
                  .replace("{name}", data["name"]) for a in s.args]
    return Deployment(
        file=file, name=data["name"], base=base, manager=mgr,
        ports=list(data["ports"]), services=services, chain=chain,
        bundles=bundles, flows=flows, port_chains=port_chains, tenants=tenants, rules=rules,
        routes=list(data.get("routes", [])),
        autoscale=list(data.get("autoscale", [])),
        reactions=list(data.get("reactions", [])), log_dir=log_dir,
        raw=data, lines=lines, shown=shown, prefix=prefix)


def _log_dir(given: str | None, name: str, file_name: str | None,
             base: Path) -> Path:
    """The instance's log directory: the file's log_dir ({name} in it is
    the instance's name; another instance of the file, `--name`, gets
    `DIR-NAME` when it does not say {name}), else the default per name.
    Services' arguments say `{log_dir}` for a file of theirs there."""
    if given is None:
        return paths.default_log_dir(name)
    if "{name}" in given:
        given = given.replace("{name}", name)
    elif name != file_name:
        given = given.rstrip("/") + f"-{name}"
    p = Path(given)
    return p if p.is_absolute() else (base / p).resolve()


def as_json(d: Deployment) -> dict[str, Any]:
    """The resolved deployment (zeronf apply --dry-run, tests)."""
    return {
        "name": d.name, "ports": [p["devargs"] for p in d.ports],
        "manager": d.manager, "port_specs": d.ports,
        "services": [s.__dict__ for s in d.services],
        "bundles": [b.__dict__ for b in d.bundles], "chain": d.chain,
        "port_chains": {str(p): h for p, h in d.port_chains.items()},
        "tenants": d.tenants,
        "flows": d.flows, "rules": d.rules, "routes": d.routes,
        "log_dir": str(d.log_dir),
    }

"""zeronf k8s: ZeroNF's Kubernetes side from here (docs/kubernetes.md)."""
from __future__ import annotations

import sys

import yaml

from .. import spec
from ..k8s_export import export


def run_export(a) -> int:
    try:
        d = spec.load(a.file, name=a.name)
    except spec.SpecError as e:
        print(f"zeronf: {e}", file=sys.stderr)
        return 1
    docs, left = export(d, namespace=a.namespace, image=a.image)
    sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
    for x in left:
        print(f"zeronf k8s export: {x}", file=sys.stderr)
    return 0


def register(sub) -> None:
    p = sub.add_parser("k8s", help="ZeroNF on Kubernetes")
    ks = p.add_subparsers(dest="k8s_cmd", required=True, metavar="COMMAND")
    e = ks.add_parser("export", help="a deployment file as the cluster's "
                      "resources (ZeroNF, NetworkFunctions, ServiceChains), "
                      "YAML on stdout; what they cannot say on stderr")
    e.add_argument("file")
    e.add_argument("--name", help="the instance's name, instead of the "
                   "file's")
    e.add_argument("--namespace", default="default",
                   help="of the NetworkFunctions and ServiceChains")
    e.add_argument("--image", help="the NFs' image (default: the "
                   "operator's)")
    e.set_defaults(run=run_export)

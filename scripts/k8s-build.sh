#!/usr/bin/env bash
# Upstream Kubernetes, etcd, Multus CNI and kwok for ZeroNF's cluster tests
# and its Kubernetes bench (docs/kubernetes.md):
# built with the Go toolchain from their Go modules (k8s/upstream/go.mod:
# Kubernetes is not in Debian, kind/minikube/k3s and the release downloads
# cannot be reached) once per version into a cache outside the tree, linked
# to .deps/k8s/bin, where scripts/cluster.sh and the tests look.
#
#   scripts/k8s-build.sh [apiserver]   apiserver: kube-apiserver, etcd and
#                                      kubectl only (the fast layer of make
#                                      test); default: every command
#
# About 12 minutes for kube-apiserver on 2 cores, 4 more for the rest
# (Multus and kwok: about a minute each).
# Idempotent: what is in the cache is not built again. The key is the
# version and go.sum's hash, so a changed module set builds anew. Multus
# and kwok (k8s/upstream/multus, kwok: modules of their own, on their own
# Kubernetes libraries) have their own keys and directories, linked to
# .deps/k8s/multus and .deps/k8s/kwok.
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH=/usr/local/go/bin:$PATH
command -v go >/dev/null || { echo "k8s-build.sh: no go (Go 1.26 at /usr/local/go)" >&2; exit 1; }
up=k8s/upstream
ver=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' "$up/go.mod")
sum=$(sha256sum "$up/go.sum" "$up/go.mod" | sha256sum | cut -c1-12)
cache=${ZERONF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zeronf}
dest="$cache/k8s-$ver-$sum"

fast=(etcd kube-apiserver kubectl)
all=("${fast[@]}" kube-controller-manager kube-scheduler kubelet kube-proxy)
want=("${all[@]}")
[ "${1:-}" = "apiserver" ] && want=("${fast[@]}")

pkg() {
  case $1 in
    etcd) echo ./etcd ;;
    *) echo "k8s.io/kubernetes/cmd/$1" ;;
  esac
}

missing=()
for c in "${want[@]}"; do
  [ -x "$dest/bin/$c" ] || missing+=("$c")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: building ${missing[*]} ($ver) into $dest (minutes: see docs/kubernetes.md)"
  mkdir -p "$dest/bin"
  minor=$(echo "$ver" | cut -d. -f2)
  v=k8s.io/component-base/version
  cv=k8s.io/client-go/pkg/version
  ld="-s -w"
  for p in "$v" "$cv"; do
    # kubectl and the API server's /version: a version they can parse
    ld+=" -X $p.gitVersion=$ver -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ld+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  pkgs=()
  for c in "${missing[@]}"; do pkgs+=("$(pkg "$c")"); done
  work=$(mktemp -d "$dest/.build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # one go build for all: the packages they share are compiled once
  (cd "$up" && go build -trimpath -ldflags "$ld" \
      -o "$work/" "${pkgs[@]}")
  for c in "${missing[@]}"; do
    mv "$work/$c" "$dest/bin/$c"
  done
fi
mkdir -p .deps/k8s
ln -sfn "$dest/bin" .deps/k8s/bin

[ "${1:-}" = "apiserver" ] && exit 0
# A side module (k8s/upstream/NAME: its own go.mod, on its own Kubernetes
# libraries): PKG built into $cache/NAME-VERSION-HASH/NAME, linked to
# .deps/k8s/NAME. Multus' thin plugin is the cluster's meta CNI plugin;
# kwok simulates nodes for make bench BENCH=k8s.
side() {
  local name=$1 mod=$2 pkg=$3 dir=k8s/upstream/$1 v h d
  v=$(awk -v m="$mod" '{ for (i = 1; i < NF; i++) if ($i == m) print $(i + 1) }' "$dir/go.mod")
  h=$(sha256sum "$dir/go.sum" "$dir/go.mod" | sha256sum | cut -c1-12)
  d="$cache/$name-$v-$h"
  if [ ! -x "$d/$name" ]; then
    echo "setup: building $name $v into $d"
    mkdir -p "$d"
    (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
        -o "$d/$name.new" "$pkg")
    mv "$d/$name.new" "$d/$name"
  fi
  ln -sfn "$d" ".deps/k8s/$name"
}
side multus gopkg.in/k8snetworkplumbingwg/multus-cni.v4 \
  gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus
side kwok sigs.k8s.io/kwok sigs.k8s.io/kwok/cmd/kwok

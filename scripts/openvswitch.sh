#!/usr/bin/env bash
# libopenvswitch's OpenFlow codec for the manager's OpenFlow endpoint
# (mgr/sdn/ofp_*.c, docs/sdn.md): built from Debian's openvswitch-source
# (Open vSwitch 3.1, Apache-2.0) once per version into a cache outside the
# tree, linked to .deps/openvswitch, where meson.build looks.
#
# What is built is the library alone (configure, the generated headers it
# needs, lib/libopenvswitch.la: about a minute on 2 cores). Its json_*
# functions are renamed ovs_json_* in the archive (objcopy
# --redefine-syms: definitions and references alike): they share names
# with jansson's (json_object, json_string, ...), which the manager uses,
# and the executable's copies would otherwise take the place of jansson's.
# Idempotent: nothing happens when the cached build is there.
set -euo pipefail
cd "$(dirname "$0")/.."

src=/usr/src/openvswitch/openvswitch.tar.gz
[ -f "$src" ] || { echo "openvswitch.sh: $src missing (apt-get install openvswitch-source)" >&2; exit 1; }
ver=$(dpkg-query -W -f='${Version}' openvswitch-source 2>/dev/null || echo unknown)
cache=${ZERONF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zeronf}
dest="$cache/openvswitch-$ver"

if [ ! -f "$dest/lib/libzn-openvswitch.a" ]; then
  echo "setup: building libopenvswitch $ver into $dest"
  work=$(mktemp -d "$cache/.ovs-build.XXXXXX" 2>/dev/null ||
         { mkdir -p "$cache" && mktemp -d "$cache/.ovs-build.XXXXXX"; })
  trap 'rm -rf "$work"' EXIT
  tar -xzf "$src" -C "$work"
  for d in "$work"/*/; do top=${d%/}; done
  (
    cd "$top"
    # the tarball may come configured: start from its sources
    [ ! -f Makefile ] || make distclean >/dev/null 2>&1 || true
    ./configure --disable-ssl --disable-libcapng --disable-afxdp \
      --enable-ndebug >"$work/configure.log" 2>&1 ||
      { tail -20 "$work/configure.log" >&2; exit 1; }
    j=$(nproc)
    # lib/'s generated sources: odp-netlink headers, the IDL C files
    make -j"$j" include/odp-netlink.h include/odp-netlink-macros.h \
      ofproto/ipfix-entities.def lib/vswitch-idl.c lib/vswitch-idl.h \
      lib/ovsdb-server-idl.c lib/ovsdb-server-idl.h >"$work/make.log" 2>&1 &&
    make -j"$j" lib/libopenvswitch.la >>"$work/make.log" 2>&1 ||
      { tail -20 "$work/make.log" >&2; exit 1; }
  )
  stage="$work/out"
  mkdir -p "$stage/lib" "$stage/include"
  nm -g --defined-only "$top/lib/.libs/libopenvswitch.a" 2>/dev/null |
    awk 'NF == 3 && $3 ~ /^json_/ { print $3 " ovs_" $3 }' | sort -u \
    >"$stage/json.syms"
  objcopy --redefine-syms="$stage/json.syms" \
    "$top/lib/.libs/libopenvswitch.a" "$stage/lib/libzn-openvswitch.a"
  cp -r "$top/include/openvswitch" "$top/include/openflow" "$stage/include/"
  cp "$top/LICENSE" "$top/NOTICE" "$stage/"
  rm -rf "$dest"
  mkdir -p "$cache"
  mv "$stage" "$dest"
fi
mkdir -p .deps
ln -sfn "$dest" .deps/openvswitch

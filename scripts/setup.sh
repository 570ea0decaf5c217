#!/usr/bin/env bash
# Idempotent set-up shared by `make demo`, `make test` and `make bench`:
# Debian packages, hugepages, hugetlbfs mount, the Python virtualenv.
# Safe to run again and again; does nothing that is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(meson ninja-build pkg-config gcc libdpdk-dev dpdk dpdk-dev
      libjansson-dev libpcap-dev libndpi-dev libndpi-bin iproute2 ethtool
      iputils-ping clang libclang-rt-14-dev bubblewrap prometheus chromium
      chromium-driver qemu-system-x86 openvswitch-source tcpdump
      libssl-dev openssl containernetworking-plugins nftables tcpreplay
      conntrack openvswitch-common)
# openvswitch-common: ovs-ofctl, the OpenFlow client the SDN tests drive
# the manager with (a fresh machine has none: CI failed without it).
# `setup.sh --bench` (make bench): the peers benchmark's OVS-DPDK too;
# `--cluster` (scripts/cluster.sh): a Kubernetes node's runtime and tools.
# containernetworking-plugins always: the CNI plugin's Go tests use its
# IPAM plugins (k8s/cni).
case "${1:-}" in
  --bench) PKGS+=(openvswitch-switch-dpdk) ;;
  --cluster) PKGS+=(containerd runc buildah iptables conntrack iperf3 curl) ;;
esac
HUGEPAGES=${ZERONF_HUGEPAGES:-1024}
HUGE_DIR=${ZERONF_HUGE_DIR:-/mnt/huge}

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -q
  # Packages with a daemon (prometheus) are installed, not started: the
  # tests run their own on loopback. policy-rc.d says no, then goes.
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
    as_root chmod +x "$policy"
    trap 'as_root rm -f "$policy"' EXIT
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends "${missing[@]}"
fi

# Hugepages: reserve if fewer are reserved, mount hugetlbfs if none is.
cur=$(cat /proc/sys/vm/nr_hugepages)
if [ "$cur" -lt "$HUGEPAGES" ]; then
  echo "$HUGEPAGES" | as_root tee /proc/sys/vm/nr_hugepages >/dev/null
  got=$(cat /proc/sys/vm/nr_hugepages)
  [ "$got" -ge 256 ] || { echo "setup: only $got hugepages available" >&2; exit 1; }
fi
if ! grep -q " hugetlbfs " /proc/mounts; then
  as_root mkdir -p "$HUGE_DIR"
  as_root mount -t hugetlbfs nodev "$HUGE_DIR"
fi

# The guest kernel of ZeroNF VMs (docs/vm-nfs.md): Debian's cloud kernel,
# from the package archive, unpacked here (.vm/vmlinuz), not installed.
# With it, the modules of a virtio-net NIC (.vm/modules/, loaded in this
# order by the guest's init): the copying baseline's VMs have one.
VM_MODULES="drivers/virtio/virtio.ko drivers/virtio/virtio_ring.ko
  drivers/virtio/virtio_pci_modern_dev.ko drivers/virtio/virtio_pci_legacy_dev.ko
  drivers/virtio/virtio_pci.ko net/core/failover.ko drivers/net/net_failover.ko
  drivers/net/virtio_net.ko"
if [ ! -f .vm/vmlinuz ] || [ ! -f .vm/modules/08-virtio_net.ko ]; then
  pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
        awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  if [ -n "$pkg" ]; then
    tmp=$(mktemp -d)
    if (cd "$tmp" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
       { as_root apt-get update -q >/dev/null &&
         (cd "$tmp" && apt-get download -q "$pkg" >/dev/null); }; then
      dpkg-deb -x "$tmp"/*.deb "$tmp/x"
      mkdir -p .vm
      mkdir -p .vm/modules
      i=0
      for m in $VM_MODULES; do
        i=$((i + 1))
        cp "$tmp"/x/lib/modules/*/kernel/"$m" ".vm/modules/0$i-$(basename "$m")"
      done
      cp "$tmp"/x/boot/vmlinuz-* .vm/vmlinuz.part && mv .vm/vmlinuz.part .vm/vmlinuz
      echo "setup: guest kernel $pkg in .vm/vmlinuz"
    else
      echo "setup: cannot fetch $pkg: ZeroNF VMs will not start" >&2
    fi
    rm -rf "$tmp"
  fi
fi

# The manager's OpenFlow codec: libopenvswitch, built once and cached
# (scripts/openvswitch.sh says why and how).
scripts/openvswitch.sh

# Python: control-plane client and test dependencies, in .venv.
if ! .venv/bin/python -c 'import zeronf, pytest, scapy, yaml, jsonschema, \
    kubernetes_validate, dockerfile_parse, fastapi, uvicorn, httpx, \
    prometheus_client, selenium, matplotlib, os_ken' 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip >/dev/null
  .venv/bin/pip install -q -e '.[test]'
fi


#!/usr/bin/env bash
# A real Kubernetes cluster on this one machine, from upstream binaries
# (scripts/k8s-build.sh), for ZeroNF's cluster tests and docs/kubernetes.md:
#
#   scripts/cluster.sh up     the control plane and the nodes, then waits
#                             until every node is Ready (idempotent)
#   scripts/cluster.sh down   everything stopped and removed: processes,
#                             containers, namespaces, cgroups, files
#   scripts/cluster.sh status what runs
#   scripts/cluster.sh env    `export KUBECONFIG=...` for the admin
#   scripts/cluster.sh images  ZeroNF's images of the build tree into every
#                             node: localhost/zeronf/zeronf:dev (the manager,
#                             NFs, node agent, CNI plugin, operator) and
#                             localhost/zeronf/tools:1 (a shell, iperf3,
#                             curl, zeronf-tcpcheck) and
#                             localhost/zeronf/dashboard:dev (Python and
#                             zeronf api); image-files NAME lists what each
#                             is made of (the dashboard's: what changes)
#   scripts/cluster.sh image REF FILE...
#                             an image FROM scratch of these files (and the
#                             shared libraries they load, found by ldd), at
#                             their paths, programs also in /usr/local/bin,
#                             imported into every node: pods' images here
#                             are made of this machine's programs
#
# The control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler) runs in this machine's network namespace on a bridge,
# znk0 (10.77.0.1). Each node is a network namespace on that bridge
# (10.77.0.1N) plus a mount namespace of its own, running its own
# containerd, kubelet and kube-proxy: the mount namespace gives each
# kubelet its own /var/lib/kubelet (the device-plugin directory is fixed
# there), /var/lib/cni and /var/log/pods. Processes enter a node with
# nsenter, not `ip netns exec` (which remounts /sys, hiding the cgroups
# from the kubelet). Pods get 10.244.N.0/24 on the node's bridge (Debian's
# CNI bridge plugin); the nodes route each other's pod networks. Multus
# (its thin plugin, built by k8s-build.sh) is each node's CNI config,
# delegating to that network and adding what a pod's
# k8s.v1.cni.cncf.io/networks names (NetworkAttachmentDefinitions); a
# node's CNI directory, /opt/cni/bin in its mount namespace, has Debian's
# plugins and Multus, and what DaemonSets install there. A second bridge,
# znk1 (MTU 1600, no addresses), gives each node a second link, fab0: the
# data plane's fabric, where ZeroNF's managers send each other chains.
#
# This machine is cgroup v1 without systemd: kubelets use the cgroupfs
# driver under a cgroup root of their own (znk-nodeN, created here) and
# failCgroupV1: false; the hugetlb controller is mounted if it is not, so
# pods' hugepage limits hold. Authentication is by client certificates of
# a CA made here; kubelets accept the API server anonymously (a test
# cluster on a private bridge: docs/kubernetes.md says so).
#
# Images: containerd's sandbox image is a pause built here
# (k8s/images/pause.c) FROM scratch with buildah and imported into each
# node's containerd; pods use imagePullPolicy: Never.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

N_NODES=${ZERONF_CLUSTER_NODES:-2}
RUN=/run/zeronf-cluster
STATE=/var/lib/zeronf-cluster
BIN=$REPO/.deps/k8s/bin
MULTUS=$REPO/.deps/k8s/multus/multus
BR=znk0
FABRIC_BR=znk1 # the data plane's own network: each node's fab0 (no address)
FABRIC_MTU=1600 # room for NSH in VXLAN-GPE around a 1500-byte packet
NET=10.77.0
CP=$NET.1
SVC_CIDR=10.96.0.0/16
POD_CIDR=10.244.0.0/16
PAUSE=localhost/zeronf/pause:3.10
ETCD_PORT=23790
KCFG=$STATE/pki/admin.kubeconfig

say() { echo "cluster: $*"; }
die() { echo "cluster: $*" >&2; exit 1; }

node_name() { echo "znk-node$1"; }
node_ip() { echo "$NET.1$1"; }
node_dir() { echo "$STATE/$(node_name "$1")"; }
node_run() { echo "$RUN/$(node_name "$1")"; }
# node $1's network and mount namespaces: NSENTER=(nsenter ... --)
node_ns() {
  NSENTER=(nsenter --net="/run/netns/$(node_name "$1")"
           --mount="$RUN/ns/$(node_name "$1").mnt" --)
}
# run in node $1's namespaces
in_node() {
  node_ns "$1"
  shift
  "${NSENTER[@]}" "$@"
}

alive() { [ -f "$RUN/pids/$1.pid" ] && kill -0 "$(cat "$RUN/pids/$1.pid")" 2>/dev/null; }

# start NAME CMD...: a daemon, its log in $STATE/logs/NAME.log
start() {
  local name=$1
  shift
  alive "$name" && return 0
  setsid "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/pids/$name.pid"
}

put() { # FILE: stdin into FILE, unless FILE has it already
  local t
  t=$(mktemp "$1.XXXXXX")
  cat >"$t"
  if cmp -s "$t" "$1"; then rm -f "$t"; else mv "$t" "$1"; fi
}

wait_for() { # SECONDS WHAT CMD...
  local t=$1 what=$2
  shift 2
  for _ in $(seq $((t * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  die "$what: not after ${t}s (logs: $STATE/logs/)"
}

kubectl() { "$BIN/kubectl" --kubeconfig "$KCFG" "$@"; }

# ------------------------------------------------------------------ pki

cert() { # NAME CN [O] [SAN]: a key and a certificate signed by the CA
  local name=$1 cn=$2 o=${3:-} san=${4:-} subj
  local d=$STATE/pki
  subj="/CN=$cn"
  [ -n "$o" ] && subj="/O=$o$subj"
  openssl ecparam -name prime256v1 -genkey -noout -out "$d/$name.key" 2>/dev/null
  openssl req -new -key "$d/$name.key" -subj "$subj" -out "$d/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [ -n "$san" ]; then
      echo "extendedKeyUsage=serverAuth,clientAuth"
      echo "subjectAltName=$san"
    else
      echo "extendedKeyUsage=clientAuth"
    fi
  } >"$d/$name.ext"
  openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" \
    -CAcreateserial -days 365 -extfile "$d/$name.ext" -out "$d/$name.crt" 2>/dev/null
  rm -f "$d/$name.csr" "$d/$name.ext"
}

kubeconfig() { # NAME: NAME.kubeconfig from NAME.crt/.key
  local d=$STATE/pki f=$STATE/pki/$1.kubeconfig
  "$BIN/kubectl" config --kubeconfig "$f" set-cluster zeronf \
    --server "https://$CP:6443" --certificate-authority "$d/ca.crt" \
    --embed-certs >/dev/null
  "$BIN/kubectl" config --kubeconfig "$f" set-credentials "$1" \
    --client-certificate "$d/$1.crt" --client-key "$d/$1.key" \
    --embed-certs >/dev/null
  "$BIN/kubectl" config --kubeconfig "$f" set-context zeronf \
    --cluster zeronf --user "$1" >/dev/null
  "$BIN/kubectl" config --kubeconfig "$f" use-context zeronf >/dev/null
}

pki() {
  local d=$STATE/pki
  [ -f "$d/done" ] && return 0
  mkdir -p "$d"
  chmod 700 "$d"
  openssl ecparam -name prime256v1 -genkey -noout -out "$d/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$d/ca.key" -subj "/CN=zeronf-cluster-ca" \
    -days 365 -out "$d/ca.crt" 2>/dev/null
  cert apiserver kube-apiserver "" \
    "IP:$CP,IP:10.96.0.1,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert admin admin system:masters
  cert controller-manager system:kube-controller-manager
  cert scheduler system:kube-scheduler
  cert kube-proxy system:kube-proxy
  for i in $(seq "$N_NODES"); do
    cert "$(node_name "$i")" "system:node:$(node_name "$i")" system:nodes
  done
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  cert multus multus
  for n in admin controller-manager scheduler kube-proxy multus; do kubeconfig "$n"; done
  for i in $(seq "$N_NODES"); do kubeconfig "$(node_name "$i")"; done
  touch "$d/done"
}

# --------------------------------------------------------------- network

network() {
  if ! ip link show "$BR" >/dev/null 2>&1; then
    ip link add "$BR" type bridge
    ip addr add "$CP/24" dev "$BR"
    ip link set "$BR" up
  fi
  if ! ip link show "$FABRIC_BR" >/dev/null 2>&1; then
    ip link add "$FABRIC_BR" mtu "$FABRIC_MTU" type bridge
    sysctl -q -w "net.ipv6.conf.$FABRIC_BR.disable_ipv6=1"
    ip link set "$FABRIC_BR" up
  fi
  sysctl -q -w net.ipv4.ip_forward=1
  for i in $(seq "$N_NODES"); do
    local n ip
    n=$(node_name "$i")
    ip=$(node_ip "$i")
    if [ ! -e "/run/netns/$n" ]; then
      ip netns add "$n"
      ip link add "znk-n$i" type veth peer name eth0 netns "$n"
      ip link set "znk-n$i" master "$BR" up
      ip -n "$n" addr add "$ip/24" dev eth0
      ip -n "$n" link set eth0 up
      ip -n "$n" link set lo up
      ip -n "$n" route add default via "$CP"
      ip netns exec "$n" sysctl -q -w net.ipv4.ip_forward=1
      ip netns exec "$n" sysctl -q -w net.bridge.bridge-nf-call-iptables=1 || true
    fi
    # the fabric: a second link a node, as a data-plane NIC (ZeroNF's
    # managers take it with net_af_packet; the kernel has no address on it)
    if ! ip -n "$n" link show fab0 >/dev/null 2>&1; then
      ip link add "znk-f$i" mtu "$FABRIC_MTU" type veth peer name fab0 netns "$n" mtu "$FABRIC_MTU"
      ip link set "znk-f$i" master "$FABRIC_BR" up
      ip netns exec "$n" sysctl -q -w net.ipv6.conf.fab0.disable_ipv6=1
      ip -n "$n" link set fab0 up
    fi
    # this machine and the other nodes reach node i's pods through it
    ip route replace "10.244.$i.0/24" via "$ip"
    for j in $(seq "$N_NODES"); do
      [ "$j" = "$i" ] || ip -n "$n" route replace "10.244.$j.0/24" via "$(node_ip "$j")"
    done
  done
}

# --------------------------------------------------------------- cgroups

CGROUP_CTRLS="cpu cpuacct cpuset memory devices freezer blkio pids hugetlb systemd unified"

cgroups() {
  if [ ! -d /sys/fs/cgroup/hugetlb ] || ! mountpoint -q /sys/fs/cgroup/hugetlb; then
    mkdir -p /sys/fs/cgroup/hugetlb
    mount -t cgroup -o hugetlb cgroup /sys/fs/cgroup/hugetlb
    touch "$RUN/hugetlb-mounted"
  fi
  for i in $(seq "$N_NODES"); do
    for c in $CGROUP_CTRLS; do
      [ -d "/sys/fs/cgroup/$c" ] || continue
      mkdir -p "/sys/fs/cgroup/$c/$(node_name "$i")"
    done
    # cpuset: a child has no CPUs or memory nodes until given its parent's
    local cs=/sys/fs/cgroup/cpuset/$(node_name "$i")
    if [ -d "$cs" ]; then
      cat /sys/fs/cgroup/cpuset/cpuset.cpus >"$cs/cpuset.cpus"
      cat /sys/fs/cgroup/cpuset/cpuset.mems >"$cs/cpuset.mems"
    fi
  done
}

# -------------------------------------------------------- control plane

control_plane() {
  local p=$STATE/pki
  start etcd "$BIN/etcd" --name zeronf --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "zeronf=http://127.0.0.1:$((ETCD_PORT + 1))" \
    --listen-metrics-urls "" --log-level warn
  wait_for 60 "etcd" curl -sf "http://127.0.0.1:$ETCD_PORT/health"
  start kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$CP" --advertise-address "$CP" --secure-port 6443 \
    --service-cluster-ip-range "$SVC_CIDR" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --client-ca-file "$p/ca.crt" \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$p/sa.pub" \
    --service-account-signing-key-file "$p/sa.key" \
    --authorization-mode Node,RBAC \
    --enable-admission-plugins NodeRestriction \
    --allow-privileged=true \
    --kubelet-client-certificate "$p/admin.crt" \
    --kubelet-client-key "$p/admin.key" \
    --kubelet-preferred-address-types InternalIP \
    --profiling=false
  wait_for 120 "kube-apiserver" kubectl get --raw /readyz
  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$p/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$p/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$p/controller-manager.kubeconfig" \
    --service-account-private-key-file "$p/sa.key" \
    --root-ca-file "$p/ca.crt" \
    --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
    --use-service-account-credentials --leader-elect=false \
    --bind-address 127.0.0.1 --profiling=false
  start kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig "$p/scheduler.kubeconfig" \
    --authentication-kubeconfig "$p/scheduler.kubeconfig" \
    --authorization-kubeconfig "$p/scheduler.kubeconfig" \
    --leader-elect=false --bind-address 127.0.0.1 --profiling=false
}

# ------------------------------------------------------------------ nodes

# REF TAR ROOT [CONFIG...]: an image FROM scratch of directory ROOT
# (buildah config options CONFIG), written to TAR as an OCI archive
oci_archive() {
  local ref=$1 tar=$2 root=$3 c
  shift 3
  local b=(buildah --root "$STATE/buildah/root" --runroot "$RUN/buildah"
           --storage-driver vfs)
  c=$("${b[@]}" from scratch)
  "${b[@]}" copy "$c" "$root" / >/dev/null
  [ $# -eq 0 ] || "${b[@]}" config "$@" "$c"
  "${b[@]}" commit -q "$c" "$ref" >/dev/null
  "${b[@]}" rm "$c" >/dev/null
  rm -f "$tar"
  "${b[@]}" push -q "$ref" "oci-archive:$tar:$ref"
  "${b[@]}" rmi -f "$ref" >/dev/null
}

import_image() { # I TAR: into node I's containerd
  in_node "$1" ctr -a "$(node_run "$1")/containerd.sock" -n k8s.io \
    images import "$2" >/dev/null
}

pause_image() {
  local out=$STATE/images/pause.tar root=$STATE/images/.pause
  [ -f "$out" ] && return 0
  mkdir -p "$root"
  gcc -O2 -Wall -Wextra -Werror -static -o "$root/pause" k8s/images/pause.c
  oci_archive "$PAUSE" "$out" "$root" --entrypoint '["/pause"]' \
    --user 65535:65535
  rm -rf "$root"
}

containerd_config() { # I
  local i=$1 d r
  d=$(node_dir "$i")
  r=$(node_run "$i")
  cat <<EOF
version = 2
root = "$d/containerd"
state = "$r/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "$r/containerd.sock"

[ttrpc]
  address = "$r/containerd.sock.ttrpc"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$r/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/opt/cni/bin"
    conf_dir = "$d/cni/net.d"
EOF
}

cni_config() { # I: the pod network, 10.244.I.0/24 on the node's bridge
  cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "pods",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true,
     "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.$1.0/24"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

multus_config() { # I: the node's CNI config: Multus, its cluster network
  # the pods' bridge (inline: Multus 4.2 re-encodes a conflist it reads
  # from a file through its own types, and a DEL then gives the bridge an
  # IPAM config without its ranges: multus-cni issue 1449)
  cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "multus",
  "type": "multus",
  "kubeconfig": "$STATE/pki/multus.kubeconfig",
  "delegates": [$(cni_config "$1")],
  "binDir": "/opt/cni/bin",
  "logFile": "$STATE/logs/$(node_name "$1")-multus.log",
  "logLevel": "error"
}
EOF
}

kubelet_config() { # I
  local i=$1
  cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(node_ip "$i")
port: 10250
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
cgroupDriver: cgroupfs
cgroupRoot: /$(node_name "$i")
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$(node_run "$i")/containerd.sock
podCIDR: 10.244.$i.0/24
resolvConf: /etc/resolv.conf
serializeImagePulls: false
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
enforceNodeAllocatable: ["pods"]
maxPods: 60
EOF
}

proxy_config() { # I
  cat <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $STATE/pki/kube-proxy.kubeconfig}
hostnameOverride: $(node_name "$1")
bindAddress: $(node_ip "$1")
clusterCIDR: $POD_CIDR
mode: iptables
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

node_up() { # I
  local i=$1 n d r
  n=$(node_name "$i")
  d=$(node_dir "$i")
  r=$(node_run "$i")
  mkdir -p "$d/kubelet" "$d/cni/net.d" "$d/cni/lib" "$d/cni/bin" "$d/pods" \
    "$d/containers" "$r/runc"
  # the node's CNI directory: Debian's plugins and Multus (copied: a
  # DaemonSet may replace a file there)
  for p in /usr/lib/cni/* "$MULTUS"; do
    [ -e "$d/cni/bin/$(basename "$p")" ] || cp "$p" "$d/cni/bin/"
  done
  if [ ! -d /opt/cni/bin ]; then
    [ -d /opt/cni ] || touch "$RUN/made-opt-cni"
    mkdir -p /opt/cni/bin
  fi
  # a mount namespace kept by its file, receiving this machine's mounts
  if [ ! -e "$RUN/ns/$n.mnt" ]; then
    touch "$RUN/ns/$n.mnt"
    unshare --mount="$RUN/ns/$n.mnt" --propagation slave true
    in_node "$i" sh -ec "
      mount --bind '$d/kubelet' /var/lib/kubelet 2>/dev/null ||
        { mkdir -p /var/lib/kubelet && mount --bind '$d/kubelet' /var/lib/kubelet; }
      mkdir -p /var/lib/cni /var/log/pods /var/log/containers
      mount --bind '$d/cni/lib' /var/lib/cni
      mount --bind '$d/cni/bin' /opt/cni/bin
      mount --bind '$d/pods' /var/log/pods
      mount --bind '$d/containers' /var/log/containers"
  fi
  # written when they change only: kube-proxy exits when its file does
  containerd_config "$i" | put "$d/containerd.toml"
  multus_config "$i" | put "$d/cni/net.d/00-multus.conf"
  kubelet_config "$i" | put "$d/kubelet.yaml"
  proxy_config "$i" | put "$d/kube-proxy.yaml"
  node_ns "$i"
  start "$n-containerd" "${NSENTER[@]}" containerd --config "$d/containerd.toml"
  wait_for 60 "$n: containerd" in_node "$i" ctr -a "$r/containerd.sock" version
  # the images made so far (the pause, and what `image` made before)
  for t in "$STATE"/images/*.tar; do import_image "$i" "$t"; done
  start "$n-kubelet" "${NSENTER[@]}" "$BIN/kubelet" \
    --config "$d/kubelet.yaml" --kubeconfig "$STATE/pki/$n.kubeconfig" \
    --hostname-override "$n" --node-ip "$(node_ip "$i")" \
    --root-dir /var/lib/kubelet --cert-dir /var/lib/kubelet/pki
  start "$n-kube-proxy" "${NSENTER[@]}" "$BIN/kube-proxy" --config "$d/kube-proxy.yaml"
}

up() {
  [ "$(id -u)" -eq 0 ] || die "run as root (namespaces, cgroups, mounts)"
  scripts/setup.sh --cluster
  scripts/k8s-build.sh
  mkdir -p "$RUN/pids" "$RUN/ns" "$STATE/logs"
  # the namespace files' directory: a private mount, as ip netns makes
  if ! mountpoint -q "$RUN/ns"; then
    mount --bind "$RUN/ns" "$RUN/ns"
    mount --make-private "$RUN/ns"
  fi
  pki
  network
  cgroups
  pause_image
  control_plane
  # Multus' NetworkAttachmentDefinitions, and its role for its nodes' user
  kubectl apply -f k8s/config/multus/multus.yaml >/dev/null
  for i in $(seq "$N_NODES"); do node_up "$i"; done
  for i in $(seq "$N_NODES"); do
    wait_for 180 "$(node_name "$i") Ready" sh -c \
      "'$BIN/kubectl' --kubeconfig '$KCFG' get node '$(node_name "$i")' \
        -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
  done
  # pods are refused until the controller manager has made a namespace's
  # service account: up means a pod can be made
  wait_for 60 "the default service account" kubectl get serviceaccount default -n default
  say "up: $N_NODES nodes Ready; export KUBECONFIG=$KCFG"
}

# ----------------------------------------------------------------- images

copy_path() { # PATH ROOT: PATH under ROOT as it is here: a link as a link
  local p=$1 root=$2 t
  { [ -e "$root$p" ] || [ -L "$root$p" ]; } && return 0
  mkdir -p "$root$(dirname "$p")"
  if [ -L "$p" ]; then
    # the same link, and what it names (a library and its versions are
    # one file: each name loaded is that file, not a copy)
    t=$(readlink "$p")
    ln -s "$t" "$root$p"
    case $t in
      /*) copy_path "$t" "$root" ;;
      *) copy_path "$(dirname "$p")/$t" "$root" ;;
    esac
  else
    cp -a "$p" "$root$p"
  fi
}

with_libs() { # FILE ROOT: FILE and what it loads, at their paths under ROOT
  copy_path "$1" "$2"
  libs_of "$1" "$2"
}

libs_of() { # FILE ROOT: what FILE loads, at their paths under ROOT
  local f=$1 root=$2
  # "name => /path (0x...)" and "/path (0x...)": the path whole, spaces
  # and all (a build tree may be at any path)
  { ldd "$f" 2>/dev/null || true; } |
    sed -n -e 's/^.* => \(\/.*\) (0x[0-9a-f]*)$/\1/p' \
        -e 's/^[[:space:]]*\(\/.*\) (0x[0-9a-f]*)$/\1/p' |
    while IFS= read -r lib; do copy_path "$lib" "$root"; done
}

image_root() { # a new image root (its path on stdout), this machine's
  # merged /usr in it: /lib/x and /usr/lib/x are one file (two copies of a
  # DPDK driver, one loaded by each name, register twice)
  local root
  mkdir -p "$STATE/images"
  root=$(mktemp -d "$STATE/images/.root.XXXXXX")
  for l in /bin /sbin /lib /lib32 /lib64 /libx32; do
    [ -L "$l" ] || continue
    mkdir -p "$root/$(readlink -f "$l")"
    ln -s "$(readlink "$l")" "$root$l"
  done
  mkdir -p "$root/tmp" "$root/etc"
  chmod 1777 "$root/tmp"
  echo "root:x:0:0:root:/:/bin/sh" >"$root/etc/passwd"
  echo "nobody:x:65534:65534:nobody:/:/bin/false" >>"$root/etc/passwd"
  echo "$root"
}

image_done() { # REF ROOT ENV...: ROOT as image REF on every node
  local ref=$1 root=$2 name tar
  shift 2
  name=$(echo "$ref" | tr '/:' '__')
  tar=$STATE/images/$name.tar
  oci_archive "$ref" "$tar" "$root" "$@"
  rm -rf "$root"
  for i in $(seq "$N_NODES"); do
    alive "$(node_name "$i")-containerd" && import_image "$i" "$tar"
  done
  say "image $ref: $(du -sh "$tar" | cut -f1), on every node"
}

# REF FILE...: build, then import into every node (up or not yet: at
# node_up). A directory is copied whole; programs bring their libraries.
image() {
  local ref=$1 root
  shift
  [ $# -gt 0 ] || die "image $ref: no files"
  root=$(image_root)
  for f in "$@"; do
    if [ -d "$f" ]; then
      # each entry as it is (links too), with the libraries it loads
      # (DPDK's driver directory)
      find "$f" -type f -o -type l | while read -r x; do
        with_libs "$x" "$root"
      done
    else
      with_libs "$f" "$root"
      # programs by name too, wherever they were built
      if [ -x "$f" ]; then
        mkdir -p "$root/usr/local/bin"
        [ -e "$root/usr/local/bin/$(basename "$f")" ] ||
          ln -s "$f" "$root/usr/local/bin/$(basename "$f")"
      fi
    fi
  done
  # programs by name (kubectl exec POD -- zeronf-tcpcheck ...)
  image_done "$ref" "$root" --env PATH=/usr/local/bin:/usr/bin:/bin
}

# The dashboard's image (the ZeroNF's spec.dashboard: zeronf api in each
# node agent's pod): Debian's Python 3.11 and its standard library, the
# control plane's dependencies (pyproject.toml's, pip-installed once into
# the cache, keyed by that file) and python/zeronf at /opt/zeronf/site.
DASHBOARD_IMAGE=localhost/zeronf/dashboard:dev
dashboard_image() {
  local cache=${ZERONF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zeronf}
  local py=$REPO/.venv/bin/python site root deps
  [ -x "$py" ] || die "dashboard image: no .venv (make build)"
  site=$cache/dashboard-site-$(sha256sum pyproject.toml | cut -c1-12)
  if [ ! -d "$site" ]; then
    deps=$("$py" -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))')
    say "dashboard image: pip install $(echo $deps) into $site"
    rm -rf "$site.new"
    mapfile -t deps <<<"$deps"
    "$py" -m pip install -q --no-compile --disable-pip-version-check \
      --target "$site.new" "${deps[@]}"
    mv "$site.new" "$site"
  fi
  root=$(image_root)
  with_libs /usr/bin/python3.11 "$root"
  ln -s python3.11 "$root/usr/bin/python3"
  mkdir -p "$root/usr/lib" "$root/opt/zeronf"
  cp -a /usr/lib/python3.11 "$root/usr/lib/"
  rm -rf "$root/usr/lib/python3.11/test" "$root/usr/lib/python3.11/idlelib" \
    "$root/usr/lib/python3.11/tkinter" "$root/usr/lib/python3.11/ensurepip" \
    "$root/usr/lib/python3.11/lib2to3" "$root/usr/lib/python3.11/turtledemo"
  cp -a "$site" "$root/opt/zeronf/site"
  cp -a "$REPO/python/zeronf" "$root/opt/zeronf/site/zeronf"
  find "$root" -name __pycache__ -prune -exec rm -rf {} +
  # the extension modules' libraries (the ssl module's libssl ...)
  find "$root/usr/lib/python3.11/lib-dynload" "$root/opt/zeronf/site" \
      -name '*.so' | while IFS= read -r so; do libs_of "$so" "$root"; done
  image_done "$DASHBOARD_IMAGE" "$root" --env PATH=/usr/bin:/bin \
    --env PYTHONPATH=/opt/zeronf/site --env PYTHONDONTWRITEBYTECODE=1
}

# ------------------------------------------------------------------- down

kill_pid() { # NAME: the daemon, and wait for it
  local f=$RUN/pids/$1.pid p
  [ -f "$f" ] || return 0
  p=$(cat "$f")
  if kill -0 "$p" 2>/dev/null; then
    kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$p" 2>/dev/null || true
  fi
  rm -f "$f"
}

cgroup_kill() { # DIR: every process under it, then the directories
  local dir=$1
  [ -d "$dir" ] || return 0
  for _ in $(seq 20); do
    local left=0
    while read -r p; do
      [ -n "$p" ] || continue
      kill -KILL "$p" 2>/dev/null || true
      left=1
    done < <(find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null)
    [ "$left" = 0 ] && break
    sleep 0.1
  done
  find "$dir" -depth -type d -exec rmdir {} \; 2>/dev/null || true
}

down() {
  for i in $(seq 9); do
    local n
    n=$(node_name "$i")
    [ -e "/run/netns/$n" ] || [ -e "$RUN/ns/$n.mnt" ] || [ -d "$STATE/$n" ] || continue
    kill_pid "$n-kubelet"
    kill_pid "$n-kube-proxy"
    # the pods' processes, then their shims (which outlive containerd)
    cgroup_kill "/sys/fs/cgroup/pids/$n"
    pkill -KILL -f "containerd-shim-runc-v2 .*-address $RUN/$n/" 2>/dev/null || true
    kill_pid "$n-containerd"
    for c in $CGROUP_CTRLS; do cgroup_kill "/sys/fs/cgroup/$c/$n"; done
    if [ -e "$RUN/ns/$n.mnt" ]; then
      umount "$RUN/ns/$n.mnt" 2>/dev/null || true
      rm -f "$RUN/ns/$n.mnt"
    fi
    ip netns del "$n" 2>/dev/null || true
    ip route del "10.244.$i.0/24" 2>/dev/null || true
    # what its ZeroNF manager (instance = the node's name) left if it was
    # killed: its runtime directories and hugepage files
    rm -rf "/var/run/dpdk/$n" "/var/run/zeronf/$n"
    rm -rf /mnt/huge/"$n"map_* /mnt/huge/"$n"tg_*
  done
  for d in kube-scheduler kube-controller-manager kube-apiserver etcd; do kill_pid "$d"; done
  ip link del "$BR" 2>/dev/null || true
  ip link del "$FABRIC_BR" 2>/dev/null || true
  if [ -f "$RUN/hugetlb-mounted" ]; then
    umount /sys/fs/cgroup/hugetlb 2>/dev/null && rmdir /sys/fs/cgroup/hugetlb 2>/dev/null || true
  fi
  if mountpoint -q "$RUN/ns" 2>/dev/null; then umount "$RUN/ns"; fi
  if [ -f "$RUN/made-opt-cni" ]; then rm -rf /opt/cni; fi
  # buildah's vfs layers: plain directories
  rm -rf "$STATE" "$RUN"
  say "down: nothing left"
}

# ZeroNF's images, of the build tree (make k8s builds the Go pieces):
# zeronf: the manager, the NFs, the node agent, the CNI plugin, the
# operator, DPDK's drivers, and what glibc loads itself (pthread_cancel's
# unwinder: without it the manager aborts while it stops, leaving its
# files); tools: a shell, iperf3, curl and zeronf-tcpcheck (every byte of a
# TCP connection, checked), for application pods. One file a line.
ZERONF_IMAGE=localhost/zeronf/zeronf:dev
TOOLS_IMAGE=localhost/zeronf/tools:1
image_files() { # zeronf|tools
  local b=${ZERONF_BUILD:-$REPO/build}
  case $1 in
    zeronf) printf '%s\n' "$b/mgr/zeronf-mgr" "$b/nfs/zeronf-forward" \
              "$b/nfs/zeronf-monitor" "$b/nfs/zeronf-dpi" \
              "$b/nfs/zeronf-filter" "$b/nfs/zeronf-flowmon" \
              "$b/nfs/zeronf-router" "$b/nfs/zeronf-steer" \
              "$b/nfs/zeronf-speed-tester" "$b/k8s/zeronf-node" \
              "$b/k8s/zeronf-cni" "$b/k8s/zeronf-operator" \
              /usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0 \
              /usr/lib/x86_64-linux-gnu/libgcc_s.so.1 ;;
    tools) printf '%s\n' /bin/sh /bin/dash /usr/bin/iperf3 /usr/bin/curl \
             /bin/sleep /bin/cat /bin/hostname "$b/k8s/zeronf-tcpcheck" ;;
    # not what it is made of whole (see dashboard_image): what changes
    dashboard) printf '%s\n' "$REPO/python/zeronf" "$REPO/pyproject.toml" ;;
    *) die "image_files: zeronf, tools or dashboard" ;;
  esac
}

images() {
  local f files
  for x in zeronf tools; do
    files=()
    while IFS= read -r f; do
      [ -e "$f" ] || die "$f: not built (make build k8s)"
      files+=("$f")
    done < <(image_files "$x")
    if [ "$x" = zeronf ]; then image "$ZERONF_IMAGE" "${files[@]}"
    else image "$TOOLS_IMAGE" "${files[@]}"; fi
  done
  dashboard_image
}

status() {
  for f in "$RUN"/pids/*.pid; do
    [ -e "$f" ] || { say "not up"; return 0; }
    local n
    n=$(basename "$f" .pid)
    if alive "$n"; then echo "$n: running (pid $(cat "$f"))"; else echo "$n: gone"; fi
  done
  alive kube-apiserver && kubectl get nodes -o wide || true
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  env) echo "export KUBECONFIG=$KCFG" ;;
  image) shift; [ $# -ge 2 ] || die "usage: cluster.sh image REF FILE..."
         mkdir -p "$RUN/pids" "$STATE/logs"; image "$@" ;;
  images) mkdir -p "$RUN/pids" "$STATE/logs"; images ;;
  image-files) image_files "${2:-}" ;;
  *) echo "usage: scripts/cluster.sh up|down|status|env|image|images|image-files" >&2; exit 2 ;;
esac

#!/usr/bin/env python3
"""ZeroNF benchmarks (`make bench`, `make bench BENCH=name`).

Each prints one JSON object per line on stdout; values are medians of
--runs runs, with the individual runs alongside. Comparisons (p2p against
dpdk-testpmd) are measured in the same run, interleaved, so a noisy machine
affects both sides alike. Progress goes to stderr.

  chain  {"bench":"chain","mode":"process","nfs":N,"mpps":X,"window":W,
         "worker_mpps":Y}
         N = 1, 2, 4, 8: the speed tester keeps W = max(512, 256 N)
         64-byte packets circulating through N NFs (itself and N-1 forward
         NFs); mpps = packets per second through the chain, NFs as
         processes handing packets to each other; worker_mpps: the same
         with every hop through a worker (--handoff worker), interleaved,
         also as its own line {"bench":"chain","mode":"worker","nfs":N,
         "mpps":Y}. Where the machine has a core per thread, NFs are
         pinned one per core and their output is drained by N worker
         threads.
         {"bench":"chain","mode":"bundle","nfs":N,"mpps":X,"bundles":[..],
         "of_chain_2":R,"of_process_chain_2":Q,"target":0.25}: the same
         chain (N = 2, 4, 8) cut in chain order into one bundle a core
         (zeronf-bundle; 8 -> [4, 4]), interleaved; R: over the bundled
         chain of 2, Q: over the processes' chain of 2 (target for N = 8).
  latency {"bench":"latency","mode":M,"nfs":N,"load_pct":L,"peak_mpps":P,
         "rate_mpps":R,"delivered_mpps":D,"p50_ns":A,"p99_ns":B,
         "cdf_ns":[[q,ns],...]}: one-way latency through chains of N = 1,
         2, 4 at L = 10 and 50 % of the chain's closed-loop peak P: the
         speed tester generating at R (open loop, --rate) and measuring
         each packet back from the chain. M process: NFs as processes;
         bundle: the chain as one bundle (one thread); N = 2 at 10 %
         carries "target_p50_ns": 5000.
  p2p    {"bench":"p2p","mode":M,"zeronf_mpps":X,"testpmd_mpps":Y,
         "ratio":X/Y,"target":T}: net_null -> one forward NF -> net_null,
         and dpdk-testpmd io forwarding on the same vdevs, in the same runs;
         M worker: a worker polls port 0 and hands packets to the NF;
         nf_rx: the NF owns port 0's RX queue (--nf-rx-queues 1; target
         ratio 0.9); bundle: the same NF run by zeronf-bundle.
  idle   {"bench":"idle","cpu_pct":X}: CPU used by the manager and 4 idle
         NFs over 10 s, in % of one core; again with 100k exact flow rules
         installed ({"bench":"idle","flows":100000,...}), and with the
         first NF owning the port's RX queues
         ({"bench":"idle","mode":"nf_rx",...}), and with the 4 NFs in one
         bundle owning them ({"bench":"idle","mode":"bundle",...,
         "target":3.0}).
  flowtable {"bench":"flowtable","flows":N,"ns_per_lookup_burst":X,...}:
         flow table lookup cost for N = 1k, 10k, 100k, 1M flows.
  flowdir {"bench":"flowdir","mode":M,"mpps":X}: a 100k-flow trace
         (64-byte UDP, replayed from memory) through one forward NF to
         net_null. default_chain: no rules; flow_table: 100k exact rules
         (the same path as a per-flow chain), looked up once per packet at
         ingress with the stored flow hash; naive_rehash: the same rules,
         but every packet's header is parsed, hashed and looked up again
         at every hop (--fdir-rehash, OpenNetVM's way).
  dpi    {"bench":"dpi","mode":M,"mpps":X,"vs_ndpireader":R}: the nDPI
         test captures (those with Ethernet framing, concatenated, 8 times
         over with renumbered addresses: 230,504 frames) classified by the
         dpi NF on ZeroNF (M = zeronf; zeronf_2: two replicas of it,
         balanced by flow hash by the worker; zeronf_rss_2: two replicas
         each owning an RX queue of a ring port that holds the capture
         split by RSS, one per CPU), by the same classifier reading the
         file with libpcap (libpcap) and by ndpiReader 4.2 (ndpireader);
         R: X / ndpireader's X.
  router {"bench":"router","prefixes":512621,"mpps":X}: the router NF
         with the RouteViews table, 64-byte packets to random IPv4
         destinations (net_pcap replay -> router -> net_null).
  firewall {"bench":"firewall","rules":N,"replicas":R,"flows":4096,
         "mpps":X}: 64-byte UDP packets of 4096 flows through the
         firewall NF (R = 1, 2 replicas) with N = 1000, 10000 rules (a
         forward chain of random prefix and port rules, connection
         tracking on), to net_null.
  ratelimit {"bench":"ratelimit","mode":"accuracy","rate":R,
         "configured_pps":C,"measured_pps":M,"error_pct":E,"target_pct":2}:
         one class at R (100kpps, 1mpps, 100mbit) under a far higher
         offered load, what passed over 5 s against what was configured;
         {"bench":"ratelimit","mode":"throughput","replicas":N,"mpps":X}:
         64-byte packets of 4096 flows through a class and a bucket per
         flow, none binding (N = 1, 2 replicas).
  nat    {"bench":"nat","mode":"snat","replicas":N,"flows":4096,"mpps":X}:
         64-byte UDP of 4096 flows through the NAT NF masquerading them
         (a session each, checksums updated), N = 1, 2 replicas.
  route_load {"bench":"route_load","prefixes":N,"load_s":X,
         "lookup_mpps":Y,"lpm_lookup_mpps":Z}: the router's route tables
         (rte_fib) loading the RouteViews table and a synthetic 1M-prefix
         one; lookups in bursts of 32 on a 5000-address sample, against
         rte_lpm (the router's tables before) in the same run.
  soak   {"bench":"soak","seconds":S,...,"rss_kb_start":A,"rss_kb_end":B,
         "hugepage_mb_start":C,"hugepage_mb_end":D,"buffers_leaked":0,
         "crashes":0}: SOAK_S seconds (default 600) of NF kills and
         restarts, LB mode, chain and flow-rule churn under traffic.
  flowmon {"bench":"flowmon","flows":F,"mpps":X}: 1M 64-byte packets over
         F = 1k or 1M flows, read from a file by net_pcap, through flowmon.
  nf_start {"bench":"nf_start","sandboxed":true|false,"p50_ms":X,
         "p99_ms":Y}: 20 starts each of an NF the manager launches
         (nf.start), sandboxed or not, from the command to the NF's first
         packet (bench/nf_start.py); and a line with "trust_group":true:
         sandboxed in a trust group (a PID namespace of its own). Then
         {"bench":"nf_death","p50_ms":X,"p99_ms":Y,"target_ms":100}: 20
         NFs killed, from the kill to the manager no longer listing it.
  peers  {"bench":"peers","system":S,"scenario":C,"size":B,"mpps":X}:
         ZeroNF, dpdk-testpmd (io, mac), OVS-DPDK 3.1 and the kernel
         (veth + bridge) on the same vdevs and sizes 64, 512, 1500; p2p
         and 100k exact-match flows (bench/peers.py).
  sdn    {"bench":"sdn","system":S,"match":K,"flows":N,"flow_mods_per_s":X,
         "packet_in_rtt_p50_us":Y,"packet_in_rtt_p99_us":Z}: ZeroNF's
         OpenFlow agent and OVS-DPDK under the same controller: N = 10,000
         FLOW_MODs (K = exact 5-tuples or wildcard prefixes) until the
         barrier's reply, then packet-in round trips through a table-miss
         entry and the controller's PACKET_OUT (bench/sdn.py).
  xhost  {"bench":"xhost","hosts":H,"size":B,"mpps":X,"p50_ns":Y,
         "p99_ns":Z}: a chain of 2 (speed tester, forward NF) on one host
         (H = 1) and split over two (H = 2: two managers whose fabric
         ports are a memif pair, the forward NF on the second, NSH over
         VXLAN-GPE both ways), B = 64 and 1500; X closed loop (512
         packets), Y, Z one way, both lines at one rate ("latency_at_mpps":
         10 % of the lower peak) (bench/xhost.py). Then
         {"bench":"xhost_encap","size":B,"encap_ns":E,"decap_ns":D}: the
         worker's cost per packet of writing a tunnel and NSH, and of
         reading them (bench/nsh_bench.c).
  lb     {"bench":"lb","replicas":R,"mpps":X,"max_share":S}: the same
         trace, R = 1, 2, 4 forward replicas of one service (hash mode, no
         RSS); max_share = the busiest replica's share of the packets. The
         manager's worker keeps a core; replicas share the others where
         there are fewer cores than replicas (lb_layout). Then the lb NF
         (docs/nfs/lb.md): {"bench":"lb","nf":"maglev","mode":"nat",
         "replicas":R,"backends":4,"flows":4096,"mpps":X}, 64-byte UDP of
         4096 flows to a VIP of 4 backends, R = 1, 2.
  trust  {"bench":"trust","mode":"same_group|cross_group","size":B,
         "mpps":X,"ns_per_copy":Y}: a chain of 2 (speed tester, forward
         NF; 512 packets circulating, B = 64 and 1500 bytes) with both NFs
         in one trust group, and with them in two: every packet is then
         copied into the other group's pool by a worker, both ways;
         ns_per_copy = the workers' mean time per copy (bench/trust.py).
  validate {"bench":"validate","nfs":2,"handoff":H,"on_mpps":X,
         "off_mpps":Y,"cost_pct":Z}: the chain bench's chain of 2 with
         the manager's descriptor checks (--validate on, the default) and
         without, H = direct (NFs hand packets to each other) and worker
         (every hop through the worker, which checks every packet).
  tenants {"bench":"tenants","tenants":N,"mpps":X,"per_tenant_mpps":[..],
         "min_max":R,"cv":C}: N = 1, 2, 4, 8, 10 tenants on one port
         sliced by VLAN (equal shares), each with its own trust group,
         forward NF and chain; X = their sum; R = slowest / fastest tenant,
         C = coefficient of variation (bench/tenants.py). Then
         {"bench":"tenant_fairness",...}: blue's throughput and latency
         with red flooded against red quiet (target ratio 1.1) and red's
         CPU share (target 0.25) (tests/fairness.py's tenants).
  group_port {"bench":"group_port","handoff":H,"on_mpps":X,"off_mpps":Y,
         "cost_pct":Z}: a trust group's port (net_pcap, 64-byte frames)
         into a forward NF of the group and out of a port, --validate on
         (the port's driver reads the manager's headers: mgr/trust/port_headers.h) and
         off, H = direct (the NF sends) and worker (the worker sends,
         from the manager's headers too) (bench/trust.py).
  spinner {"bench":"spinner","alone_mpps":A,"with_spinner_mpps":S,
         "ratio":R,"target_ratio":0.25,"long_yields":N}: net_null -> one
         forward NF -> net_null, the manager's worker and the NF on one
         core, alone and with a busy loop pinned to that core
         (interleaved runs); R = S / A; N = the NF's yields that lasted a
         time slice, after which it waits on its doorbell instead
         (lib/common/zn_yield.h) (bench/spinner.py).
  vm     {"bench":"vm","mode":"host|guest_zero_copy|guest_vhost",
         "accel":"kvm|tcg","nfs":N,"size":B,"mpps":X,"ns_per_hop":Y}: a
         chain of N = 1, 2 forward NFs between the speed tester's hands
         (512 packets circulating, B = 64 and 1500): host processes of
         trust group a, each in a QEMU guest mapping a's file (ivshmem,
         zero copy), or each an untrusted VM on a vhost-user port
         (virtio-net, copies); ns_per_hop = 1e3 / X / N. Then
         {"bench":"vm_ratio","accel":A,"nfs":N,"size":B,
         "zero_copy_vs_host":R,"zero_copy_vs_vhost":V} and
         {"bench":"vm_idle","mode":M,"accel":A,"cpu_pct":C}: one idle
         forward NF, its process or its VM (QEMU and helper)
         (bench/vm.py; accel: --accel auto, docs/vm-nfs.md).
  k8s    {"bench":"k8s","nodes":N,"nfs":M,"reconcile_s":X,
         "pod_to_first_packet_ms":Y}: the operator with N = 100 kwok nodes
         and M = 10 N NF pods (10 NetworkFunctions), from created to all
         reconciled and running; and on the test cluster's real node, from
         a NetworkFunction created to its NF's first packet (bench/k8s.py;
         it brings the cluster up and down when it is not up).
"""

from __future__ import annotations

import argparse
import shutil
import sys

from common import TMP, emit, log
from apps import bench_dpi, bench_flowmon, bench_route_load, bench_router
from k8s import bench_k8s
from dataplane import bench_chain, bench_flowdir, bench_flowtable, \
    bench_idle, bench_latency, bench_lb, bench_p2p
from nfs2 import bench_firewall, bench_lb_nf, bench_nat, bench_ratelimit
from peers import bench_peers
from sdn import bench_sdn
from soak import bench_soak
from spinner import bench_spinner
from tenants import bench_tenants
from trust import bench_group_port, bench_trust, bench_validate
from vm import bench_vm
from xhost import bench_xhost


def bench_lb_all(runs: int) -> None:
    bench_lb(runs)     # the platform's balancing of replicas
    bench_lb_nf(runs)  # the L4 load balancer NF


def bench_nf_start(runs: int) -> None:
    from nf_start import bench_nf_start as run
    run(runs, TMP, emit, log)


BENCHES = {"chain": bench_chain, "latency": bench_latency,
           "p2p": bench_p2p, "idle": bench_idle, "dpi": bench_dpi,
           "router": bench_router, "route_load": bench_route_load,
           "soak": bench_soak, "flowmon": bench_flowmon,
           "flowtable": bench_flowtable, "flowdir": bench_flowdir,
           "lb": bench_lb_all, "nf_start": bench_nf_start,
           "peers": bench_peers,
           "trust": bench_trust, "validate": bench_validate,
           "tenants": bench_tenants, "group_port": bench_group_port,
           "vm": bench_vm, "spinner": bench_spinner, "sdn": bench_sdn,
           "xhost": bench_xhost, "k8s": bench_k8s,
           "firewall": bench_firewall, "ratelimit": bench_ratelimit,
           "nat": bench_nat}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", choices=sorted(BENCHES))
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    try:
        for name, fn in BENCHES.items():
            if a.only in (None, name):
                fn(a.runs)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""peers: ZeroNF against dpdk-testpmd, OVS-DPDK and the Linux kernel, on
the same machine, in one run.

  {"bench":"peers","system":S,"scenario":C,"size":B,"mpps":X}

  S = zeronf       net_null -> one forward NF -> net_null (the manager's
                   worker and the NF float over the CPUs, as in p2p)
      zeronf-nf_rx the same, the NF owning net_null0's RX queue
                   (--nf-rx-queues 1: run to completion, p2p "nf_rx")
      zeronf-bundle the same, the NF run by zeronf-bundle (p2p "bundle")
      testpmd-io   dpdk-testpmd, io forwarding, one forwarding core
      testpmd-mac  the same, mac forwarding (rewrites the MAC addresses)
      ovs-dpdk     Debian's OVS 3.1 with DPDK (ovs-vswitchd-dpdk), started
                   in a private directory with its own ovsdb, one PMD
                   thread (pmd-cpu-mask core 1), the same vdevs as ports
      kernel       two network namespaces whose veth pairs meet in a Linux
                   bridge in a third (Europa's kernel baseline): a raw
                   AF_PACKET sender (bench/kernel_send.c, sendmmsg, qdisc
                   bypassed; there is no pktgen module here) in one, packets
                   counted on arrival in the other
  C = p2p          one port to the other (for OVS one OpenFlow rule
                   in_port=p0 -> p1); every system
      flows100k    100,000 distinct UDP flows (one packet each, net_pcap
                   replaying the trace from memory), each steered by its
                   own exact-match rule: ZeroNF's flow table (flow.add, to
                   the forward NF and out), OVS with 100,000 OpenFlow
                   rules on the 5-tuple; zeronf and ovs-dpdk
  B = 64, 512, 1500: frame bytes (net_null's size=, the trace's frames,
      the sender's frames)

Each run measures every (system, scenario, size) once, in turn, so that a
noisy machine affects all alike; mpps is the median of the runs (3 s of
packets counted at the output port, after 1 s of warm-up). The issue's
targets, read from these lines: zeronf p2p >= 2x ovs-dpdk p2p, zeronf
flows100k >= 1.5x ovs-dpdk flows100k. scripts/plot_perf.py draws them.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from common import TMP, emit, log
from dataplane import N_FLOWS, flowdir_once, flows_trace, testpmd_once, \
    zeronf_p2p_once
from harness import BUILD, HUGE_DIR
from zeronf import runtime_dir

SIZES = (64, 512, 1500)
SECONDS = 3.0
OVS_VSWITCHD = Path("/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk")
OVS_SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")


def null_ports(size: int) -> list[str]:
    return [f"net_null0,size={size}", f"net_null1,size={size},no-rx=1"]


# ---------------------------------------------------------------- OVS
class Ovs:
    """An OVS-DPDK of its own: ovsdb-server and ovs-vswitchd-dpdk with
    their database, sockets, logs and pid files in a private directory,
    DPDK with its own file prefix; nothing of the host's OVS (if any) is
    used or touched. A context manager: stopped and cleaned up after."""

    def __init__(self, ports: list[str]):
        self.dir = Path(TMP) / f"ovs{os.getpid()}-{time.monotonic_ns()}"
        self.dir.mkdir(parents=True)
        self.prefix = f"znovs{os.getpid()}"
        self.env = {**os.environ, "OVS_RUNDIR": str(self.dir),
                    "OVS_LOGDIR": str(self.dir), "OVS_DBDIR": str(self.dir),
                    "OVS_SYSCONFDIR": str(self.dir)}
        self.ports = ports
        self.db = f"unix:{self.dir}/db.sock"

    def run(self, *cmd: str, timeout: float = 120) -> str:
        r = subprocess.run(list(cmd), env=self.env, capture_output=True,
                           text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[:3])}...: {r.stderr.strip()}"
                               f"\n{self.log_tail()}")
        return r.stdout

    def vsctl(self, *args: str) -> str:
        return self.run("ovs-vsctl", f"--db={self.db}", *args)

    def log_tail(self) -> str:
        log_file = self.dir / "vswitchd.log"
        return "\n".join(log_file.read_text().splitlines()[-5:]) \
            if log_file.exists() else ""

    def __enter__(self) -> "Ovs":
        d = self.dir
        self.run("ovsdb-tool", "create", f"{d}/conf.db", str(OVS_SCHEMA))
        self.run("ovsdb-server", f"{d}/conf.db", f"--remote=punix:{d}/db.sock",
                 f"--pidfile={d}/ovsdb.pid", "--detach",
                 f"--log-file={d}/ovsdb.log", f"--unixctl={d}/ovsdb.ctl")
        self.vsctl("--no-wait", "init")
        self.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                   "other_config:dpdk-init=true",
                   f"other_config:dpdk-extra=--no-pci "
                   f"--file-prefix={self.prefix} --log-level=error",
                   "other_config:dpdk-socket-mem=512",
                   "other_config:dpdk-socket-limit=512",
                   "other_config:dpdk-lcore-mask=0x1",
                   "other_config:pmd-cpu-mask=0x2")
        self.run(str(OVS_VSWITCHD), self.db, f"--pidfile={d}/vswitchd.pid",
                 "--detach", f"--log-file={d}/vswitchd.log",
                 f"--unixctl={d}/vswitchd.ctl")
        self.vsctl("add-br", "br0", "--", "set", "bridge", "br0",
                   "datapath_type=netdev")
        self.run("ovs-ofctl", "del-flows", "br0")
        return self

    def start(self, flows: list[str]) -> None:
        """Install @flows (OpenFlow port numbers: port i is i + 1), then
        add the ports, the receiving one first: traffic starts with every
        rule in place (100,000 rules added under traffic took minutes of
        upcalls)."""
        f = self.dir / "flows.txt"
        f.write_text("\n".join(flows) + "\n")
        self.run("ovs-ofctl", "add-flows", "br0", str(f), timeout=600)
        for i in reversed(range(len(self.ports))):
            self.vsctl("add-port", "br0", f"p{i}", "--", "set", "Interface",
                       f"p{i}", "type=dpdk", f"ofport_request={i + 1}",
                       f"options:dpdk-devargs={self.ports[i]}")

    def port_counts(self, port: str) -> tuple[int, int]:
        """(rx, tx) packets of @port, read live from the datapath."""
        out = self.run("ovs-ofctl", "dump-ports", "br0", port)
        rx = int(out.split("rx pkts=")[1].split(",")[0])
        tx = int(out.split("tx pkts=")[1].split(",")[0])
        return rx, tx

    def dp_flows(self) -> int:
        """Flows in the datapath's megaflow cache now."""
        out = self.run("ovs-appctl", "-t", f"{self.dir}/vswitchd.ctl",
                       "upcall/show")
        return int(out.split("(current ")[1].split(")")[0])

    def warm(self, flows: int, limit_s: float = 120.0) -> None:
        """Until the datapath holds @flows megaflows: OVS's dynamic flow
        limit starts near 10,000 and grows each revalidator round, and
        until then it evicts megaflows and misses (0.3 Mpps measured
        during the first 10 s of 100,000 flows). Its steady state is what
        is compared."""
        t0 = time.monotonic()
        while self.dp_flows() < 0.95 * flows:
            if time.monotonic() - t0 > limit_s:
                log(f"ovs: {self.dp_flows()} datapath flows after "
                    f"{limit_s:.0f} s (of {flows}): measured as it is")
                return
            time.sleep(1.0)
        log(f"ovs: {self.dp_flows()} datapath flows after "
            f"{time.monotonic() - t0:.0f} s")

    def rate(self, seconds: float) -> float:
        time.sleep(1.0)  # warm up (PMD assignment, caches)
        t0, (rx0, a) = time.monotonic(), (self.port_counts("p0")[0],
                                          self.port_counts("p1")[1])
        time.sleep(seconds)
        t1, (rx1, b) = time.monotonic(), (self.port_counts("p0")[0],
                                          self.port_counts("p1")[1])
        if rx1 - rx0 > 0 and (b - a) < 0.99 * (rx1 - rx0):
            log(f"ovs: only {b - a} of {rx1 - rx0} packets out "
                "(rules missed?)")
        return (b - a) / (t1 - t0) / 1e6

    def __exit__(self, *exc) -> None:
        d = self.dir
        for ctl in ("vswitchd.ctl", "ovsdb.ctl"):
            subprocess.run(["ovs-appctl", "-t", f"{d}/{ctl}", "exit"],
                           env=self.env, capture_output=True, timeout=30)
        for pidf in ("vswitchd.pid", "ovsdb.pid"):
            try:
                pid = int((d / pidf).read_text())
                os.kill(pid, 9)
            except (OSError, ValueError):
                pass
        shutil.rmtree(runtime_dir(self.prefix), ignore_errors=True)
        for f in HUGE_DIR.glob(f"{self.prefix}map_*"):
            f.unlink(missing_ok=True)
        shutil.rmtree(d, ignore_errors=True)


def ovs_p2p_once(size: int) -> float:
    with Ovs(null_ports(size)) as o:
        o.start(["in_port=1,actions=output:2"])
        return o.rate(SECONDS)


def ovs_flows_once(size: int) -> float:
    trace = flows_trace(size)
    with Ovs([f"net_pcap0,rx_pcap={trace},infinite_rx=1",
              "net_null0,no-rx=1"]) as o:
        o.start([f"in_port=1,udp,nw_src=10.0.{i >> 8 & 255}.{i & 255},"
                 f"nw_dst=10.1.0.1,tp_src={1024 + i % 50000},tp_dst=80,"
                 "actions=output:2" for i in range(N_FLOWS)])
        o.warm(N_FLOWS)
        return o.rate(SECONDS)


# ---------------------------------------------------------------- kernel
def sh(*cmd: str) -> str:
    return subprocess.run(list(cmd), check=True, capture_output=True,
                          text=True, timeout=60).stdout


def kernel_once(size: int) -> float:
    """A -- veth -- [bridge in S] -- veth -- B; the sender in A, packets
    counted on B's interface."""
    tag = f"zn{os.getpid() % 100000}"
    a, b, s = f"{tag}a", f"{tag}b", f"{tag}s"
    try:
        for ns in (a, b, s):
            sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", "vA", "netns", a, "type", "veth", "peer",
           "name", "pA", "netns", s)
        sh("ip", "link", "add", "vB", "netns", b, "type", "veth", "peer",
           "name", "pB", "netns", s)
        sh("ip", "-n", s, "link", "add", "name", "zbr", "type", "bridge")
        for dev in ("pA", "pB"):
            sh("ip", "-n", s, "link", "set", "dev", dev, "master", "zbr")
        for dev in ("pA", "pB", "zbr"):
            sh("ip", "-n", s, "link", "set", "dev", dev, "up")
        sh("ip", "-n", a, "link", "set", "dev", "vA", "address",
           "02:00:00:00:00:01", "up")
        sh("ip", "-n", b, "link", "set", "dev", "vB", "address",
           "02:00:00:00:00:02", "up")
        time.sleep(0.5)

        def received() -> int:
            return int(sh("ip", "netns", "exec", b, "cat",
                          "/sys/class/net/vB/statistics/rx_packets"))
        # Warm-up, then the measured send.
        sender = str(BUILD / "bench/zn-kernel-send")
        sh("ip", "netns", "exec", a, sender, "vA", str(size), "1")
        r0, t0 = received(), time.monotonic()
        sh("ip", "netns", "exec", a, sender, "vA", str(size), str(SECONDS))
        r1, t1 = received(), time.monotonic()
        return (r1 - r0) / (t1 - t0) / 1e6
    finally:
        for ns in (a, b, s):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


# ---------------------------------------------------------------- suite
def cases() -> list[tuple[str, str, object]]:
    """(system, scenario, measure(size) -> Mpps), in the order run."""
    return [
        ("zeronf", "p2p", lambda b: zeronf_p2p_once(SECONDS, null_ports(b))),
        ("zeronf-nf_rx", "p2p",
         lambda b: zeronf_p2p_once(SECONDS, null_ports(b), "nf_rx")),
        ("zeronf-bundle", "p2p",
         lambda b: zeronf_p2p_once(SECONDS, null_ports(b), "bundle")),
        ("testpmd-io", "p2p",
         lambda b: testpmd_once(SECONDS, null_ports(b), "io")),
        ("testpmd-mac", "p2p",
         lambda b: testpmd_once(SECONDS, null_ports(b), "mac")),
        ("ovs-dpdk", "p2p", ovs_p2p_once),
        ("kernel", "p2p", kernel_once),
        ("zeronf", "flows100k",
         lambda b: flowdir_once("flow_table", SECONDS, b)),
        ("ovs-dpdk", "flows100k", ovs_flows_once),
    ]


def check_tools() -> None:
    missing = [str(p) for p in (OVS_VSWITCHD, OVS_SCHEMA) if not p.exists()]
    missing += [t for t in ("dpdk-testpmd", "ovsdb-server", "ovs-vsctl",
                            "ovs-ofctl", "ip") if shutil.which(t) is None]
    if missing:
        raise RuntimeError(f"peers needs {', '.join(missing)}: `make bench` "
                           "installs them (scripts/setup.sh --bench)")


def bench_peers(runs: int) -> None:
    check_tools()
    res: dict[tuple[str, str, int], list[float]] = {}
    for r in range(runs):
        for size in SIZES:
            for system, scenario, fn in cases():
                x = fn(size)
                res.setdefault((system, scenario, size), []).append(x)
                log(f"peers run {r + 1}: {system} {scenario} {size} B: "
                    f"{x:.3f} Mpps")
    for size in SIZES:
        for system, scenario, _ in cases():
            emit({"bench": "peers", "system": system, "scenario": scenario,
                  "size": size, "mpps": round(statistics.median(
                      res[(system, scenario, size)]), 4)})
    for size in SIZES:
        for scenario in ("p2p", "flows100k"):
            zn = statistics.median(res[("zeronf", scenario, size)])
            ovs = statistics.median(res[("ovs-dpdk", scenario, size)])
            log(f"peers {scenario} {size} B: zeronf / ovs-dpdk = "
                f"{zn / ovs:.2f}")

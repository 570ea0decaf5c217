"""ZeroNF's CNI plugin (k8s/cni) on the cluster, through Multus: ordinary
pods get a second interface on a ZeroNF port of their node's manager (a
NetworkAttachmentDefinition of type zeronf, addresses from Debian's static
IPAM plugin), their kernel TCP crosses the manager, and deleting them
gives the pairs back with nothing left in the pods' place."""
from __future__ import annotations

import json
import subprocess

from kube import (APP_PORTS, POOL, TCPCHECK, agent_pod, app_pod, apply, kget,
                  kubectl, mgr_call, nad, wait)

NODE = "znk-node1"


def attachments(node: str = NODE) -> list[dict]:
    out = kubectl("exec", "-n", "zeronf-system", agent_pod(node), "-c",
                  "agent", "--", "/usr/local/bin/zeronf-node",
                  "attachments").stdout
    return json.loads(out)


def node_links(node: str = NODE) -> dict[str, str]:
    """The node's pool links and their state (UP or DOWN)."""
    r = subprocess.run(["ip", "-n", node, "-o", "link", "show"],
                       capture_output=True, text=True, check=True)
    out = {}
    for ln in r.stdout.splitlines():
        name = ln.split(":")[1].strip().split("@")[0]
        if name.startswith(POOL):
            out[name] = "UP" if ",UP" in ln.split(">")[0] else "DOWN"
    return out


def port_id(name: str) -> int:
    for p in mgr_call(NODE, "port.list")["ports"]:
        if p["name"] == name:
            return p["port"]
    raise AssertionError(f"no port {name}")


def port_rx(name: str) -> int:
    return next(p["rx"] for p in mgr_call(NODE, "port.list")["ports"]
                if p["name"] == name)


def test_pods_on_zeronf_ports_talk_tcp_through_the_manager(zeronf):
    kubectl("delete", "pod", "zsrv", "zcli", "--ignore-not-found",
            "--wait=true")
    apply(nad())
    before = node_links()
    assert len(before) == 2 * APP_PORTS and all(
        before[f"{POOL}{i}"] == "UP" for i in range(APP_PORTS)), before
    apply(app_pod("zsrv", "10.200.0.2/24",
                  [TCPCHECK, "serve", "-listen", ":7100"]))
    wait(lambda: kget("pod", "zsrv").get("status", {}).get("phase")
         == "Running", 120, "server pod running")
    # Multus' record of the pod's networks: net1 on zeronf, its address
    st = json.loads(kget("pod", "zsrv")["metadata"]["annotations"]
                    ["k8s.v1.cni.cncf.io/network-status"])
    z = [n for n in st if n.get("interface") == "net1"]
    assert z and z[0]["ips"] == ["10.200.0.2"], st
    att = attachments()
    assert [(a["podName"], a["ifName"], a["ips"]) for a in att] == \
        [("zsrv", "net1", ["10.200.0.2/24"])], att
    srv_port = att[0]["port"]
    assert srv_port + "-pod" not in node_links(), "the pod end left the node"

    apply(app_pod("zcli", "10.200.0.3/24", ["/bin/sleep", "600"]))
    wait(lambda: kget("pod", "zcli").get("status", {}).get("phase")
         == "Running", 120, "client pod running")
    cli_port = next(a["port"] for a in attachments() if a["podName"] == "zcli")
    assert cli_port != srv_port
    # the two ports cross-connected through the manager
    mgr_call(NODE, "chain.set", {"port": port_id(cli_port),
                                 "hops": [f"port:{port_id(srv_port)}"]})
    mgr_call(NODE, "chain.set", {"port": port_id(srv_port),
                                 "hops": [f"port:{port_id(cli_port)}"]})
    rx0 = port_rx(cli_port)
    r = kubectl("exec", "zcli", "--", TCPCHECK, "send", "-to",
                "10.200.0.2:7100", "-bytes", str(4 << 20), "-conns", "2",
                timeout=180, check=False)
    ports = [p for p in mgr_call(NODE, "port.list")["ports"]
             if p["name"] in (cli_port, srv_port)]
    assert r.returncode == 0 and \
        json.loads(r.stdout.splitlines()[-1])["ok"] == 2, (r.stdout, r.stderr, ports)
    # 8 MB in segments of at most 1448 bytes crossed the client's port
    assert port_rx(cli_port) - rx0 > (8 << 20) // 1448

    kubectl("delete", "pod", "zsrv", "zcli", "--wait=true")
    wait(lambda: attachments() == [], 60, "the attachments gone")
    after = node_links()
    assert set(after) == set(before), (before, after)
    for i in range(APP_PORTS):
        assert after[f"{POOL}{i}-pod"] == "DOWN", after
    for p in (cli_port, srv_port):
        mgr_call(NODE, "chain.set", {"port": port_id(p), "hops": []})
    kubectl("delete", "network-attachment-definition", "zeronf")


def test_a_pod_beyond_the_pool_waits_with_the_reason(zeronf):
    """Four pairs of the node are for any namespace's pods (two more are
    tenant blue's): a fifth pod is not started though blue's are free,
    its events say why; it starts once a pair is free."""
    names = [f"zp{i}" for i in range(5)]
    kubectl("delete", "pod", *names, "--ignore-not-found", "--wait=true")
    apply(nad())
    for i, n in enumerate(names[:4]):
        apply(app_pod(n, f"10.200.1.{i + 2}/24", ["/bin/sleep", "600"]))
    for n in names[:4]:
        wait(lambda: kget("pod", n).get("status", {}).get("phase")
             == "Running", 120, f"{n} running")
    apply(app_pod(names[4], "10.200.1.9/24", ["/bin/sleep", "600"]))

    def refused() -> bool:
        ev = kget("events", "--field-selector",
                  f"involvedObject.name={names[4]}")["items"]
        return any('every pair of pool "znapp" that namespace "default" '
                   'may have is in a pod' in e.get(
            "message", "") for e in ev)
    wait(refused, 120, "the fifth pod's sandbox refused, saying why")
    assert kget("pod", names[4])["status"]["phase"] == "Pending"
    kubectl("delete", "pod", names[0], "--wait=true")
    wait(lambda: kget("pod", names[4]).get("status", {}).get("phase")
         == "Running", 180, "the fifth pod running once a pair is free")
    kubectl("delete", "pod", *names[1:], "--wait=true")
    wait(lambda: attachments() == [], 60, "the attachments gone")
    kubectl("delete", "network-attachment-definition", "zeronf")

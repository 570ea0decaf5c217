"""Every control method under mutated parameters: valid requests with
values of the wrong type, out of range, oversized, missing or extra keys,
at random (fixed seed). Each request gets a result or an error with a
negative errno code and a message; the manager keeps answering, and once
the rules and flows that valid mutations added are deleted again, its
DPDK heap holds what it held before (no leak on any error path)."""

from __future__ import annotations

import copy
import errno
import json
import random
import socket

from harness import NF_BIN, wait_for
from zeronf import runtime_dir

FLOW = {"proto": "udp", "src": "10.0.0.1", "dst": "10.0.0.2", "sport": 1,
        "dport": 2}
# One valid request per method taking parameters (the mutations' seeds).
VALID = {
    "chain.set": {"hops": ["svc:1", "port:0"]},
    "flow.add": {"flows": [{"flow": FLOW, "chain": ["svc:1", "port:0"],
                            "both": True}]},
    "flow.del": {"flows": [{"flow": FLOW, "both": True}]},
    "flow.list": {"limit": 10},
    "rule.add": {"match": {"proto": "tcp", "src": "10.1.0.0/16",
                           "dport": "80-90", "ip": 4},
                 "chain": ["svc:1", "drop"], "priority": 5},
    "rule.del": {"id": 1},
    "service.set": {"service": 1, "lb": "weighted", "weights": {"0": 3}},
    "rx.set": {"enabled": True},
    # A launch that fails at once (a bad NF option: exit 2, never
    # restarted): the launcher's paths, no NF left running.
    "nf.start": {"name": "fz", "binary": str(NF_BIN["forward"]),
                 "service": 2, "replicas": 1, "restart": "never",
                 "args": ["--no-such-option"], "cpus": "0"},
    "nf.scale": {"name": "fz", "replicas": 0},
    "nf.restart": {"name": "fz"},
    "nf.remove": {"name": "fz"},
    "event.list": {"since": 0, "limit": 5},
    "event.add": {"type": "fz", "message": "m"},
    # The OpenFlow table (mgr/sdn): a batch of mods, stats, a packet-out
    "of.flow_mod": {"mods": [
        {"command": "add", "priority": 7, "cookie": "0x5",
         "match": {"in_port": 1, "eth_type": 2048, "ip_proto": 6,
                   "ipv4_src": "10.0.0.0/8", "tcp_dst": 80,
                   "tcp_flags": "0x2/0x12", "eth_dst": "02:00:00:00:00:01"},
         "idle_timeout": 30, "flags": 1,
         "actions": {"type": "chain", "steps": ["svc:1", "port:0"]}},
        {"command": "delete", "match": {"eth_type": 2048},
         "cookie": "0x5", "cookie_mask": "0xff", "out_port": 1}]},
    "of.flows": {"match": {"in_port": 1}, "strict": False, "priority": 7,
                 "out_port": 1, "cookie": "0x5", "cookie_mask": "0xf",
                 "limit": 5},
    "of.endpoint": {"controllers": ["tcp:127.0.0.1:1"], "fail": "standalone",
                    "listen": "127.0.0.1:0"},
}
# Read-only methods without parameters get junk parameters too.
NO_PARAMS = ["version", "help", "status", "port.list", "nf.list",
             "service.list", "stats", "chain.get", "rule.list",
             "launch.list", "schema", "of.table", "of.endpoint"]

JUNK = [None, True, False, 0, -1, 1, 255, 256, 65535, 65536, 2**31, 2**32,
        2**63, -2**63, 2**64, 1e308, -1e308, 0.5, "", "x" * 5000, "svc:",
        "svc:99999999999", "port:-1", "10.0.0.0/40", "::/129", "1-0",
        "0-65536", "\u00e9\u4e2d", "a\u0000b", [], [None], [[[]]],
        {}, {"": None}, {"flow": None}, ["svc:1"] * 40]


def paths(obj):
    """Every (container, key) in a parameter tree."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield obj, k
            yield from paths(v)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield obj, i
            yield from paths(v)


def junk(rnd: random.Random):
    return copy.deepcopy(rnd.choice(JUNK))  # never shared: may be mutated


def mutate(params: dict, rnd: random.Random):
    p = copy.deepcopy(params)
    for _ in range(rnd.randint(1, 3)):
        where = list(paths(p))
        op = rnd.random()
        if not where or op < 0.05:
            return junk(rnd)           # params not even an object
        obj, key = rnd.choice(where)
        if op < 0.65:
            obj[key] = junk(rnd)
        elif op < 0.8 and isinstance(obj, dict):
            del obj[key]
        elif isinstance(obj, dict):
            obj["x" + str(rnd.randint(0, 9))] = junk(rnd)
        else:
            obj.append(junk(rnd))
    return p


def heap_alloc(instance: str) -> int:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(f"{runtime_dir(instance)}/dpdk_telemetry.v2")
    s.recv(4096)  # greeting
    s.send(b"/eal/heap_info,0")
    info = json.loads(s.recv(1 << 20))["/eal/heap_info"]
    s.close()
    return int(info["Alloc_size"])


def clean(c) -> None:
    """Back to no rules, no flows, the default chain and hash balancing."""
    for r in c.call("rule.list")["rules"]:
        c.call("rule.del", id=r["id"])
    flows = c.call("flow.list", limit=100000)["flows"]
    if flows:
        c.call("flow.del", flows=[{"flow": f["flow"]} for f in flows])
    c.call("chain.set", hops=["svc:1", "port:0"])
    c.call("service.set", service=1, lb="hash")
    c.call("of.flow_mod", mods=[{"command": "delete", "match": {}}])
    c.call("of.endpoint", off=True)
    for spec in c.call("launch.list")["launched"]:
        if not spec["removing"]:  # one being removed goes by itself
            c.call("nf.remove", name=spec["name"])
    wait_for(lambda: not c.call("launch.list")["launched"], 20,
             "launched NFs removed")


def test_mutated_requests(managers):
    m = managers(chain="1,port:0", ports=["net_null0,no-rx=1"],
                 rx_paused=True)
    m.start_nf("forward", 1)
    rnd = random.Random(20261123)
    with m.client() as c:
        # Warm up every path once (ACL contexts, chains), then measure.
        for method, params in VALID.items():
            c.send_raw(json.dumps({"id": 0, "method": method,
                                   "params": params}).encode())
        clean(c)
        base = heap_alloc(m.name)
        ok = errors = 0
        for i in range(5000):
            if i % 10 == 9:
                method = rnd.choice(NO_PARAMS)
                params = mutate({"x": 1}, rnd)
            else:
                method = rnd.choice(sorted(VALID))
                params = mutate(VALID[method], rnd)
            line = json.dumps({"id": i, "method": method,
                               "params": params}).encode()
            reply = c.send_raw(line)
            # A request that does not parse (jansson refuses integers
            # beyond 64 bits) has no id to answer with: JSON-RPC's null.
            assert reply.get("id") == i or (
                reply.get("id") is None and
                reply["error"]["code"] == -errno.EBADMSG), (line, reply)
            if "error" in reply:
                err = reply["error"]
                assert isinstance(err["code"], int) and err["code"] < 0, \
                    (line, reply)
                assert err["message"], (line, reply)
                errors += 1
            else:
                assert "result" in reply, (line, reply)
                ok += 1
        assert errors > 2000 and ok > 150, (ok, errors)  # both kinds ran
        clean(c)
        st = c.call("status")
        assert st["ready"] and st["pool"]["in_use"] == 0
        assert heap_alloc(m.name) == base
    assert m.proc.alive()
    assert [n["service"] for n in m.call("nf.list")["nfs"]] == [1]

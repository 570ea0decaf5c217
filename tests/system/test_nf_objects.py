"""What an NF makes in DPDK's shared memory (flow tables, LPM tables)
outlives its process. The manager frees what a dead NF left
(zn_nf_obj_track), so an NF killed with kill -9 can be restarted again and
again within the manager's --mem; an NF that leaves normally frees its own
and the manager frees nothing twice."""

from __future__ import annotations

import signal
import time

import pytest

from harness import scaled, wait_for

# Each of these NFs holds over half of what a 256 MB manager has free
# (measured: twice the capacity does not fit): if a dead one's table were
# not freed, the second start would fail.
BIG = {
    "dpi": (["-c", "400000"], 1),
    "flowmon": (["-c", "600000"], 1),
    "monitor": (["--flow-capacity", "1000000"], 1),
}


def registry(m) -> dict:
    return m.call("status")["registry"]


def kill9(m, nf) -> None:
    nf.proc.signal(signal.SIGKILL)
    nf.proc.wait(5)
    wait_for(lambda: m.nf_by_pid(nf.proc.pid) is None, 5, "dead NF gone")


@pytest.mark.parametrize("kind", sorted(BIG))
def test_killed_nf_tables_are_freed(managers, tmp_path, kind):
    args, n_objs = BIG[kind]
    if kind == "monitor":
        args = args + ["--flows", str(tmp_path / "flows.json")]
    m = managers(ports=["net_null0,no-rx=1"], chain="1,port:0",
                 args=["--mem", "256"])
    for i in range(4):
        nf = m.start_nf(kind, 1, f"{kind}{i}", nf_args=args)
        kill9(m, nf)
    assert registry(m)["objs_freed"] == n_objs * 4
    # A clean stop: the NF frees its own table, the manager nothing more.
    nf = m.start_nf(kind, 1, f"{kind}_last", nf_args=args)
    nf.proc.signal(signal.SIGTERM)
    assert nf.proc.wait(20) == 0
    wait_for(lambda: m.nf_by_pid(nf.proc.pid) is None, 5, "NF gone")
    assert registry(m)["objs_freed"] == n_objs * 4
    assert registry(m)["died"] == 4
    assert m.shutdown() == 0
    assert "which is gone" not in m.proc.output()


def test_killed_router_tables_are_freed(managers, tmp_path):
    """The router's tables (rte_fib, rte_fib6 and the next-hop hash, kept
    for live route changes), tracked by the NF itself. An rte_fib's node
    pool is a mempool populated by the NF: the manager frees it with its
    own chunk callback (the NF's is at the NF's address)."""
    routes = tmp_path / "routes.txt"
    routes.write_text("".join(f"10.{i // 256}.{i % 256}.0/24 {i % 7}\n"
                              for i in range(20000)) +
                      "".join(f"2001:db8:{i:x}::/48 {i % 5}\n"
                              for i in range(2000)))
    m = managers(ports=["net_null0,no-rx=1"], chain="1,port:0",
                 args=["--mem", "256"])
    for i in range(3):
        nf = m.start_nf("router", 1, f"rt{i}",
                        nf_args=["--routes", str(routes),
                                 "--default-port", "0"])
        kill9(m, nf)
    assert registry(m)["objs_freed"] == 3 * 3
    assert m.shutdown() == 0
    assert "which is gone" not in m.proc.output()


def test_nfs_with_tables_stop_together_at_once(managers):
    """Four NFs that free their flow tables as they stop, all at the same
    time: no free returns pages to the system (the manager reserves its
    memory at start), so none waits for the others over DPDK's
    multi-process channel (measured before: 5-10 s)."""
    m = managers(ports=["net_null0,no-rx=1"], chain="1,port:0",
                 args=["--mem", "512"])
    nfs = [m.start_nf("dpi", 1, f"d{i}", nf_args=["-c", "100000"])
           for i in range(4)]
    for nf in nfs:
        nf.proc.signal(signal.SIGTERM)
    for nf in nfs:
        assert nf.proc.wait(scaled(20)) == 0
    assert registry(m)["exited"] == 4
    assert registry(m)["objs_freed"] == 0  # each freed its own
    assert m.shutdown() == 0


def test_manager_frees_only_what_the_entry_names(managers):
    """The slot's object list is written by the NF: the manager frees an
    object only if its name leads to the recorded address, as the recorded
    type. A wrong address, a wrong type, a name nothing has: logged, not
    freed; the real entry next to them is freed."""
    m = managers(ports=["net_null0,no-rx=1"], chain="1,port:0")
    nf = m.start_nf("test-objs", 1, "objs", nf_args=[
        "--make", "objs_real", "--spare", "objs_spare", "--junk"])
    kill9(m, nf)
    assert registry(m)["objs_freed"] == 1
    out = m.proc.output()
    for name in ("objs_spare", "no_such_lpm"):
        assert f"left object '{name}'" in out
    check = m.start_nf("test-objs", 1, "check", nf_args=[
        "--check", "objs_spare", "--make", "objs_real"])
    # objs_real was freed (so it can be made again), objs_spare was not.
    wait_for(lambda: "objs_spare: present" in check.proc.output(), 10,
             "the check NF's answer")
    check.proc.signal(signal.SIGTERM)
    assert check.proc.wait(20) == 0
    assert registry(m)["objs_freed"] == 2  # objs_real, left at exit
    assert m.shutdown() == 0


def heap_in_use(m) -> int:
    """Bytes allocated in the manager's DPDK heap (telemetry)."""
    import json
    import socket
    from zeronf import runtime_dir
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(f"{runtime_dir(m.name)}/dpdk_telemetry.v2")
    s.recv(4096)
    s.send(b"/eal/heap_info,0")
    info = json.loads(s.recv(1 << 20))["/eal/heap_info"]
    s.close()
    return info["Alloc_size"]


def test_nf_starts_leave_nothing_in_the_heap(managers):
    """An NF's EAL made its service-core tables (~152 KB) in the shared
    heap and never freed them: every start of an NF, clean exit or kill
    -9, took that much of the manager's --mem for good (found by the soak
    bench). Ten restarts each way: the heap is where it was."""
    m = managers(ports=["net_null0,no-rx=1"], chain="1,port:0")
    nf = m.start_nf("forward", 1, "f")
    time.sleep(0.2)
    before = heap_in_use(m)
    for i in range(10):
        if i % 2:
            kill9(m, nf)
        else:
            nf.proc.signal(signal.SIGTERM)
            assert nf.proc.wait(10) == 0
            wait_for(lambda: m.nf_by_pid(nf.proc.pid) is None, 5, "gone")
        nf = m.start_nf("forward", 1, "f")
    time.sleep(0.2)
    assert heap_in_use(m) == before

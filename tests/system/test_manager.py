"""Manager start-up and shutdown: bad configuration gets a clear error and
no leftovers; SIGINT/SIGTERM stop it cleanly, NFs included; several
worker threads keep per-flow order."""

from __future__ import annotations

import signal
import subprocess

import pytest

from harness import DATA, MGR_BIN, Proc, unique_name, wait_for
from pcaputil import assert_same_per_flow, read_frames


@pytest.mark.parametrize("args,rc,msg", [
    (["--chain", "1,0"], 2, "bad hop '0'"),
    (["--chain", "port:1"], 2, "names port 1 but only 0 port"),
    (["--ring-size", "1000"], 2, "power of 2"),
    (["--rx-threads", "0"], 2, "--rx-threads must be"),
    (["--rx-threads", "9", "--tx-threads", "9"], 2, "at most 16 threads"),
    (["--ingress", "maybe"], 2, "backpressure or drop"),
    (["-i", "a/b"], 2, "bad instance name"),
    (["--bogus"], 2, "unrecognized option '--bogus'"),
    (["stray"], 2, "unexpected argument"),
    (["-p", "net_nosuchdriver0"], 1, "EAL init failed"),
    (["-p", "net_pcap0,rx_pcap=/nonexistent.pcap"], 1,
     "Couldn't open /nonexistent.pcap"),
    (["--huge-dir", "/tmp"], 1, "not a hugetlbfs mount"),
    (["--pool-size", "16000000", "--mem", "64"], 1, "cannot create a pool"),
    # more hugepage memory than the host has: refused at start, not later
    (["--mem", "1000000"], 1, "--mem is reserved at start"),
])
def test_bad_config(tmp_path, args, rc, msg):
    name = unique_name()
    p = Proc([MGR_BIN, "-i", name, *args], tmp_path / "m.log")
    assert p.wait(30) == rc
    assert msg in p.output()
    from harness import Manager
    m = Manager.__new__(Manager)
    m.name = name
    assert m.leftovers() == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_clean_shutdown(managers, sig):
    m = managers(chain="1,2")
    nfs = [m.start_nf("forward", s) for s in (1, 2)]
    m.proc.signal(sig)
    assert m.proc.wait(15) == 0
    for nf in nfs:
        assert nf.proc.wait(10) == 0  # told to stop: clean exit
    assert "all 16383 packet buffers returned" in m.proc.output()
    assert m.leftovers() == []


@pytest.mark.parametrize("threads", [["--tx-threads", "2"],
                                     ["--rx-threads", "2", "--tx-threads",
                                      "1"]])
def test_several_workers_keep_flow_order(managers, tmp_path, threads):
    traces = [DATA / "pcap/bittorrent.pcap", DATA / "pcap/wikipedia.pcap"]
    out = tmp_path / "out.pcap"
    m = managers(ports=[f"net_pcap0,rx_pcap={traces[0]},tx_pcap={out}",
                        f"net_pcap1,rx_pcap={traces[1]}"],
                 chain="1,2,3,port:0", rx_paused=True, args=threads)
    for s in (1, 2, 3):
        m.start_nf("forward", s)
    workers = {n["worker"] for n in m.call("nf.list")["nfs"]}
    assert len(workers) == 2 or "--rx-threads" in threads
    frames = read_frames(traces[0]) + read_frames(traces[1])
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["tx"] == len(frames),
             30, "all out")
    assert m.shutdown() == 0
    assert_same_per_flow(frames, read_frames(out))


def test_help():
    r = subprocess.run([MGR_BIN, "--help"], capture_output=True, text=True,
                       timeout=10)
    assert r.returncode == 0 and "--chain" in r.stdout

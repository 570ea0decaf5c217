"""libzeronf as a user gets it: install, build the NF of docs/nf-guide.md
out of tree with pkg-config, run it against a manager on a crafted pcap.
Also keeps the guide's code identical to the example file."""

from __future__ import annotations

import re
import shlex
import struct
import subprocess
from pathlib import Path

from harness import BUILD, REPO, Proc, wait_for
from pcaputil import read_frames, write_pcap

EXAMPLE = REPO / "examples/minimal_nf/ttl_guard.c"


def test_guide_shows_the_example_verbatim():
    guide = (REPO / "docs/nf-guide.md").read_text()
    m = re.search(r"<!-- 8< examples/minimal_nf/ttl_guard.c -->\n```c\n"
                  r"(.*?)```\n<!-- >8 -->", guide, re.S)
    assert m, "guide lost its include markers"
    assert m.group(1) == EXAMPLE.read_text()
    assert len(EXAMPLE.read_text().splitlines()) <= 45


def frame(ttl: int, sport: int) -> bytes:
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, 0, 0, ttl, 17, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    udp = struct.pack("!HHHH", sport, 53, 8, 0)
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip + udp + b"\0" * 18


def test_build_and_run_out_of_tree(managers, tmp_path):
    stage = tmp_path / "stage"
    subprocess.run(["meson", "install", "-C", str(BUILD), "--destdir",
                    str(stage), "--quiet"], check=True, timeout=120)
    pcs = list(stage.rglob("zeronf.pc"))
    assert len(pcs) == 1
    # Used where it lies, unedited: the file finds its prefix from its
    # own place (${pcfiledir}), so a --destdir tree works as it is.
    env = {"PKG_CONFIG_PATH": str(pcs[0].parent)}
    inc = subprocess.run(["pkg-config", "--variable=includedir", "zeronf"],
                         check=True, capture_output=True, text=True,
                         env=env).stdout.strip()
    assert (Path(inc) / "zeronf/nf.h").exists(), inc
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "zeronf"],
                           check=True, capture_output=True, text=True,
                           env=env).stdout.split()
    exe = tmp_path / "ttl-guard"
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-std=c11",
                    "-D_GNU_SOURCE", str(EXAMPLE), "-o", str(exe), *flags],
                   check=True, timeout=120)

    frames = [frame(64 if i % 3 else 1, 1000 + i) for i in range(30)]
    pcap, out = tmp_path / "in.pcap", tmp_path / "out.pcap"
    write_pcap(pcap, frames)
    m = managers(ports=[f"net_pcap0,rx_pcap={pcap},tx_pcap={out}"],
                 chain="1,port:0", rx_paused=True)
    libdir = pcs[0].parent.parent
    nf = Proc([exe, "-i", m.name, "-s", "1", "-n", "guard"],
              tmp_path / "guard.log", env={"LD_LIBRARY_PATH": str(libdir)})
    # Running, not only registered: a packet that arrives while the NF is
    # still "starting" finds no instance of its service (dropped, counted).
    wait_for(lambda: (m.nf_by_pid(nf.pid) or {}).get("state") == "running",
             20, "out-of-tree NF running")
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["tx"] == 20, 20,
             "forwarded")
    st = m.wait_idle()
    guard = st["nfs"][0]
    assert guard["counters"]["ttl_expired"] == 10
    assert guard["drops"]["nf"] == 10
    assert m.shutdown() == 0
    assert nf.wait(10) == 0
    nf.close()
    assert read_frames(out) == [f for i, f in enumerate(frames) if i % 3]


def test_build_tree_pkg_config():
    """Against the build tree: PKG_CONFIG_PATH=build finds
    zeronf-uninstalled.pc (the sources' headers, the built library with
    a run path), as docs/nf-guide.md says."""
    env = {"PKG_CONFIG_PATH": str(BUILD)}
    # pkg-config escapes spaces (a clone at a path with spaces): read its
    # output as a shell would.
    out = shlex.split(subprocess.run(
        ["pkg-config", "--cflags", "--libs", "zeronf"], check=True,
        capture_output=True, text=True, env=env).stdout)
    assert f"-I{REPO}/include" in out
    assert f"-L{BUILD}/lib" in out and f"-Wl,-rpath={BUILD}/lib" in out
    assert out.index("-Wl,--no-as-needed") < out.index("-lzeronf")

"""What every benchmark module shares: paths, the scratch directory, how
results and progress are printed."""
from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "bench"))

TMP = Path(tempfile.mkdtemp(prefix="zeronf-bench-"))


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def median(xs: list[float]) -> float:
    return round(statistics.median(xs), 4)


# ---------------------------------------------------------------- idle
def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def cpu_pct(pids: list[int], seconds: float) -> float:
    """% of one core that @pids used together over the next @seconds."""
    hz = os.sysconf("SC_CLK_TCK")
    t0, c0 = time.monotonic(), sum(cpu_ticks(p) for p in pids)
    time.sleep(seconds)
    t1, c1 = time.monotonic(), sum(cpu_ticks(p) for p in pids)
    return 100.0 * (c1 - c0) / hz / (t1 - t0)


# ---------------------------------------------------------------- traces
def udp_frame(src: bytes, dst: bytes, sport: int, dport: int,
              size: int = 60) -> bytes:
    """An Ethernet / IPv4 / UDP frame of @size bytes (zero payload; the
    IPv4 header checksum is right, UDP's is 0: none)."""
    import struct
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, size - 14, 0, 0, 64, 17, 0,
                     src, dst)
    csum = sum(struct.unpack("!10H", ip))
    while csum >> 16:
        csum = (csum & 0xffff) + (csum >> 16)
    ip = ip[:10] + struct.pack("!H", ~csum & 0xffff) + ip[12:]
    fr = (b"\x02\0\0\0\0\x01\x02\0\0\0\0\x02\x08\x00" + ip +
          struct.pack("!HHHH", sport, dport, size - 34, 0))
    return fr + bytes(size - len(fr))

"""The ratelimit NF against a reference token bucket: captures replayed
with their recorded times (--clock capture, the manager's RX timestamps),
so that every packet's verdict is known in advance, exactly, whatever
this machine's speed (the rates it holds in real time are a bench line:
make bench BENCH=ratelimit). Two levels (a class, then each flow in it),
packet and bit rates, the SYN-flood filter as a class, a full key table,
rates changed live, configuration errors."""

from __future__ import annotations

import json
import struct

import pytest

from harness import wait_for
from pcaputil import read_frames, write_pcap

NS = 1_000_000_000


class Bucket:
    """rl.h's bucket, in the same integer units (1e-9 of a packet or
    bit)."""

    def __init__(self, rate: int, burst: int):
        self.rate, self.cap = rate, burst * NS
        self.tokens, self.last = self.cap, 0

    def has(self, cost: int, now: int) -> bool:
        if now > self.last:
            earned = (now - self.last) * self.rate
            self.tokens = self.cap if earned >= self.cap - self.tokens \
                else self.tokens + earned
            self.last = now
        return self.tokens >= cost * NS

    def take(self, cost: int) -> None:
        self.tokens -= cost * NS


def frame(src: str, dst: str, sport: int, dport: int, seq: int,
          size: int = 64, flags: int | None = None) -> bytes:
    """Ethernet/IPv4/UDP (or TCP with @flags) of @size bytes, @seq in the
    payload so that every frame is distinct."""
    proto = 17 if flags is None else 6
    l4 = struct.pack("!HHHH", sport, dport, size - 34, 0) if flags is None \
        else struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, flags,
                         1024, 0, 0)
    hdr = 14 + 20 + len(l4)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, size - 14, 0, 0, 64, proto,
                     0, bytes(map(int, src.split("."))),
                     bytes(map(int, dst.split("."))))
    body = struct.pack("!I", seq) + bytes(max(0, size - hdr - 4))
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + ip + l4 + body


def run(managers, tmp, conf: dict, records, nf_args=(), before=None):
    """@records (time in us, frame) through the NF, times as recorded;
    the frames that came out and the NF's stats."""
    (tmp / "rl.json").write_text(json.dumps(conf))
    src, dst = tmp / "in.pcap", tmp / "out.pcap"
    write_pcap(src, records)
    m = managers(ports=[f"net_pcap0,rx_pcap={src}",
                        f"net_pcap1,tx_pcap={dst}"],
                 chain="1,port:1", rx_paused=True, args=["--rx-timestamp"])
    nf = m.start_nf("ratelimit", 1, nf_args=["--config", str(tmp / "rl.json"),
                                             "--clock", "capture", *nf_args])
    if before:
        before(m, nf)
    m.call("rx.set", enabled=True)
    wait_for(lambda: m.call("port.list")["ports"][0]["rx"] == len(records),
             30, "the capture in")
    m.wait_idle()
    st = m.call("nf.list")["nfs"][0]
    classes = m.call("nf.call", instance=nf.instance,
                     command="classes.list", args={})
    assert m.shutdown() == 0
    return read_frames(dst), st["counters"], classes


def test_a_class_then_each_flow_as_the_reference_buckets_say(managers,
                                                            tmp_path):
    """Tenant 10.1/16 at 300 packets/s (burst 20), each of its flows at
    100/s (burst 5); five flows of it at 200/s each for 2 s, and one
    flow of no class under the default (50/s, burst 5): each packet's
    fate as the reference computes it, counted by level."""
    conf = {"classes": [{"name": "t1", "match": {"src": "10.1.0.0/16"},
                         "rate": "300pps", "burst": "20p", "per": "flow",
                         "per_rate": "100pps", "per_burst": "5p"}],
            "default": {"rate": "50pps", "burst": "5p"}}
    recs = []
    for k in range(400):          # every 5 ms, 2 s
        t = 1_000_000 + k * 5000  # us
        for f in range(5):
            recs.append((t + f * 100,
                         frame(f"10.1.0.{f + 1}", "192.0.2.1", 1000 + f, 53,
                               len(recs))))
        if k % 2 == 0:
            recs.append((t + 600, frame("10.2.0.1", "192.0.2.1", 7, 53,
                                        len(recs))))
    cls, dflt = Bucket(300, 20), Bucket(50, 5)
    flows = {}
    want, by = [], {"class": 0, "per": 0}
    for us, fr in recs:
        now = us * 1000
        if fr[26:28] == bytes([10, 1]):
            key = fr[26:30] + fr[34:36]
            fb = flows.setdefault(key, Bucket(100, 5))
            if not fb.has(1, now):
                by["per"] += 1
                continue
            if not cls.has(1, now):
                by["class"] += 1
                continue
            cls.take(1)
            fb.take(1)
        else:
            if not dflt.has(1, now):
                by["class"] += 1
                continue
            dflt.take(1)
        want.append(fr)
    out, c, classes = run(managers, tmp_path, conf, recs)
    assert by["per"] > 0 and by["class"] > 0, "both levels must bind"
    assert out == want
    assert (c["dropped_per"], c["dropped_class"]) == (by["per"], by["class"])
    assert c["passed"] == len(want) and c["keys"] == 5
    t1 = classes["classes"][0]
    assert t1["name"] == "t1" and t1["rate"] == "300pps" and \
        t1["per"] == "flow" and t1["per_rate"] == "100pps"


def test_bit_rates_count_whole_frames(managers, tmp_path):
    """A destination at 1 Mbit/s (burst 3000 bytes): frames of 64 to 1500
    bytes, each costing its size in bits."""
    conf = {"classes": [{"name": "d", "match": {"dst": "192.0.2.0/24"},
                         "rate": "1mbit", "burst": "3000b"}]}
    recs = [(1_000_000 + k * 700, frame("10.0.0.1", "192.0.2.7", 5, 53, k,
                                        size=64 + (k * 97) % 1437))
            for k in range(3000)]
    b = Bucket(1_000_000, 3000 * 8)
    want = []
    for us, fr in recs:
        if b.has(len(fr) * 8, us * 1000):
            b.take(len(fr) * 8)
            want.append(fr)
    out, c, _ = run(managers, tmp_path, conf, recs)
    assert 0 < len(want) < len(recs)
    assert out == want and c["dropped_class"] == len(recs) - len(want)


def test_the_syn_flood_filter_is_a_class(managers, tmp_path):
    """SYNs at 100 a second (the filter NF's job): a flood of them is cut
    to the rate, every other packet of no class passes."""
    conf = {"classes": [{"name": "syn", "match": {"tcp_flags": "syn"},
                         "rate": "100pps", "burst": "10p"}]}
    recs = []
    for k in range(2000):  # 1 s: 1000 SYNs, 1000 ACKs
        recs.append((1_000_000 + k * 500,
                     frame("10.0.0.1", "192.0.2.1", 1024 + k, 80, k,
                           flags=0x02 if k % 2 == 0 else 0x10)))
    b = Bucket(100, 10)
    want = []
    for us, fr in recs:
        syn = fr[47] == 0x02
        if syn and not b.has(1, us * 1000):
            continue
        if syn:
            b.take(1)
        want.append(fr)
    out, c, _ = run(managers, tmp_path, conf, recs)
    assert out == want
    assert c["unclassified"] == 1000 and c["dropped_class"] == \
        1000 - (len(want) - 1000)


def test_a_full_key_table_drops_new_keys_and_counts(managers, tmp_path):
    conf = {"classes": [{"name": "all", "rate": "1mpps", "per": "src",
                         "per_rate": "1kpps"}]}
    recs = [(1_000_000 + k, frame(f"10.0.0.{k % 4 + 1}", "192.0.2.1", 5, 53,
                                  k)) for k in range(40)]
    out, c, classes = run(managers, tmp_path, conf, recs,
                          nf_args=["--keys", "2"])
    assert c["dropped_full"] == 20 and c["keys"] == 2
    assert classes["classes"][0]["dropped_full"] == 20
    assert len(out) == 20


def test_class_set_changes_rates_from_the_next_packet(managers, tmp_path):
    conf = {"classes": [{"name": "a", "rate": "1000pps", "burst": "5p"}]}
    recs = [(1_000_000 + k * 1000, frame("10.0.0.1", "192.0.2.1", 5, 53, k))
            for k in range(1000)]  # 1000/s for 1 s

    def before(m, nf):
        from zeronf.client import ZeroNFError
        with pytest.raises(ZeroNFError) as e:
            m.call("nf.call", instance=nf.instance, command="class.set",
                   args={"name": "a", "rate": "fast"})
        assert "rate: want" in str(e.value)
        with pytest.raises(ZeroNFError) as e:
            m.call("nf.call", instance=nf.instance, command="class.set",
                   args={"name": "b", "rate": "1pps"})
        assert "no class 'b'" in str(e.value)
        r = m.call("nf.call", instance=nf.instance, command="class.set",
                   args={"name": "a", "rate": "100pps", "burst": "2p"})
        assert r["classes"][0]["rate"] == "100pps"
    b = Bucket(100, 2)
    want = []
    for us, fr in recs:
        if b.has(1, us * 1000):
            b.take(1)
            want.append(fr)
    out, c, _ = run(managers, tmp_path, conf, recs, before=before)
    assert out == want and 90 < len(want) < 110


@pytest.mark.parametrize("conf, why", [
    ("{", "line 1"),
    ({"classes": [{"name": "a"}]}, "classes[0]: no rate"),
    ({"classes": [{"name": "a", "rate": "10"}]}, "classes[0].rate: want"),
    ({"classes": [{"name": "a", "rate": "10pps", "burst": "10b"}]},
     "classes[0].burst: packets for a rate in pps"),
    ({"classes": [{"name": "a", "rate": "1pps", "match": {"dport": 70000}}]},
     "classes[0].match.dport"),
    ({"classes": [{"name": "a", "rate": "1pps", "colour": "red"}]},
     "classes[0].colour: unknown"),
    ({"classes": [{"name": "a", "rate": "1pps"}, {"name": "a",
                                                  "rate": "2pps"}]},
     "classes[1]: name: used twice"),
    ({"default": {"per": "flow"}}, "default.per_rate: want"),
    ({}, "nothing to limit"),
])
def test_a_bad_config_stops_the_nf_saying_where(managers, tmp_path, conf,
                                                why):
    f = tmp_path / "rl.json"
    f.write_text(conf if isinstance(conf, str) else json.dumps(conf))
    m = managers(ports=["net_null0"], chain="1", rx_paused=True)
    with pytest.raises(RuntimeError) as e:
        m.start_nf("ratelimit", 1, nf_args=["--config", str(f)])
    assert why in str(e.value) and str(f) in str(e.value), str(e.value)

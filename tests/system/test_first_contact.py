"""A newcomer's first steps, run as the documents write them (issue 10,
defects 4-7): the README's "Using it" and the NF guide's "Building" and
"Running" blocks, copied out of the files, lose no packet; leading zeros
are decimal; bad input of the first-contact kind gets one clear line.
The only changes made to the copied commands: a unique instance name and
output paths in the test's directory (tests run side by side and never
write into the clone)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness import BUILD, DATA, MGR_BIN, NF_BIN, REPO, unique_name
from pcaputil import read_frames

TRACE = DATA / "pcap" / "wikipedia.pcap"


def sh_blocks(doc: Path, section: str) -> list[str]:
    text = doc.read_text()
    m = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## )", text,
                  re.S | re.M)
    assert m, f"{doc.name} has no section {section}"
    return re.findall(r"```sh\n(.*?)```", m.group(1), re.S)


def run_block(script: str, cwd: Path, env_path: str | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if env_path:
        env["PATH"] = env_path + ":" + env["PATH"]
    # The docs run from the clone: PWD is the clone for their exports.
    env["PWD"] = str(cwd)
    r = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{script}\n--- stdout\n{r.stdout}\n" \
                              f"--- stderr\n{r.stderr}"
    return r


def no_leftovers(name: str) -> None:
    subprocess.run(["pkill", "-9", "-f", f"-i {name}"], check=False)


def test_readme_using_it(tmp_path):
    (block,) = sh_blocks(REPO / "README.md", "Using it")
    name = unique_name("rd")
    out = tmp_path / "lab.pcap"
    script = (block.replace("-i lab ", f"-i {name} ")
              .replace("out/lab.pcap", str(out))
              .replace("mkdir -p out", f"mkdir -p {tmp_path}"))
    assert script.count(name) == 7 and str(out) in script
    # The README's commands, with the build the test runs against.
    script = script.replace('$PWD/build/', f"{BUILD}/")
    try:
        r = run_block(script, REPO)
    finally:
        no_leftovers(name)
    assert read_frames(out) == read_frames(TRACE)  # all 136, in order
    assert '"no_instance"' not in r.stdout         # nothing dropped
    assert "monitor1" in r.stdout or "monitor" in r.stdout


def test_readme_deploying(tmp_path):
    (block,) = sh_blocks(REPO / "README.md", "Deploying")
    name = unique_name("dp")
    script = block.replace(" lab", f" {name}")
    assert script.count(name) == 7
    try:
        r = run_block(script, REPO)
    finally:
        subprocess.run([sys.executable, "-m", "zeronf", "down", name],
                       capture_output=True, timeout=60)
    assert "deploy/demo.yaml: instance 'demo'" in r.stdout
    assert f"'{name}' is up: RX enabled" in r.stdout
    assert "fwd.2" in r.stdout           # the third replica
    assert "nf.launch" in r.stdout       # the events
    assert f"'{name}' is down" in r.stdout
    no_leftovers(name)


def test_nf_guide_build_and_run(tmp_path):
    build, = sh_blocks(REPO / "docs/nf-guide.md", "Building")[:1]
    run, = sh_blocks(REPO / "docs/nf-guide.md", "Running")
    exe = tmp_path / "ttl-guard"
    build = (build.replace('$PWD/build', str(BUILD))
             .replace("-o ttl-guard", f"-o {exe}"))
    run_block(build, REPO)
    assert exe.exists()
    name = unique_name("ng")
    (tmp_path / "in.pcap").write_bytes(TRACE.read_bytes())
    script = run.replace("-i demo ", f"-i {name} ")
    assert script.count(name) == 5
    path = f"{BUILD}/mgr:{REPO}/.venv/bin"
    try:
        r = run_block(script, tmp_path, env_path=path)
    finally:
        no_leftovers(name)
    # the guard drops IPv4 packets of TTL 1 or less (this capture has
    # some: IGMP, mDNS) and passes the rest, in order
    want = [f for f in read_frames(TRACE)
            if not (f[12:14] == b"\x08\x00" and f[22] <= 1)]
    assert 0 < len(want) < len(read_frames(TRACE))
    assert read_frames(tmp_path / "out.pcap") == want
    assert "guard" in r.stdout


def test_leading_zeros_are_decimal(managers):
    m = managers(ports=["net_null0,no-rx=1"], chain="010,port:00")
    assert m.call("chain.get")["hops"] == ["svc:10", "port:0"]
    m.start_nf("forward", "010")  # -s 010
    assert [n["service"] for n in m.call("nf.list")["nfs"]] == [10]
    r = subprocess.run([str(REPO / ".venv/bin/zeronf"), "-i", m.name,
                        "chain", "svc:010,svc:0010,port:000"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert m.call("chain.get")["hops"] == ["svc:10", "svc:10", "port:0"]


def one_line_error(argv, want: str, rc: int | None = None):
    r = subprocess.run([str(a) for a in argv], capture_output=True,
                       text=True, timeout=30)
    err = r.stderr.strip()
    assert r.returncode != 0, (argv, r.stdout, err)
    if rc is not None:
        assert r.returncode == rc, (argv, r.returncode, err)
    assert want in err, (argv, err)
    assert len(err.splitlines()) <= 2, (argv, err)  # no usage dump
    assert "Traceback" not in err


@pytest.mark.parametrize("args,want", [
    (["--cpus", "7"], "--cpus"),
    (["--cpus", "x"], "bad CPU list"),
    (["-c", "svc:1,,port:0"], "empty hop"),
    (["-c", "1,"], "empty hop"),
    (["--log-level", "bogus"], "--log-level"),
    (["-p", "net_null0", "-p", "net_null0"], "port"),
    (["--pool-size", "0x100"], "--pool-size"),
    (["--cgroup-root", "relative/dir"], "--cgroup-root"),
    (["--cgroup-root", "/nonexistent-zeronf"], "--cgroup-root"),
])
def test_manager_bad_options_one_line(args, want):
    one_line_error([MGR_BIN, "-i", unique_name("bo"), *args], want)


@pytest.mark.parametrize("kind,nf_args,want", [
    ("forward", ["--log-level", "bogus"], "--log-level"),
    ("forward", ["--cpus", "7"], "--cpus"),
    ("router", ["--", "--default-port", "x"], "--default-port"),
    ("router", ["--", "--next-hop", "1"], "--next-hop"),
    ("router", ["--"], "--routes FILE is required"),
    ("dpi", ["--", "--proto-dir", "/nonexistent"], "/nonexistent"),
    ("forward", ["--", "--bogus"], "bogus"),
])
def test_nf_bad_options_one_line(kind, nf_args, want):
    # no manager needed: options are checked first
    one_line_error([NF_BIN[kind], "-i", unique_name("no"), "-s", "1",
                    *nf_args], want, rc=2)


def test_cli_bad_json_one_line():
    cli = REPO / ".venv/bin/zeronf"
    one_line_error([cli, "-i", "nosuch", "call", "status", "{bad"],
                   "not JSON", rc=2)
    one_line_error([cli, "-i", "nosuch", "nf-call", "0", "route.add",
                    "[1]"], "JSON object", rc=2)


def test_weights_for_absent_instances_refused(managers):
    from zeronf import ZeroNFError
    m = managers(ports=["net_null0,no-rx=1"], chain="1,port:0")
    nf = m.start_nf("forward", 1)
    with pytest.raises(ZeroNFError) as e:
        m.call("service.set", service=1, lb="weighted",
               weights={str(nf.instance + 1): 5})
    assert "instance" in e.value.message
    m.call("service.set", service=1, lb="weighted",
           weights={str(nf.instance): 5})

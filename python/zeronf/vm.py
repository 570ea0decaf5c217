"""ZeroNF VMs (docs/vm-nfs.md): the guest image of an NF, the guest
kernel, and the nf.start parameters that launch an NF in a VM.

An image is an initramfs (newc cpio, uncompressed: the kernel unpacks it
faster than it inflates one under emulation) holding zeronf-vminit as
/init, the NF program as /zeronf/nf and every library it loads (as ldd
resolves them here: the guest runs the host's own binaries). zeronf-vm
appends the VM's own files (its argv, slot, helper) at each start."""
from __future__ import annotations

import errno
import hashlib
import os
import re
import subprocess
from pathlib import Path

from . import paths
from .client import ZeroNFError

LIB_DIR = "usr/lib/x86_64-linux-gnu"  # the loader's default path


class VMError(ZeroNFError):
    """A VM cannot be made or started (said in one line; the CLI prints
    it as any refused request)."""

    def __init__(self, message: str):
        Exception.__init__(self, message)
        self.code = -errno.ENOENT


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "zeronf" / "vm"


def kernel() -> Path | None:
    """The guest kernel: $ZERONF_VM_KERNEL, else the one scripts/setup.sh
    fetched (Debian's cloud kernel, .vm/ of the source tree)."""
    env = os.environ.get("ZERONF_VM_KERNEL")
    if env:
        return Path(env)
    p = kernel_dir() / "vmlinuz"
    return p if p.is_file() else None


def modules() -> list[Path]:
    """The guest's virtio-net modules scripts/setup.sh unpacked (.vm/
    modules/, in load order), for the copying baseline's VMs."""
    d = kernel_dir() / "modules"
    return sorted(d.glob("*.ko")) if d.is_dir() else []


def kernel_dir() -> Path:
    return paths._REPO / ".vm"


def libraries(program: Path) -> tuple[list[Path], Path | None]:
    """The shared libraries @program loads (ldd), and its loader; none
    for a static program."""
    out = subprocess.run(["ldd", str(program)], capture_output=True,
                         text=True, check=False)
    if "not a dynamic executable" in out.stdout + out.stderr:
        return [], None
    if out.returncode != 0:
        raise VMError(f"ldd {program}: {out.stderr.strip() or 'failed'}"
                      " (a dynamically linked program?)")
    libs, loader = [], None
    for line in out.stdout.splitlines():
        # a path may hold spaces: all up to the load address
        m = re.match(r"\s*(\S+) => (.+) \(0x[0-9a-f]+\)$", line)
        if m:
            libs.append(Path(m.group(2)))
        elif "not found" in line:
            raise VMError(f"{program}: {line.strip()}")
        else:
            m = re.match(r"\s*(/.+) \(0x[0-9a-f]+\)$", line)
            if m:
                loader = Path(m.group(1))
    return libs, loader


class _Cpio:
    """newc entries, written in order (parents before children)."""

    def __init__(self, f):
        self.f, self.ino, self.dirs = f, 1, set()

    def _entry(self, name: str, mode: int, data: bytes = b"") -> None:
        nm = name.encode() + b"\0"
        hdr = ("070701" + "".join(f"{v:08X}" for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nm), 0)))
        self.ino += 1
        self.f.write(hdr.encode() + nm + b"\0" * ((4 - (110 + len(nm)) % 4)
                                                   % 4))
        self.f.write(data + b"\0" * ((4 - len(data) % 4) % 4))

    def dir(self, name: str) -> None:
        parts = name.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d and d not in self.dirs:
                self.dirs.add(d)
                self._entry(d, 0o040755)

    def file(self, name: str, data: bytes, mode: int = 0o100755) -> None:
        name = name.strip("/")
        if "/" in name:
            self.dir(name.rsplit("/", 1)[0])
        self._entry(name, mode, data)

    def link(self, name: str, target: str) -> None:
        self._entry(name.strip("/"), 0o120777, target.encode())

    def end(self) -> None:
        self._entry("TRAILER!!!", 0)
        pad = (-self.f.tell()) % 512
        self.f.write(b"\0" * pad)


def build_image(program: Path, out: Path, vminit: Path | None = None,
                kmods: list[Path] | None = None,
                files: list[Path] | None = None) -> Path:
    """The image of NF @program at @out (written whole, then renamed),
    with kernel modules @kmods (loaded in that order by the init) and
    host @files at their own absolute paths (an NF's configuration: its
    options name them as on the host)."""
    vminit = vminit or paths.find_program("zeronf-vminit")
    if vminit is None:
        raise VMError("zeronf-vminit not found (build ZeroNF first)")
    libs, loader = libraries(program)
    ilibs, iloader = libraries(vminit)  # none: it is static, but under a
    libs += ilibs                       # sanitizer (which cannot link so)
    loader = loader or iloader
    tmp = out.with_name(out.name + f".{os.getpid()}.tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "wb") as f:
        c = _Cpio(f)
        c.file("init", vminit.read_bytes())
        c.file("zeronf/nf", program.read_bytes())
        seen = set()
        for lib in libs:
            if lib.name in seen:
                continue
            seen.add(lib.name)
            c.file(f"{LIB_DIR}/{lib.name}", lib.resolve().read_bytes())
        if loader is not None:
            c.file(str(loader), loader.resolve().read_bytes())
        for f in files or []:
            f = Path(f).resolve()
            if not f.is_file():
                raise VMError(f"{f}: not a file (vm --file)")
            c.file(str(f), f.read_bytes(), 0o100644)
        for i, k in enumerate(kmods or []):
            c.file(f"zeronf/modules/{i:02d}-{k.name.split('-', 1)[-1]}",
                   k.read_bytes(), 0o100644)
        c.dir("lib")
        c.link("lib/x86_64-linux-gnu", f"/{LIB_DIR}")
        for d in ("proc", "sys", "dev", "run", "tmp"):
            c.dir(d)
        c.end()
    os.replace(tmp, out)
    return out


def image_for(program: Path, kmods: list[Path] | None = None,
              files: list[Path] | None = None) -> Path:
    """The cached image of @program (with kernel modules @kmods and host
    @files): made again when the program, one of its libraries, a module,
    a file or zeronf-vminit changed."""
    vminit = paths.find_program("zeronf-vminit")
    if vminit is None:
        raise VMError("zeronf-vminit not found (build ZeroNF first)")
    libs, loader = libraries(program)
    h = hashlib.sha256()
    for f in files or []:
        if not Path(f).is_file():
            raise VMError(f"{f}: not a file (vm --file)")
    for p in [program, vminit, *libs, *([loader] if loader else []),
              *(kmods or []), *map(Path, files or [])]:
        st = p.resolve().stat()
        h.update(f"{p.resolve()}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    out = cache_dir() / f"{program.name}-{h.hexdigest()[:16]}.cpio"
    return out if out.exists() else build_image(program, out, vminit, kmods,
                                                files)


def start_params(name: str, program: Path, service: int, group: str,
                 nf_args: list[str], mem_mb: int = 1024, vcpus: int = 1,
                 accel: str = "auto", kernel_path: Path | None = None,
                 poll_max_us: int | None = None,
                 restart: str = "on-failure",
                 image: Path | None = None,
                 files: list[Path] | None = None,
                 vhost_user: Path | None = None) -> dict:
    """nf.start's parameters for NF @program in a VM of trust group
    @group: the manager launches zeronf-vm, which boots it. With
    @vhost_user, an untrusted VM instead (no group: @program is a plain
    Linux program, such as zeronf-vmfwd, on a virtio-net NIC that is the
    manager's vhost-user port at that socket; @service is shown, not
    used: it registers none). @image: an
    initramfs of one's own instead of the one made of @program (it must
    hold zeronf-vminit as /init and the NF as /zeronf/nf, as
    `zeronf vm image` makes them). @files: host files the NF reads (its
    options name them), put in the image at the same paths."""
    helper = paths.find_program("zeronf-vm")
    if helper is None:
        raise VMError("zeronf-vm not found (build ZeroNF first)")
    k = kernel_path or kernel()
    if k is None or not Path(k).is_file():
        raise VMError("no guest kernel: set ZERONF_VM_KERNEL or run "
                      "scripts/setup.sh (it fetches Debian's cloud kernel)")
    if image is not None and not Path(image).is_file():
        raise VMError(f"image {image}: no such file")
    kmods = None
    if vhost_user is not None:  # untrusted: a virtio-net NIC, no group
        kmods = modules()
        if group or not kmods:
            raise VMError("an untrusted VM (--vhost-user) joins no trust "
                          "group" if group else "no virtio-net modules: "
                          "run scripts/setup.sh")
    args = ["--image", str(image or image_for(program, kmods, files)),
            "--kernel", str(k),
            "--mem", str(mem_mb), "--vcpus", str(vcpus), "--accel", accel]
    if poll_max_us:
        args += ["--poll-max-us", str(poll_max_us)]
    if vhost_user is not None:
        args += ["--vhost-user", str(vhost_user)]
    p = {"name": name, "binary": str(helper), "service": service,
         "restart": restart, "args": args + ["--", *nf_args]}
    if group:
        p["trust_group"] = group
    return p


def vhost_argv(vhost_sock: Path, mem_mb: int = 512, accel: str = "auto",
               kernel_path: Path | None = None) -> list[str]:
    """zeronf-vm's command line for an untrusted VM (docs/vm-nfs.md, the
    copying baseline): zeronf-vmfwd in a guest whose virtio-net NIC is
    the manager's vhost-user port at @vhost_sock (net_vhost, the manager
    the server). No trust group, no slot: the manager sees a port."""
    helper = paths.find_program("zeronf-vm")
    fwd = paths.find_program("zeronf-vmfwd")
    k = kernel_path or kernel()
    kmods = modules()
    if helper is None or fwd is None:
        raise VMError("zeronf-vm or zeronf-vmfwd not found (build ZeroNF "
                      "first)")
    if k is None or not kmods:
        raise VMError("no guest kernel or virtio-net modules: run "
                      "scripts/setup.sh")
    return [str(helper), "--", "--image", str(image_for(fwd, kmods)),
            "--kernel", str(k), "--mem", str(mem_mb), "--accel", accel,
            "--vhost-user", str(vhost_sock)]


def resolve_accel(kernel_path: Path | None = None) -> str:
    """What zeronf-vm's --accel auto makes of this host: kvm where its KVM
    boots the guest kernel, else tcg (a probe boot, then kept in /run)."""
    helper = paths.find_program("zeronf-vm")
    fwd = paths.find_program("zeronf-vmfwd")
    k = kernel_path or kernel()
    if helper is None or fwd is None or k is None:
        raise VMError("zeronf-vm, zeronf-vmfwd or the guest kernel not "
                      "found (build ZeroNF, run scripts/setup.sh)")
    # the untrusted VMs' image (cached): no image made for the probe alone
    img = image_for(fwd, modules() or None)
    out = subprocess.run([str(helper), "--", "--image", str(img),
                          "--kernel", str(k), "--print-accel"],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0 or out.stdout.strip() not in ("kvm", "tcg"):
        raise VMError(f"zeronf-vm --print-accel: {out.stderr.strip()}")
    return out.stdout.strip()

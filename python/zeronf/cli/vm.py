"""zeronf CLI: NFs in VMs (docs/vm-nfs.md): vm start launches an NF in a
QEMU guest (the manager supervises it like any launched NF: nf list,
nf stop, logs), vm image makes or shows an NF's guest image."""
from __future__ import annotations

import sys
from pathlib import Path

from .. import paths, vm
from ..client import Client
from .basic import show

# nf.start wants a service; an untrusted VM registers none (the manager
# sees its NIC as a port): this one is shown in launch.list, not used.
UNTRUSTED_SERVICE = 255


def run_vm(a) -> int:
    program = paths.find_nf(a.binary, Path.cwd())
    if program is None:
        print(f"zeronf: vm {a.action}: no program '{a.binary}'",
              file=sys.stderr)
        return 2
    try:
        if a.action == "image":
            files = [Path(f).resolve() for f in a.file]
            out = vm.build_image(program, Path(a.output), files=files) \
                if a.output else vm.image_for(program, files=files)
            print(out)
            return 0
        if (a.vhost_user is None) == (a.trust_group is None):
            print(f"zeronf: vm start: a VM is a member of a trust group "
                  f"(-g) or untrusted (--vhost-user), one of them",
                  file=sys.stderr)
            return 2
        if a.vhost_user is not None and a.service is None:
            a.service = UNTRUSTED_SERVICE
        if a.service is None:
            print("zeronf: vm start: -s/--service is required",
                  file=sys.stderr)
            return 2
        sock = None
        if a.vhost_user is not None:
            sock = Path(a.vhost_user).resolve()
            with Client(a.instance) as c:
                ports = c.call("port.list")["ports"]
            if not any(x["driver"] == "net_vhost" and
                       f"iface={sock}" in x["devargs"] for x in ports):
                print(f"zeronf: vm start: the manager has no vhost-user "
                      f"port at {sock} (a port net_vhostN,iface={sock})",
                      file=sys.stderr)
                return 1
        p = vm.start_params(a.name, program, a.service, a.trust_group,
                            a.args, mem_mb=a.mem, vcpus=a.vcpus,
                            accel=a.accel, restart=a.restart,
                            kernel_path=Path(a.kernel) if a.kernel else None,
                            poll_max_us=a.poll_max_us,
                            image=Path(a.image) if a.image else None,
                            files=[Path(f).resolve() for f in a.file],
                            vhost_user=sock)
    except vm.VMError as e:
        print(f"zeronf: vm {a.action}: {e}", file=sys.stderr)
        return 1
    if a.replicas != 1:
        p["replicas"] = a.replicas
    with Client(a.instance) as c:
        return show(c.call("nf.start", **p))


def register(sub) -> None:
    p = sub.add_parser("vm", help="NFs in VMs: start one (the manager "
                       "supervises it as a launched NF), make its image")
    acts = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    s = acts.add_parser("start", help="launch an NF in a QEMU guest, a "
                        "member of a trust group (-g) or untrusted "
                        "(--vhost-user) (-- then its options)")
    s.add_argument("name")
    s.add_argument("binary", help="zeronf-forward, ./my-nf, /path/nf")
    s.add_argument("-s", "--service", type=int,
                   help="its service (an untrusted VM's is not used)")
    s.add_argument("-g", "--trust-group",
                   help="the group whose packet memory the VM maps")
    s.add_argument("--vhost-user", metavar="SOCK",
                   help="untrusted instead: BINARY (a plain Linux "
                   "program, such as zeronf-vmfwd) on a virtio-net NIC "
                   "that is the manager's vhost-user port at SOCK")
    s.add_argument("-r", "--replicas", type=int, default=1)
    s.add_argument("--mem", type=int, default=1024, help="MB (default "
                   "1024, touched as used)")
    s.add_argument("--vcpus", type=int, default=1)
    s.add_argument("--accel", default="auto", choices=["auto", "tcg", "kvm"],
                   help="auto (default): kvm where this host's KVM boots "
                   "the guest kernel, else tcg")
    s.add_argument("--kernel", help="guest kernel (default "
                   "$ZERONF_VM_KERNEL or the one setup fetched)")
    s.add_argument("--image", help="an initramfs of one's own (made by "
                   "`zeronf vm image`, perhaps extended) instead of the "
                   "one made of BINARY")
    s.add_argument("--file", action="append", default=[],
                   help="a host file the NF reads (its options name it), "
                   "put in the guest at the same path; repeatable")
    s.add_argument("--poll-max-us", type=int,
                   help="most time between an idle guest NF's polls")
    s.add_argument("--restart", default="on-failure",
                   choices=["never", "on-failure", "always"])
    s.add_argument("args", nargs="*", help="the NF's own options")
    s = acts.add_parser("image", help="make an NF's guest image (cached; "
                        "vm start makes it too) and print its path")
    s.add_argument("binary")
    s.add_argument("-o", "--output", help="write it here instead")
    s.add_argument("--file", action="append", default=[],
                   help="a host file the NF reads, at the same path")
    p.set_defaults(run=run_vm)

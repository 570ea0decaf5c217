"""The code's shape, checked on the build: no circle among the modules of
any program (the manager, libzeronf, the VM helper, each NF), from the
objects' symbols and from the calls into header inlines and macros, so a
call hidden behind any header counts; the data path calls nothing of the
control side; mgr.h holds only struct zn_mgr; generated files are current;
a source file past ~600 lines says why in its first comment."""
from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from harness import BUILD, REPO


def strip_c(text: str) -> str:
    """C without its comments and string literals' contents."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


INLINE = re.compile(r"static\s+(?:inline|__rte_always_inline)\b[^;{}()]*?"
                    r"\b(\w+)\s*\([^;{}]*\)\s*\{")
MACRO = re.compile(r"^#\s*define\s+(\w+)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)",
                   re.M)
CALL_OR_KEYWORD = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "alignof",
            "_Alignof", "__alignof__", "typeof", "__typeof__", "defined",
            "_Static_assert", "__attribute__", "__builtin_expect"}


def calls(code: str) -> set[str]:
    return set(CALL_OR_KEYWORD.findall(code)) - KEYWORDS


def own_module(header: str, source: str) -> bool:
    """Is @p source (a module) the one whose functions header @p header
    declares: X.h's X.c or X_hot.c, a public include/zeronf/X.h's
    lib/.../X.c?"""
    h, src = header[:-2], source.removesuffix("_hot")
    if h.startswith("include/"):
        return src.startswith("lib/") and \
            src.rpartition("/")[2] == h.rpartition("/")[2]
    return src == h


def header_code(text: str) -> dict[str, str]:
    """A header's code: each static inline function's and function-like
    macro's body, by name."""
    text = strip_c(text)
    out = {}
    for m in INLINE.finditer(text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out[m.group(1)] = text[m.end():i]
    for m in MACRO.finditer(text):
        # what a macro defines (ZN_NF_REGISTER's main) is not a call
        out[m.group(1)] = re.sub(r"\w[\w\s\*]*?\b\w+\s*\([^()]*\)\s*\{", "{",
                                 m.group(3).replace("\\\n", " "))
    return out


def program_calls(targets: list[str]) -> dict[str, set[str]]:
    """The modules of one program (the objects of meson @p targets, each
    "SUBDIR/NAME.p" under the build) and what each calls: a module is a
    source file, named by its path without ".c" ("mgr/trust/group"), and a
    header's inline code is a module of its own ("mgr/trust/group.h").
    Edges: a source to the sources whose functions or data it uses (nm:
    defined T/D/B/R against undefined U), any file to each header whose
    inlines or macros it calls, and a header to the sources and headers
    its inline code calls, but for its own module's (X.h's inlines may
    call X.c's or X_hot.c's functions, as DPDK's rte_ring.h does)."""
    defined: dict[str, str] = {}
    used: dict[str, set[str]] = defaultdict(set)
    sources: list[tuple[str, Path]] = []
    for t in targets:
        sub, _, _ = t.rpartition("/")
        objs = sorted(BUILD.glob(f"{t}/*.c.o"))
        assert objs, f"no objects under {BUILD}/{t}"
        # meson names an object after its source from the target's
        # folder, "/" as "_": back to paths
        src = {str(p.relative_to(REPO / sub))[:-2].replace("/", "_"): p
               for p in (REPO / sub).rglob("*.c")}
        for o in objs:
            path = src.get(o.name[:-len(".c.o")])
            if path is None:
                continue  # a stale object: its source was renamed
            name = str(path.relative_to(REPO))[:-2]
            sources.append((name, path))
            out = subprocess.run(["nm", str(o)], capture_output=True,
                                 text=True, check=True).stdout
            for line in out.splitlines():
                f = line.split()
                if len(f) == 3 and f[1] in "TDBR":
                    defined[f[2]] = name
                elif len(f) == 2 and f[0] == "U":
                    used[name].add(f[1])
    graph = {m: {defined[s] for s in syms if s in defined} - {m}
             for m, syms in used.items()}
    inline: dict[str, str] = {}
    code: dict[str, list[str]] = defaultdict(list)
    for d in ("mgr", "lib", "include", "nfs", "tools"):
        for h in (REPO / d).rglob("*.h"):
            node = str(h.relative_to(REPO))
            for fn, body in header_code(h.read_text(errors="replace")).items():
                inline[fn] = node
                code[node].append(body)
    for node, bodies in code.items():
        for body in bodies:
            for c in calls(body):
                if c in inline and inline[c] != node:
                    graph.setdefault(node, set()).add(inline[c])
                elif c in defined and not own_module(node, defined[c]):
                    graph.setdefault(node, set()).add(defined[c])
    for name, path in set(sources):
        for c in calls(strip_c(path.read_text())):
            if c in inline:
                graph.setdefault(name, set()).add(inline[c])
    return graph


MANAGER = ["mgr/libzn_mgr_core.a.p", "mgr/zeronf-mgr.p"]


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                c = visit(d)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == \
        ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_header_code_sees_inlines_and_macros():
    code = header_code("/* f( */\nstatic inline int\nf(int a)\n{\n"
                       "\tif (a) { return g(a); }\n\treturn 0;\n}\n"
                       "#define M(x) \\\n\th(x)\n"
                       "#define D(o) int main(int c) { return n(c, o); }\n"
                       "static __rte_always_inline void k(void) { j(); }\n")
    assert set(code) == {"f", "M", "k", "D"}, code
    assert calls(code["f"]) == {"g"}
    assert calls(code["D"]) == {"n"}
    assert "h(" in code["M"] and "j(" in code["k"]


def test_manager_modules_have_no_circles():
    graph = program_calls(MANAGER)
    assert len(graph) > 50, sorted(graph)
    assert find_cycle(graph) is None, \
        f"circle among manager modules: {' -> '.join(find_cycle(graph))}"
    # The data path calls nothing of the control side: the hot files and
    # the headers they reach call only each other, other headers, and
    # libraries
    hot = {"mgr/datapath/worker", "mgr/flow/fdir_hot",
           "mgr/trust/owner_map_hot", "mgr/trust/copy_hot",
           "mgr/tenant/tenant_hot", "mgr/trust/group_audit_hot",
           "mgr/trust/port_headers_hot", "mgr/sdn/oft_hot",
           "mgr/fabric/fabric_hot"}
    seen, todo = set(), list(hot)
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        for d in graph.get(m, set()):
            assert d in hot or d.endswith(".h"), (m, d)
            todo.append(d)
    # The routing snapshot is below what fills it: the flow director and
    # load balancing call it to publish, it calls them only through the
    # fills they register (no hook that only ever holds one function).
    for src in ("mgr/flow/fdir", "mgr/flow/lb"):
        assert "mgr/flow/route" in graph[src], src
        assert src not in graph["mgr/flow/route"], src


def test_a_circle_through_an_inline_is_seen(tmp_path):
    """The check can fail: an inline that calls back into its caller's
    module closes a circle nm alone cannot see."""
    graph = program_calls(MANAGER)
    # the workers use mgr/nf/nf_rec.h's inlines; were one of them to call
    # into worker.c, the circle is found
    assert "mgr/nf/nf_rec.h" in graph["mgr/datapath/worker"]
    graph.setdefault("mgr/nf/nf_rec.h", set()).add("mgr/datapath/worker")
    assert find_cycle(graph) is not None


def test_libzeronf_tools_and_nfs_have_no_circles():
    """Issue 30: nf.c <-> nf_msg.c (zn_nf_self), nf_msg.c <-> nf_tx.c and
    nf_cmd.c (registration set them up), nf_pool_ops.c <-> nf_pool_ring.c,
    and zeronf-vm.c <-> vm_boot.c <-> vm_accel.c (the globals V, say);
    each NF program as well."""
    programs = [["lib/libzeronf.so.0.1.0.p", "lib/libzn_common.a.p"],
                ["tools/zeronf-vm.p"], ["tools/zeronf-run.p"]]
    programs += [[str(p.relative_to(BUILD)), "nfs/libzn_nfcommon.a.p"]
                 for p in sorted(BUILD.glob("nfs/zeronf-*.p"))]
    assert len(programs) > 8, programs
    for targets in programs:
        graph = program_calls(targets)
        assert find_cycle(graph) is None, \
            f"{targets[0]}: circle: {' -> '.join(find_cycle(graph))}"


def test_mgr_h_holds_only_the_manager():
    text = (REPO / "mgr/core/mgr.h").read_text()
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    bodies = re.findall(r"^(?:struct|enum|union)\s+(\w+)\s*\{", code, re.M)
    assert bodies == ["zn_mgr"], bodies
    # No function declarations: those are in each module's header.
    assert not re.search(r"^\w[\w\s\*]*\b\w+\s*\([^)]*\)\s*;", code, re.M)


def test_every_manager_header_is_a_module():
    """One header per module: each mgr/SUB/X.h has a mgr/SUB/X.c (or is
    mgr.h); X_pvt.h is module X's own, included by X's files only."""
    for h in (REPO / "mgr").rglob("*.h"):
        if h.name == "mgr.h":
            continue
        module = h.stem.removesuffix("_pvt")
        assert (h.parent / (module + ".c")).exists(), h.name
        if h.stem.endswith("_pvt"):
            for c in (REPO / "mgr").rglob("*.c"):
                if h.name in re.findall(r'#include "(?:\.\./\w+/)?([^"/]+)"',
                                        c.read_text()):
                    assert c.stem.startswith(module) or \
                        c.stem in ("reclaim",), (h.name, c.name)


def test_each_subsystem_is_a_folder():
    """mgr/ holds folders (one per subsystem) and its meson.build, no
    source of its own; docs/architecture.md's map names each folder."""
    assert not list((REPO / "mgr").glob("*.[ch]"))
    subs = sorted(p.name for p in (REPO / "mgr").iterdir() if p.is_dir())
    arch = (REPO / "docs/architecture.md").read_text()
    for s in subs:
        assert f"mgr/{s}/" in arch, s


def test_generated_schema_and_docs_are_current():
    r = subprocess.run([sys.executable, str(REPO / "scripts/gen_schema.py"),
                        "--build", str(BUILD), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def first_comment(text: str) -> str:
    """The file's first comment after its licence: C's first /* */ block
    but the SPDX one, Python's module docstring."""
    blocks = re.findall(r"/\*.*?\*/", text, re.S)
    blocks = [b for b in blocks if "SPDX-License-Identifier" not in b]
    if blocks:
        return blocks[0]
    doc = re.match(r'\s*(?:#[^\n]*\n\s*)*(?:"""|\'\'\')(.*?)(?:"""|\'\'\')', text,
                   re.S)
    return doc.group(1) if doc else ""


def test_a_long_file_says_why():
    """A file's size follows its concern, not a gate: past ~600 lines, its
    first comment says why it is one file ("Long: ..."). The check names
    each file that does not."""
    unsaid = []
    for d in ("mgr", "lib", "nfs", "python/zeronf", "scripts", "bench",
              "tools", "fuzz", "vm", "tests"):
        for p in sorted((REPO / d).rglob("*")):
            if p.suffix not in (".c", ".h", ".py") or "ndpi-" in str(p):
                continue
            text = p.read_text(errors="replace")
            n = len(text.splitlines())
            if n > 600 and "Long:" not in first_comment(text):
                unsaid.append(f"{p.relative_to(REPO)}: {n} lines, and its "
                              f"first comment does not say why (Long: ...)")
    assert not unsaid, "\n".join(unsaid)


def test_first_comment_finds_the_reason():
    assert "Long: x" in first_comment("/* SPDX-License-Identifier: X */\n"
                                      "/* a\n * Long: x */\nint a;")
    assert "Long:" not in first_comment("/* a */\n/* Long: later */")
    assert "Long: y" in first_comment('#!/usr/bin/env python3\n"""a.\n'
                                      'Long: y"""\n')

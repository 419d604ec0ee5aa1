#!/usr/bin/env python3
"""Checks the architecture of lib/ (docs/architecture.md):

1. every #include "folder/..." of a folder of lib/ is one it may use (the
   module map below), and the method (lib/lns, lib/search, lib/strategies)
   never includes <uv.h>, a journal, threads or json;
2. no include cycle between files of lib/;
3. no call cycle between the files of libbosch: from the objects of the
   internal static archive (nm), file A -> file B when A uses a symbol B
   defines; the graph must have no cycle;
4. lib/lns is a stack (LNS_LEVEL): the shared state at the bottom, the
   pending batch above it, the stages, the driver on top. A file includes
   and calls only files of its own level or below, and the flip sweep's
   state (sweep_state.h) is seen by sweep*.c alone;
5. the bosch command (cli/, beside lib/) parses no JSON but its own input
   (cmd_tokenize.c: token ids on stdin): a model directory's files are
   libbosch-torch's to read (bosch_torch_checkpoint_open), result files
   libbosch's.

Usage: check-layers.py LIB_SOURCE_DIR [ARCHIVE.a]
"""
import os
import re
import subprocess
import sys

# folder -> folders it may include (besides itself and the public headers).
ALLOWED = {
    "base": set(),  # header-only primitives: every folder may include them
    "core": set(),
    "util": {"core"},
    "journal": {"core", "util"},  # util: the whole-file reader
    "search": {"core"},
    "strategies": {"core", "search"},
    "lns": {"core", "search"},
    "session": {"core", "util", "journal", "search", "strategies", "lns"},
    "baselines": {"core"},
    "testbed": {"core"},
    "selection": {"core", "util"},  # util: atomic file replacement
    "torch": {"core", "text", "util"},  # util: the files of STANDALONE_UTIL only
    "text": {"util"},  # util: the files of STANDALONE_UTIL only
    "mpi": set(),  # libbosch-mpi: the public API of libbosch only
}
# The util/ files that need neither core nor libuv: libbosch-text and
# libbosch-torch compile them in (their copies in libbosch are hidden), so
# these folders may include these headers of util/ and no other.
STANDALONE_UTIL = {"util/read_file.h", "util/json_dup.h"}
STANDALONE_USERS = {"text", "torch"}
# lib/lns, bottom to top: file stem -> level (a .c and its .h share one).
LNS_LEVEL = {
    "method": 0, "state": 0, "allocation": 0,  # shared state, pure arithmetic
    "batch": 1,                                  # the pending batch, subproblems
    "stage": 2, "anchors": 2, "plan": 2, "probe": 2, "alloc": 2, "group": 2,
    "sweep": 2, "sweep_state": 2, "sweep_moves": 2, "sweep_probe": 2,
    "layers": 2, "confirm": 2, "plateau": 2,     # the stages
    "lns": 3,                                    # the driver
}
LNS_PRIVATE = {"sweep_state": "sweep"}  # header stem -> the stem prefix of its only users
# System headers the method must not see.
METHOD = {"lns", "search", "strategies"}
FORBIDDEN_IN_METHOD = re.compile(r"#\s*include\s*<(uv\.h|pthread\.h|json-c/|zstd\.h|threads\.h)")
INCLUDE = re.compile(r'#\s*include\s*"([^"]+)"')


def sources(root):
    for folder in sorted(os.listdir(root)):
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h", ".cpp", ".hpp")):
                yield folder, os.path.join(folder, name)


def find_cycle(graph):
    """A cycle as a list of nodes, or None (iterative DFS, colours)."""
    colour = {n: 0 for n in graph}
    for start in sorted(graph):
        if colour[start]:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        colour[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[node] = 2
                stack.pop()
                path.pop()
                continue
            if nxt not in colour:
                continue
            if colour[nxt] == 1:
                return path[path.index(nxt):] + [nxt]
            if colour[nxt] == 0:
                colour[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(graph[nxt]))))
    return None


def check_includes(root):
    errors = []
    graph = {}
    for folder, rel in sources(root):
        text = open(os.path.join(root, rel), encoding="utf-8").read()
        graph.setdefault(rel, set())
        if folder in METHOD and FORBIDDEN_IN_METHOD.search(text):
            errors.append(f"{rel}: the method includes {FORBIDDEN_IN_METHOD.search(text).group(0)}")
        for inc in INCLUDE.findall(text):
            if "/" not in inc:
                target = os.path.join(folder, inc)
            else:
                target = inc
            top = target.split("/")[0]
            if top == "bosch":
                continue  # public headers
            if top != folder and top != "base" and top not in ALLOWED.get(folder, set()):
                errors.append(f'{rel}: includes "{inc}" but {folder}/ may use only '
                              f"{sorted(ALLOWED.get(folder, set())) or 'itself'}")
            elif folder in STANDALONE_USERS and top == "util" and target not in STANDALONE_UTIL:
                errors.append(f'{rel}: includes "{inc}", but {folder}/ may use only '
                              f"{sorted(STANDALONE_UTIL)} of util/ (compiled in)")
            if folder == "util" and rel.replace(".c", ".h") in STANDALONE_UTIL and top == "core":
                errors.append(f'{rel}: includes "{inc}", but text/ and torch/ compile it in '
                              "without core")
            graph[rel].add(target)
            if folder == "lns" and top == "lns":
                errors += check_lns_include(rel, target)
    base = os.path.join(root, "base")
    if os.path.isdir(base):
        errors += [f"base/{n}: lib/base is header-only (every library includes it, none links it)"
                   for n in sorted(os.listdir(base)) if not n.endswith(".h")]
    cycle = find_cycle(graph)
    if cycle:
        errors.append("include cycle: " + " -> ".join(cycle))
    return errors


def lns_stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def check_lns_include(rel, target):
    """Rule 4 for one include of a file of lib/lns."""
    src, dst = lns_stem(rel), lns_stem(target)
    for stem in (src, dst):
        if stem not in LNS_LEVEL:
            return [f"{rel}: lib/lns/{stem} has no level in check-layers.py's LNS_LEVEL"]
    if LNS_LEVEL[dst] > LNS_LEVEL[src]:
        return [f'{rel}: includes "{target}", a level above it in lib/lns\'s stack']
    owner = LNS_PRIVATE.get(dst)
    if owner and not src.startswith(owner):
        return [f'{rel}: includes "{target}", which only {owner}*.c may see']
    return []


def check_lns_calls(graph):
    """Rule 4 for calls: no object of lib/lns calls one of a higher level."""
    errors = []
    def stem(obj):  # ".../lns_sweep.c.o" -> "sweep"; None outside lib/lns
        base = os.path.basename(obj)
        return base[len("lns_"):].split(".")[0] if base.startswith("lns_") else None

    for obj, targets in sorted(graph.items()):
        src = stem(obj)
        if src is None:
            continue
        for t in sorted(targets):
            dst = stem(t)
            if dst is None:
                continue
            if LNS_LEVEL.get(dst, -1) > LNS_LEVEL.get(src, 99):
                errors.append(f"lib/lns/{src}.c calls lib/lns/{dst}.c, a level above it")
    return errors


def check_calls(archive):
    out = subprocess.run(["nm", "-A", archive], capture_output=True, text=True, check=True).stdout
    defined, used = {}, {}
    for line in out.splitlines():
        m = re.match(r"^[^:]+:([^:]+\.o):\s*(?:[0-9a-fA-F]+)?\s+([A-Za-z])\s+(\S+)$", line)
        if not m:
            continue
        obj, kind, sym = m.groups()
        used.setdefault(obj, set())
        if kind == "U":
            used[obj].add(sym)
        elif kind in "TDBRVWC":
            defined[sym] = obj
    graph = {o: set() for o in used}
    for obj, syms in used.items():
        for s in syms:
            d = defined.get(s)
            if d and d != obj:
                graph[obj].add(d)
    cycle = find_cycle(graph)
    errors = ["call cycle: " + " -> ".join(cycle)] if cycle else []
    return errors + check_lns_calls(graph)


# cli/ files that may parse JSON, and why.
CLI_JSON = {"cmd_tokenize.c"}  # token ids given on stdin
JSON_INCLUDE = re.compile(r"#\s*include\s*<json-c/")


def check_cli(root):
    """Rule 5: the command reads no model or result file itself."""
    cli = os.path.normpath(os.path.join(root, "..", "cli"))
    if not os.path.isdir(cli):
        return []
    errors = []
    for name in sorted(os.listdir(cli)):
        if not name.endswith((".c", ".h")) or name in CLI_JSON:
            continue
        text = open(os.path.join(cli, name), encoding="utf-8").read()
        if JSON_INCLUDE.search(text) or "json_object_from_file" in text:
            errors.append(f"cli/{name}: parses JSON; a model directory is libbosch-torch's to "
                          "read (bosch_torch_checkpoint_open), a result file libbosch's")
    return errors


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    errors = check_includes(sys.argv[1]) + check_cli(sys.argv[1])
    if len(sys.argv) > 2:
        errors += check_calls(sys.argv[2])
    for e in errors:
        print("FAIL", e)
    if not errors:
        print("ok: module map respected, no include cycle, lib/lns a stack, cli/ reads no JSON" +
              (", no call cycle between files" if len(sys.argv) > 2 else ""))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

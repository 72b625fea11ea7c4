#!/usr/bin/env python3
"""The house map in docs/develop.md matches the tree.

Usage: house-map-test.py SOURCE_DIR

Reads the map's block (between "<!-- house-map -->" and "<!-- /house-map -->"):
one line per folder, lowest layer first, "LAYER  FOLDER  what it owns". Checks
that every folder the map names exists and every folder there is (each
top-level one of git's files, and each folder under cli/) is named; that no
file includes one from a higher layer (a #include resolved to a file of the
tree); that no command folder includes another's; that no two files include
each other, directly or around a circle; and that no header in cli/ is over
150 lines.
"""
import os
import re
import subprocess
import sys

MAX_CLI_HEADER = 150


def fail(msgs):
    for m in msgs:
        print("FAIL:", m)
    return 1 if msgs else 0


def read_map(src):
    text = open(os.path.join(src, "docs/develop.md"), encoding="utf-8").read()
    m = re.search(r"<!-- house-map -->\n```\n(.*?)```\n<!-- /house-map -->", text, re.S)
    if not m:
        sys.exit("FAIL: docs/develop.md has no house-map block")
    layers = {}  # folder -> layer number
    for line in m.group(1).splitlines():
        f = line.split()
        if len(f) < 3 or not (f[0].isdigit() or f[0] == "-") or not f[1].endswith("/"):
            sys.exit(f"FAIL: house map line is not 'LAYER FOLDER/ what it owns': {line!r}")
        layers[f[1].rstrip("/")] = int(f[0]) if f[0] != "-" else None
    return layers


def tree_folders(src):
    try:
        files = subprocess.run(["git", "-C", src, "ls-files"], check=True, capture_output=True,
                               text=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):  # a source tree without git: walk it, builds left out
        files = []
        for root, dirs, names in os.walk(src):
            rel = os.path.relpath(root, src)
            dirs[:] = [d for d in dirs if rel != "." or (not d.startswith(("build", ".")) or d == ".ci")]
            files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    files = [f for f in files if os.path.exists(os.path.join(src, f))]
    top = {f.split("/")[0] for f in files if "/" in f}
    cli = {"cli/" + f.split("/")[1] for f in files if f.startswith("cli/") and f.count("/") >= 2}
    return files, top | cli


def folder_of(path, layers):
    """The most specific folder of the map that holds path."""
    parts = path.split("/")
    for n in range(len(parts) - 1, 0, -1):
        d = "/".join(parts[:n])
        if d in layers:
            return d
    return None


def resolve(path, inc, angle, fileset):
    """The tree's file that #include names, or None (a system or generated header)."""
    here = os.path.dirname(path)
    cands = []
    if angle:
        cands = ["libcowbench/include/" + inc]
    else:
        cands = [os.path.normpath(os.path.join(here, inc)), "cli/" + inc, "libcowbench/src/" + inc,
                 "libcowbench/include/" + inc, "workloads/" + inc, "tests/" + inc]
    for c in cands:
        if c in fileset:
            return c
    return None


def main(src):
    layers = read_map(src)
    files, folders = tree_folders(src)
    msgs = []
    for d in sorted(set(layers) - folders):
        msgs.append(f"the house map names {d}/, which the tree lacks")
    for d in sorted(folders - set(layers)):
        msgs.append(f"{d}/ is not in the house map (docs/develop.md)")

    fileset = set(files)
    code = [f for f in files if f.endswith((".c", ".h", ".def")) and not f.startswith("kernel/")]
    edges = {}
    inc_re = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
    for f in code:
        text = open(os.path.join(src, f), encoding="utf-8", errors="replace").read()
        edges[f] = set()
        for kind, inc in inc_re.findall(text):
            t = resolve(f, inc, kind == "<", fileset)
            if t and t != f:
                edges[f].add(t)
        if f.startswith("cli/") and f.endswith(".h") and text.count("\n") > MAX_CLI_HEADER:
            msgs.append(f"{f} has {text.count(chr(10))} lines (a cli/ header holds at most {MAX_CLI_HEADER})")

    for f, targets in sorted(edges.items()):
        a = folder_of(f, layers)
        for t in sorted(targets):
            b = folder_of(t, layers)
            if a is None or b is None or a == b or layers[a] is None or layers[b] is None:
                continue
            if layers[b] > layers[a]:
                msgs.append(f"{f} ({a}/, layer {layers[a]}) includes {t} ({b}/, layer {layers[b]}): an arrow back up")
            elif layers[b] == layers[a]:
                msgs.append(f"{f} includes {t}: {a}/ and {b}/ are side by side and use neither's files")

    # Circles: Tarjan's strongly connected components of the include graph.
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    for c in comps:
        msgs.append("include circle: " + " -> ".join(c))
    if not msgs:
        print(f"ok: {len(layers)} folders mapped, {len(code)} files, "
              f"{sum(len(t) for t in edges.values())} includes, no arrow up, no circle")
    return fail(msgs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

#!/usr/bin/env python3
"""No function without a caller outside the tests, and no call circle.

Usage: dead-code-test.py PRODUCT.o... --callers CALLER.o|CALLER.c...

PRODUCT objects are the library's and the cowbench program's; CALLER objects
(bench/'s tools, the Redis study's load generator) may call into them too; a tool this machine does not build
(analysis/redis/redis_load.c without hiredis) is given as its source, whose calls are read. Test objects are not given: a
function only a test calls is dead, unless it is listed in KEPT below with
why. A global function counts as called when another object's `nm -u` names
it, or its own object refers to it (a relocation, `readelf -r`); one only its
own file calls and the compiler inlined everywhere is reported as well: make
it static.

Calls run one way, as includes do (house-map-test.py): no two PRODUCT objects
call into each other, directly or around a circle (A's `nm -u` names what B
defines, and B's, through others, what A defines). The output layer is the
model: output.c calls the writers out_*.c, which call out_cell.c.
"""
import re
import subprocess
import sys

# Library API whose only caller is a test, kept on purpose (the decision and why).
KEPT = {
    # The histogram's readers: what a library user does with a row's lat_hist, and how the tests
    # check the histogram's 0.4 % accuracy claim against exact percentiles.
    "cb_hist_percentile": "hist.h reader API",
    "cb_hist_mean": "hist.h reader API",
    # The name of the verdict cb_noise_judge returns in its public struct (enum -> text).
    "cb_noise_name": "compare.h: names cb_noise_judge's verdict",
    # The floor a COW copy is compared with (memcpy of one page), a measurement primitive of touch.h.
    "cb_memcpy_page_ns": "touch.h measurement primitive",
    # The plugin contract's check of one entry, for a program that defines its own workload
    # (the registry checks its table through the same code).
    "cb_workload_check": "workload.h plugin API",
    # Private test seam of the settings journal (libcowbench/src/sysctl_test_hook.h, not installed):
    # a plain file stands in for a sysctl so the journal's attacks run without touching the system.
    "cb_sysctl_test_key": "private test seam",
}
# Reported, not failed, while a branch that removes them is in flight (none now).
PENDING = set()
# Call circles, reported and not failed, while a branch that takes them apart is in flight (none now):
# frozenset of objects as short() names them -> why.
PENDING_CIRCLES = {}


def nm(args):
    out = subprocess.run(["nm"] + args, check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def short(obj):
    """An object as the build names it under its target: src/output.c.o, run/cmd_run.c.o."""
    return obj.split(".dir/", 1)[-1]


def call_circles(objects):
    """The sets of objects that call each other, directly or around a circle."""
    defs = {o: set() for o in objects}
    undef = {o: set() for o in objects}
    for line in nm(["-A", "-g"] + objects):
        obj, rest = line.rsplit(":", 1)
        f = rest.split()
        if len(f) == 2 and f[0] == "U":
            undef[obj].add(f[1])
        elif len(f) == 3 and f[1] in "TDBRCVW":
            defs[obj].add(f[2])
    calls = {a: [b for b in objects if b != a and undef[a] & defs[b]] for a in objects}
    reach = {}
    for a in objects:  # every object a's calls lead to
        seen, todo = set(), list(calls[a])
        while todo:
            b = todo.pop()
            if b not in seen:
                seen.add(b)
                todo += calls[b]
        reach[a] = seen
    return {frozenset([a] + [b for b in reach[a] if a in reach[b]]) for a in objects if a in reach[a]}


def main(argv):
    if "--callers" in argv:
        i = argv.index("--callers")
        product, callers = argv[:i], argv[i + 1:]
    else:
        product, callers = argv, []
    if not product:
        print("usage: dead-code-test.py PRODUCT.o... --callers CALLER.o...", file=sys.stderr)
        return 2
    defined = {}  # function -> its object
    for line in nm(["-A", "--defined-only", "-g"] + product):
        f = line.rsplit(":", 1)[-1].split()
        if len(f) == 3 and f[1] == "T":
            defined[f[2]] = line.rsplit(":", 1)[0]
    objects = product + [c for c in callers if not c.endswith(".c")]
    called = {line.split()[-1] for line in nm(["-A", "-u"] + objects) if line.split()}
    for c in callers:
        if c.endswith(".c"):
            with open(c, encoding="utf-8") as fp:
                called |= set(re.findall(r"\b([a-z_][a-z0-9_]*)\s*\(", fp.read()))
    own_refs = {o: set() for o in product}
    out = subprocess.run(["readelf", "-rW"] + product, check=True, capture_output=True, text=True).stdout
    o = None
    for line in out.splitlines():
        if line.startswith("File: "):
            o = line[6:].strip()
        elif o is not None:
            f = line.split()
            if len(f) >= 5:
                own_refs[o].add(f[4])
    dead = sorted(f for f, o in defined.items() if f != "main" and f not in called and f not in own_refs[o])
    if len(defined) < 100:
        print(f"FAIL: only {len(defined)} functions defined in {len(product)} objects: wrong objects?")
        return 1
    bad = [f for f in dead if f not in KEPT and f not in PENDING]
    stale = [f for f in KEPT if f not in dead]
    for f in dead:
        if f in PENDING:
            print(f"note: {f} ({defined[f]}) has no caller outside tests (cli/stat, pending issue 38)")
    for f in bad:
        print(f"FAIL: {f} ({defined[f]}) has no caller outside the tests: remove it, or make it static")
    for f in stale:
        print(f"FAIL: {f} is in KEPT but is {'gone' if f not in defined else 'called now'}: drop it from the list")
    circles = {frozenset(short(o) for o in c) for c in call_circles(product)}
    for c in sorted(circles, key=sorted):
        if c in PENDING_CIRCLES:
            print(f"note: call circle {' <-> '.join(sorted(c))}: {PENDING_CIRCLES[c]}, pending")
        else:
            print(f"FAIL: call circle {' <-> '.join(sorted(c))}: move what both call into a lower file")
    for c in PENDING_CIRCLES:
        if c not in circles:
            print(f"note: call circle {' <-> '.join(sorted(c))} is gone: drop it from PENDING_CIRCLES")
    if bad or stale or circles - PENDING_CIRCLES.keys():
        return 1
    print(f"ok: {len(defined)} functions, every one called outside the tests, no call circle "
          f"(kept on purpose: {', '.join(sorted(KEPT))})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

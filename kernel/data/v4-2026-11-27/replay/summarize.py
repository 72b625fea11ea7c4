#!/usr/bin/env python3
"""Per program and mechanism: the replays' rows (rounds 1..3 of every boot: instructions, exact counts;
round 0: user traps from perf) and the /proc/vmstat cow_* deltas around each run. A kernel's boots are
the folders KIND, KIND-2, ... usage: summarize.py DIR"""
import csv, os, statistics, sys

d = sys.argv[1]
mechs = [("stock", "stock"), ("stock", "stock-populate"), ("patched", "off"), ("patched", "adaptive"),
         ("patched", "fixed16"), ("patched", "reuse16"), ("patched", "populate")]


def boots(kind):
    return [b for b in [kind] + [f"{kind}-{i}" for i in range(2, 10)] if os.path.isdir(os.path.join(d, b))]


def row(kind, prog, mech, tag):
    with open(os.path.join(d, kind, f"{prog}-{mech}-{tag}.csv")) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1 and rows[0]["status"] == "ok", (kind, prog, mech, tag)
    return rows[0]


def vm(kind, prog, mech, tag):
    def load(ext):
        with open(os.path.join(d, kind, f"{prog}-{mech}-{tag}.{ext}")) as f:
            return {k: int(v) for k, v in (l.split() for l in f if l.strip())}
    a, b = load("vm0"), load("vm1")
    return {k: b[k] - a[k] for k in b}


def num(r, k):
    return int(float(r[k])) if r.get(k, "") != "" else None


def same(vals):
    """One value when every round agrees, else min..max."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return "–"
    return f"{vals[0]:,}" if min(vals) == max(vals) else f"{min(vals):,}..{max(vals):,}"


cols = ["program", "kernel", "mechanism", "touched", "faults", "user_traps", "cow_fault(vmstat)", "precopied(vmstat)",
        "populate_batch(vmstat)", "reuse_around_pages(vmstat)", "copied_pages", "wasted", "anon_growth_kb",
        "instr_median", "instr_min..max", "instr_per_boot", "break_instr_median", "instr_vs_off_%"]
print("\t".join(cols))
for prog in ("cpython", "redis"):
    base = {}
    for kind, mech in mechs:
        rs = [row(b, prog, mech, t) for b in boots(kind) for t in (1, 2, 3)]
        vs = [vm(b, prog, mech, t) for b in boots(kind) for t in (1, 2, 3)]
        r0s = [row(b, prog, mech, 0) for b in boots(kind)]
        el = [num(r, "elapsed_ns") for r in rs]
        per_boot = [statistics.median(el[i:i + 3]) for i in range(0, len(el), 3)]
        med = statistics.median(el)
        base.setdefault(kind, med)
        brk = [num(r, "break_ns") for r in rs if num(r, "break_ns") is not None]
        ref = base.get("patched") if kind == "patched" else base["stock"]
        print("\t".join([prog, kind, mech, same([num(r, "touched") for r in rs]),
                         same([num(r, "faults") for r in rs]), same([num(r0, "perf_minflt") for r0 in r0s]),
                         same([v.get("cow_fault") for v in vs]), same([v.get("cow_precopy") for v in vs]),
                         same([v.get("cow_populate_batch_pages") for v in vs]),
                         same([v.get("cow_reuse_around_pages") for v in vs]),
                         same([num(r, "copied_pages") for r in rs]), same([num(r, "precopy_wasted") for r in rs]),
                         same([num(r, "anon_growth_kb") for r in rs]), f"{med:,.0f}", f"{min(el):,}..{max(el):,}",
                         " / ".join(f"{m:,.0f}" for m in per_boot),
                         f"{statistics.median(brk):,.0f}" if brk else "–",
                         f"{(med / ref - 1) * 100:+.1f}"]))

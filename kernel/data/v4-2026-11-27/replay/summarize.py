#!/usr/bin/env python3
"""Per program and mechanism: the replays' rows (rounds 1..3 of every boot: instructions, exact counts;
round 0: user traps from perf) and the /proc/vmstat cow_* deltas around each run. A kernel's boots are
the folders KIND, KIND-2, ... usage: summarize.py [--markdown] DIR (--markdown: RESULTS.md's two tables)

A count every run gave alike is that value; any other column is the Hodges-Lehmann centre of the runs
with its exact interval, and instr_vs_ref the Hodges-Lehmann ratio of the instructions against patched
off (stock's rows and patched off: against stock, across boots) as a % change with its exact interval,
all from `cowbench estimate` (kernel/tests/estimate.py); *_level columns give the intervals' levels."""
import csv, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests"))
import estimate  # noqa: E402

markdown = sys.argv[1:2] == ["--markdown"]
d = sys.argv[-1]
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


def interval(o):
    return f"{o['ci_lo']:,.0f}..{o['ci_hi']:,.0f}"


# Every run's values, per (program, mechanism): rounds 1..3 of each boot, and round 0's perf traps.
runs, per_boot = {}, {}
for prog in ("cpython", "redis"):
    for kind, mech in mechs:
        rs = [row(b, prog, mech, t) for b in boots(kind) for t in (1, 2, 3)]
        vs = [vm(b, prog, mech, t) for b in boots(kind) for t in (1, 2, 3)]
        r0s = [row(b, prog, mech, 0) for b in boots(kind)]
        runs[(prog, mech)] = {
            "kind": kind, "touched": [num(r, "touched") for r in rs], "faults": [num(r, "faults") for r in rs],
            "user_traps": [num(r0, "perf_minflt") for r0 in r0s],
            "cow_fault(vmstat)": [v.get("cow_fault") for v in vs], "precopied(vmstat)": [v.get("cow_precopy") for v in vs],
            "populate_batch(vmstat)": [v.get("cow_populate_batch_pages") for v in vs],
            "reuse_around_pages(vmstat)": [v.get("cow_reuse_around_pages") for v in vs],
            "copied_pages": [num(r, "copied_pages") for r in rs], "wasted": [num(r, "precopy_wasted") for r in rs],
            "anon_growth_kb": [num(r, "anon_growth_kb") for r in rs], "instr": [num(r, "elapsed_ns") for r in rs],
            "break_instr": [num(r, "break_ns") for r in rs]}
        for b in boots(kind):
            per_boot[(f"{prog} {mech}", b)] = [num(row(b, prog, mech, t), "elapsed_ns") for t in (1, 2, 3)]

COUNTS = ["touched", "faults", "user_traps", "cow_fault(vmstat)", "precopied(vmstat)", "populate_batch(vmstat)",
          "reuse_around_pages(vmstat)", "copied_pages", "wasted", "anon_growth_kb"]


def values(col):
    return {(prog, mech): [v for v in r[col] if v is not None] for (prog, mech), r in runs.items()}


counts = {c: estimate.estimate({k: v for k, v in values(c).items() if len(set(v)) > 1}) for c in COUNTS}
brk = estimate.estimate({k: v for k, v in values("break_instr").items() if v})
boot_est = estimate.estimate(per_boot)
# instructions: patched mechanisms against patched off; stock's and patched off against stock (across boots)
instr = {}
for (prog, mech), r in runs.items():
    instr[(f"{prog} {r['kind']}", "ref" if mech in ("off", "stock") else mech)] = r["instr"]
    if mech == "off":
        instr[(f"{prog} stock", "off")] = r["instr"]
instr = estimate.estimate(instr, baseline="ref")


def count(prog, mech, c):
    v = values(c)[(prog, mech)]
    if not v:
        return "–"
    if len(set(v)) == 1:
        return f"{v[0]:,}"
    o = counts[c][(prog, mech)]
    return f"{o['centre']:,.1f} [{interval(o)}, {estimate.pct(o['ci_level'])}]"


if markdown:
    print("Counts: the value every run gave, else the Hodges–Lehmann centre of the runs (intervals in summary.tsv); "
          "instructions (M): Hodges–Lehmann centre of the 6 clean runs [exact interval, "
          + estimate.pct(instr[("cpython patched", "ref")]["ci_level"]) + "]; madvise: the same of the populate "
          "calls' part; vs off / stock: Hodges–Lehmann ratio as a % change [exact interval, "
          + estimate.pct(instr[("cpython stock", "off")]["change_ci_level"]) + "] (`cowbench estimate`).")
    names = {"stock": "stock", "stock-populate": "stock populate"}
    pages = {"cpython": ("CPython (child, 7,882 pages)", 7882), "redis": ("Redis BGSAVE (parent, 5,596 pages)", 5596)}


def mcount(prog, mech, c):
    v = values(c)[(prog, mech)]
    if not v:
        return "–"
    return f"{v[0]:,}" if len(set(v)) == 1 else f"{counts[c][(prog, mech)]['centre']:,.1f}".removesuffix(".0")


def mega(o, k="centre"):
    return f"{o[k] / 1e6:.2f}"


for prog in ("cpython", "redis") if markdown else ():
    print()
    print(f"| {pages[prog][0]} | faults | traps | cow_fault | pre-copied | batched | copied | wasted | growth KiB | "
          "instructions (M) | madvise (M) | vs off / stock |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, mech in mechs:
        o = instr[(f"{prog} {kind}", "ref" if mech in ("off", "stock") else mech)]
        ref = instr.get((f"{prog} stock", "off")) if mech == "off" else o
        b = brk.get((prog, mech))
        print(f"| {names.get(mech, 'v4 ' + mech)} | " + " | ".join(mcount(prog, mech, c) for c in (
            "faults", "user_traps", "cow_fault(vmstat)", "precopied(vmstat)", "populate_batch(vmstat)", "copied_pages",
            "wasted", "anon_growth_kb")) + f" | {mega(o)} [{mega(o, 'ci_lo')} … {mega(o, 'ci_hi')}] | " +
            (f"{mega(b)}" if b else "–") + " | " + (estimate.change(ref) or "–") + (" vs stock" if mech == "off" else "") + " |")
if markdown:
    sys.exit(0)

cols = ["program", "kernel", "mechanism"] + COUNTS + [
    "instr_hl", "instr_interval", "instr_level", "instr_per_boot_hl", "break_instr_hl", "break_instr_interval",
    "instr_vs_ref_%", "instr_vs_ref_level"]
print("\t".join(cols))
for prog in ("cpython", "redis"):
    for kind, mech in mechs:
        o = instr[(f"{prog} {kind}", "ref" if mech in ("off", "stock") else mech)]
        ref = instr.get((f"{prog} stock", "off")) if mech == "off" else o
        b = brk.get((prog, mech))
        print("\t".join([prog, kind, mech] + [count(prog, mech, c) for c in COUNTS] + [
            f"{o['centre']:,.0f}", interval(o), estimate.pct(o["ci_level"]),
            " / ".join(f"{boot_est[(f'{prog} {mech}', bt)]['centre']:,.0f}" for bt in boots(kind)),
            f"{b['centre']:,.0f}" if b else "–", interval(b) if b else "–",
            (estimate.change(ref) or "–") + (" vs stock" if mech == "off" else ""),
            estimate.pct(ref["change_ci_level"]) if "change_ci_level" in ref else "–"]))

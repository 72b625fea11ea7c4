#!/usr/bin/env python3
"""The per-mechanism table of Redis save cycles (kernel/tests/redis-mech.sh's cycles.csv rows).

    kernel/tests/redis-mech-table.py [--base LABEL] CYCLES.CSV...

Per (write mix, key pattern, mode): the number of cycles and, per column, the Hodges-Lehmann
centre of the cycles with its exact interval (one value where every cycle gave it); the parent's
traps and Redis's COW size also as the Hodges-Lehmann ratio against the BASE mode (default "off")
of the same mix and pattern, a % change with its exact interval, and whether the mode meets
"parent traps -50 % with COW size <= +1 %" (on the two ratios' estimates).  Then, per mix and
pattern, the BASE mode's traps, copies and the share of its traps that copy nothing (the
Hodges-Lehmann centre of the cycles' (traps - copies) / traps): the most a mechanism that copies
nothing can cut.  Every number comes
from `cowbench estimate` (kernel/tests/estimate.py); the intervals' levels, which the number of
cycles fixes, are stated under the table.  A markdown table on stdout.  Bad input: one line on
stderr, exit 2.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import estimate  # noqa: E402

COLS = [  # (column, heading, scale)
    ("parent_minflt", "parent traps", 1),
    ("parent_wpcopy", "parent COW copies", 1),
    ("other", "traps − copies", 1),
    ("cow_precopy", "pre-copied", 1),
    ("cow_reuse_around", "around events", 1),
    ("cow_reuse_around_pages", "around PTEs", 1),
    ("rdb_last_cow_size", "COW size MB", 1e-6),
    ("latest_fork_usec", "fork us", 1),
]


def fail(msg):
    print("redis-mech-table: " + msg, file=sys.stderr)
    sys.exit(2)


def fmt(v, scale):
    v *= scale
    return f"{v:,.2f}" if scale != 1 else f"{v:,.0f}"


def cell(o, scale):
    """'centre [lo–hi]', or the one value every cycle gave."""
    if o is None:
        return "–"
    c, lo, hi = (fmt(o[k], scale) for k in ("centre", "ci_lo", "ci_hi"))
    return c if lo == hi else f"{c} [{lo}–{hi}]"


def main(argv):
    base = "off"
    if len(argv) >= 2 and argv[0] == "--base":
        base, argv = argv[1], argv[2:]
    if not argv:
        fail("usage: redis-mech-table.py [--base LABEL] CYCLES.CSV...")
    groups = {}  # (mix, pattern, label) -> list of rows
    order = []
    for path in argv:
        try:
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            fail(f"cannot read {path}: {e}")
        need = {"label", "pattern", "during_sets", "after_sets"} | {c for c, _, _ in COLS if c != "other"}
        if not rows or not need <= set(rows[0]):
            fail(f"{path}: no redis_load --cycles-out rows")
        for n, r in enumerate(rows, 2):
            try:
                mix = f"{int(r['during_sets'])}/{int(r['after_sets'])}"
                key = (mix, r["pattern"], r["label"])
                for c, _, _ in COLS:
                    if c != "other" and r[c] != "":
                        int(r[c])
            except (KeyError, ValueError, TypeError):
                fail(f"{path}:{n}: not a redis_load --cycles-out row")
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(r)

    # One cowbench estimate per column: set = mix and pattern, group = mode.
    est = {}
    for c, _, _ in COLS:
        vals = {}
        for (mix, pattern, label), rows in groups.items():
            if c == "other":  # the traps that copied nothing: reuse faults after the save, first touches
                v = [int(r["parent_minflt"]) - int(r["parent_wpcopy"]) for r in rows
                     if r["parent_minflt"] != "" and r["parent_wpcopy"] != ""]
            else:
                v = [int(r[c]) for r in rows if r.get(c, "") != ""]
            if v:
                vals[(f"{mix} {pattern}", label)] = v
        compared = c in ("parent_minflt", "rdb_last_cow_size")
        est[c] = estimate.estimate(vals, baseline=base if compared else None)

    levels, change_levels = set(), set()
    print("| SETs during/after | keys | mode | cycles | " + " | ".join(h for _, h, _ in COLS) +
          f" | traps vs {base} | COW size vs {base} | −50 % traps, ≤ +1 % COW |")
    print("|" + "---|" * (len(COLS) + 7))
    for key in order:
        mix, pattern, label = key
        k = (f"{mix} {pattern}", label)
        cells = []
        for c, _, s in COLS:
            o = est[c].get(k)
            if o is not None:
                levels.add((o["n"], o["ci_level"]))
            cells.append(cell(o, s))
        t, m = est["parent_minflt"].get(k, {}), est["rdb_last_cow_size"].get(k, {})
        dt, dc, verdict = estimate.change(t) or "–", estimate.change(m) or "–", "–"
        if "ratio" in t and "ratio" in m:
            change_levels.add(t["change_ci_level"])
            change_levels.add(m["change_ci_level"])
            verdict = ("stock kernel" if label == "stock" else  # a baseline, not a mechanism
                       "**met**" if t["ratio"] <= 0.5 and m["ratio"] <= 1.01 else "not met")
        print(f"| {mix} | {'Gaussian' if pattern == 'gauss' else 'uniform' if pattern == 'random' else pattern}"
              f" | {label} | {len(groups[key])} | " + " | ".join(cells) + f" | {dt} | {dc} | {verdict} |")
    share = estimate.estimate({(f"{mix} {pattern}", label): [
        (int(r["parent_minflt"]) - int(r["parent_wpcopy"])) / int(r["parent_minflt"]) for r in groups[(mix, pattern, label)]
        if r["parent_minflt"] not in ("", "0") and r["parent_wpcopy"] != ""]
        for mix, pattern, label in order if label == base})
    if share:
        print()
        print(f"| SETs during/after | keys | {base}: traps | copies | traps − copies | share of the traps that copy "
              "nothing: the most a mechanism that copies nothing can cut |")
        print("|---|---|---|---|---|---|")
        for (s, label), o in share.items():
            mix, pattern = s.split(" ", 1)
            k = (s, label)
            print(f"| {mix} | {'Gaussian' if pattern == 'gauss' else 'uniform' if pattern == 'random' else pattern} | "
                  + " | ".join(cell(est[c].get(k), 1) for c in ("parent_minflt", "parent_wpcopy", "other")) +
                  f" | {100 * o['centre']:.1f} % [{100 * o['ci_lo']:.1f}, {100 * o['ci_hi']:.1f}] |")

    print()
    print("Hodges–Lehmann centre of the cycles [exact interval] (one value where every cycle gave it); "
          "intervals at " + ", ".join(f"{estimate.pct(lv)} ({n} cycles)" for n, lv in sorted(levels)) +
          (f"; *vs {base}*: the Hodges–Lehmann ratio against {base} of the same mix and keys as a % change "
           "[exact interval at " + ", ".join(estimate.pct(lv) for lv in sorted(change_levels)) + "]; "
           "*met*: the two ratios' estimates at most 0.5 and 1.01" if change_levels else "") +
          " (`cowbench estimate`).")


if __name__ == "__main__":
    main(sys.argv[1:])

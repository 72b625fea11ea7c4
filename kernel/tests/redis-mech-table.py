#!/usr/bin/env python3
"""The per-mechanism table of Redis save cycles (kernel/tests/redis-mech.sh's cycles.csv rows).

    kernel/tests/redis-mech-table.py [--base LABEL] CYCLES.CSV...

Per (write mix, key pattern, mode): the number of cycles and, per column, the median with the
min-max of the cycles; the parent's traps and Redis's COW size also as a change of the median
against the BASE mode (default "off") of the same mix and pattern, and whether the mode meets
"parent traps -50 % with COW size <= +1 %". A markdown table on stdout. Bad input: one line on
stderr, exit 2.
"""
import csv
import statistics
import sys

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


def cell(vals, scale):
    if not vals:
        return "–"
    med = statistics.median(vals)
    return f"{fmt(med, scale)} ({fmt(min(vals), scale)}–{fmt(max(vals), scale)})"


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
    print("| SETs during/after | keys | mode | cycles | " + " | ".join(h for _, h, _ in COLS) +
          f" | traps vs {base} | COW size vs {base} | −50 % traps, ≤ +1 % COW |")
    print("|" + "---|" * (len(COLS) + 7))
    for key in order:
        mix, pattern, label = key
        rows = groups[key]
        vals = {c: [int(r[c]) for r in rows if r.get(c, "") != ""] for c, _, _ in COLS}
        # the traps that copied nothing: reuse faults after the save, first touches
        vals["other"] = [int(r["parent_minflt"]) - int(r["parent_wpcopy"]) for r in rows
                         if r["parent_minflt"] != "" and r["parent_wpcopy"] != ""]
        ref = groups.get((mix, pattern, base))
        dt = dc = verdict = "–"
        if ref and label != base:
            t0 = statistics.median(int(r["parent_minflt"]) for r in ref)
            c0 = statistics.median(int(r["rdb_last_cow_size"]) for r in ref)
            t1 = statistics.median(vals["parent_minflt"])
            c1 = statistics.median(vals["rdb_last_cow_size"])
            dt_v, dc_v = 100 * (t1 - t0) / t0, 100 * (c1 - c0) / c0
            dt, dc = f"{dt_v:+.1f} %", f"{dc_v:+.1f} %"
            verdict = ("stock kernel" if label == "stock" else  # a baseline, not a mechanism
                       "**met**" if dt_v <= -50 and dc_v <= 1 else "not met")
        print(f"| {mix} | {'Gaussian' if pattern == 'gauss' else 'uniform' if pattern == 'random' else pattern}"
              f" | {label} | {len(rows)} | " + " | ".join(cell(vals[c], s) for c, _, s in COLS) +
              f" | {dt} | {dc} | {verdict} |")


if __name__ == "__main__":
    main(sys.argv[1:])

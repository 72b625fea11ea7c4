#!/usr/bin/env bash
# The main job's report.md opens with the two sections that judge the kernel patch (issue 30), in
# order: the Redis result per mode, then the native projection table; both also as CSV. Rendered
# here from small fixture CSVs (tests/fixtures/report/: a few reps and saves of real runs, the
# study's 16 MiB cells, the host's 16 MiB unit costs) through the same scripts the main job runs:
# analysis/redis/redis-report.py, analysis/study-report.py (with analysis/projection_report.py) and
# analysis/compose-report.py. Only what always holds is checked: headings, their order, the
# columns and statistics named, the CSV columns; never a value that depends on timing.
# usage: tests/report-open-test.sh COWBENCH REPO
set -euo pipefail
COWBENCH=$1
REPO=$2
export COWBENCH # analysis/cbstats.py: the scripts' statistics come from this cowbench
FIX=$REPO/tests/fixtures/report
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
command -v gnuplot >/dev/null || { echo "SKIP: no gnuplot (the study section draws its plots)"; exit 77; }
OUT=$(mktemp -d /tmp/cbtest-report.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
cp -r "$FIX/redis-stock" "$FIX/redis-patched" "$OUT/"
python3 "$REPO/analysis/redis/redis-report.py" "$OUT"
python3 "$REPO/analysis/study-report.py" "$COWBENCH" "$FIX/study.csv" "$OUT" "$FIX/native-units.csv"
# What the main job adds around them: the host's ratios and plot report (any text; they come after).
printf '## What COW costs: the headline ratios\n\n(host)\n' >"$OUT/ratios.md"
printf '# cowbench results\n\n(plots)\n' >"$OUT/report.md"
python3 "$REPO/analysis/compose-report.py" "$OUT" >"$OUT/report.md.new"
mv "$OUT/report.md.new" "$OUT/report.md"
python3 - "$OUT" <<'PY'
import csv
import sys

out = sys.argv[1]
text = open(f"{out}/report.md").read()
lines = text.splitlines()
heads = [l for l in lines if l.startswith("## ")]
fail = []


def check(cond, what):
    if not cond:
        fail.append(what)


# (1) then (2): the report's first section is Redis, its second the native projection.
check(lines and lines[0] == "## Redis BGSAVE under SET load", f"report opens with {lines[:1]}")
check(len(heads) >= 2 and heads[1] == "## Native projection of the study", f"second section: {heads[1:2]}")
check(heads.index("## The study, reproduced") > 1 if "## The study, reproduced" in heads else False,
      "the TCG study table follows the two opening sections")
redis = text.split("## Native projection of the study")[0]
proj = text.split("## Native projection of the study", 1)[1].split("\n## ")[0]

# Redis: per mode fork time, BGSAVE time, COW bytes, wasted copies, and client p50/p99/p99.9/max
# inside the save window, with CIs over the saves (>= 5 per mode in the fixture).
for col in ("fork ms", "BGSAVE s", "COW MiB", "wasted (never written)", "p50 ms", "p99 ms", "p99.9 ms", "max ms"):
    check(col in redis, f"Redis section names '{col}'")
check("inside the save window" in redis and "CI" in redis, "Redis latency is the save window's, with CIs")
for mode in ("stock, stock", "patched, off", "patched, adaptive"):
    check(f"| {mode} | 5 |" in redis, f"Redis row '{mode}' over 5 saves")
rcsv = list(csv.DictReader(open(f"{out}/redis.csv")))
metrics = {r["metric"] for r in rcsv}
for m in ("fork_ms", "bgsave_s", "kernel_cow_mib", "wasted_pages", "in_p50_ms", "in_p99_ms", "in_p999_ms",
          "in_max_ms"):
    check(m in metrics, f"redis.csv has metric {m}")
check(all(int(r["saves"]) >= 5 for r in rcsv if r["metric"] == "in_p999_ms"), "redis.csv: >= 5 saves per mode")
check(all(r["ci_lo"] != "" and r["ci_hi"] != "" for r in rcsv if r["metric"] == "in_p999_ms"),
      "redis.csv: the window's p99.9 has a CI")

# Native projection: the cells table (projected change with bounds, model error per cell) opens it,
# the statistic and its source are said, the unit costs follow the table.
table = [l for l in proj.splitlines() if l.startswith("|")]
check(table and "model error (TCG)" in table[0] and "native Δ runtime [copy, populate]" in table[0],
      f"projection table header: {table[:1]}")
check("unit costs" not in (table[0] if table else ""), "the cells table comes before the unit costs")
check("centre of `elapsed_ns`" in proj and "`study.csv`" in proj, "the measured statistic and its source are said")
check("first write" in proj and "*first*" in proj, "the fixed term is named")
check("Model error (against the centre):" in proj, "the model error is summed up")
pcsv = list(csv.DictReader(open(f"{out}/projection.csv")))
for col in ("model_error_pct", "model_error_centre_pct", "model_error_centre_lo_pct", "model_error_centre_hi_pct",
            "native_change_pct", "native_change_lo_pct", "native_change_hi_pct", "first_ns", "measured_ns",
            "measured_centre_ns"):
    check(pcsv and col in pcsv[0], f"projection.csv has {col}")
rows = [r for r in pcsv if r["model_error_centre_pct"]]
check(len(rows) >= 6, f"projection.csv: cells with a model error ({len(rows)})")
for r in rows:  # what always holds: the interval holds its point, the bounds are ordered
    lo, mid, hi = (float(r[k]) for k in ("model_error_centre_lo_pct", "model_error_centre_pct",
                                          "model_error_centre_hi_pct"))
    check(lo <= mid <= hi, f"{r['cell']}: model error {lo} <= {mid} <= {hi}")
    if r["native_change_pct"]:
        a, b, c = (float(r[k]) for k in ("native_change_lo_pct", "native_change_pct", "native_change_hi_pct"))
        check(a <= b <= c, f"{r['cell']}: native change {a} <= {b} <= {c}")
units = list(csv.DictReader(open(f"{out}/unit-costs.csv")))
check(any(u["first_ns"] for u in units if u["source"] == "study"), "unit-costs.csv: the first write per boot")
if fail:
    print("report-open: FAIL\n  " + "\n  ".join(fail))
    print("--- report.md (head) ---\n" + "\n".join(lines[:40]))
    sys.exit(1)
print(f"report-open: ok ({len(heads)} sections; Redis, then the native projection with {len(rows)} cells)")
PY

#!/usr/bin/env bash
# One number, one method (issue 36): the fork/no-fork ratio of one fixture file (a real
# `cowbench matrix --workloads=seq --sizes=16M,64M --fork=1,0 --probes=none` at the default reps)
# must read the same, value and interval, in every place that prints it: summarize (table and
# JSON), compare --by=fork (table and JSON), plot's data file and report.md, and the Python
# reports' path (analysis/cbstats.py through cowbench estimate). Also compare --by=size pairs
# 16M with 64M, and an axis the file lacks is refused with exit 2 naming the file's axes.
# No script under analysis/ computes a spread, quantile or bootstrap of its own (a grep).
# usage: tests/stats-consistency-test.sh COWBENCH REPO
set -euo pipefail
COWBENCH=$1
REPO=$2
FX=$REPO/tests/fixtures/stats_fork.csv
export COWBENCH
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
OUT=$(mktemp -d /tmp/cbtest-stats.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

"$COWBENCH" summarize --quiet --baseline fork=0 --metric=ns_per_page --format=json "$FX" >"$OUT/sum.json"
"$COWBENCH" summarize --quiet --baseline fork=0 --metric=ns_per_page "$FX" >"$OUT/sum.txt"
"$COWBENCH" compare --by=fork=0 --metric=ns_per_page --format=json "$FX" >"$OUT/cmp.json"
"$COWBENCH" compare --by=fork=0 --metric=ns_per_page "$FX" >"$OUT/cmp.txt"
"$COWBENCH" compare --by=size --metric=ns_per_page,faults --format=json "$FX" >"$OUT/size.json"
if command -v gnuplot >/dev/null; then
	"$COWBENCH" plot "$FX" --out "$OUT/plot" >/dev/null
fi
set +e
"$COWBENCH" compare --by=nonsense "$FX" >"$OUT/bad.out" 2>"$OUT/bad.err"
bad=$?
set -e

# The study's scripts have no second method: every interval, ratio and p-value they print comes
# from cowbench estimate (analysis/cbstats.py). Only a median or mean of one repetition's or one
# count's values is theirs; no spread, quantile, bootstrap, distribution or numeric library.
second=$(grep -rnE 'statistics\.(stdev|pstdev|variance|pvariance|quantiles|NormalDist|correlation|linear_regression)|math\.(sqrt|erf|lgamma)|\*\* *0?\.5|import (numpy|scipy|pandas|random)|from (numpy|scipy|pandas|random)|bootstrap\(' \
	--include='*.py' --include='*.sh' "$REPO/analysis" || true)
[ -z "$second" ] || { echo "stats-consistency: FAIL: a statistic of the study's own, not cowbench estimate's:"; echo "$second"; exit 1; }
python3 - "$OUT" "$FX" "$REPO" "$bad" <<'PY'
import csv
import json
import os
import re
import sys

out, fx, repo, bad = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, os.path.join(repo, "analysis"))
import cbstats  # noqa: E402

fail = []


def check(cond, what):
    if not cond:
        fail.append(what)


def size_of(cell):
    return dict(p.split("=", 1) for p in cell.split()).get("size")


summ = {size_of(o["cell"]): o["ratio_text"] for o in map(json.loads, open(f"{out}/sum.json")) if "ratio_text" in o}
comp = {size_of(o["cell"]): o["ratio_text"] for o in map(json.loads, open(f"{out}/cmp.json")) if "ratio_text" in o}
check(set(summ) == {"16M", "64M"}, f"summarize has both ratios: {summ}")
check(summ == comp, f"summarize {summ} and compare {comp} agree")

# The Python reports' path: the fixture's values handed to cowbench estimate (analysis/cbstats.py).
groups = {}
for r in csv.DictReader(open(fx)):
    if r["status"] == "ok" and r.get("rep_kind", "timed") in ("", "timed") and r["ns_per_page"]:
        size = {"16777216": "16M", "67108864": "64M"}[r["size_bytes"]]
        groups.setdefault((size, "fork" + r["fork"]), []).append(float(r["ns_per_page"]))
est = cbstats.estimate(groups, baseline="fork0")
py = {s: est[(s, "fork1")]["ratio_text"] for s in ("16M", "64M")}
check(py == summ, f"python (cowbench estimate) {py} and summarize {summ} agree")

sum_txt, cmp_txt = open(f"{out}/sum.txt").read(), open(f"{out}/cmp.txt").read()
for size, text in summ.items():
    check(any(size in l and text in l for l in sum_txt.splitlines()), f"summarize's table prints {size} {text}")
    check(any(size in l and text in l and "worse" in l for l in cmp_txt.splitlines()),
          f"compare's table prints {size} {text} worse")
if os.path.isdir(f"{out}/plot"):
    dat = open(f"{out}/plot/data/cost.dat").read()
    # report.md as it reads: without the Markdown writer's escapes (an interval's "[" is written "\[")
    rep = re.sub(r"\\(.)", r"\1", open(f"{out}/plot/report.md").read())
    for size, text in summ.items():
        check(any(f'"{size}"' in l and f'"{text}"' in l for l in dat.splitlines()), f"cost.dat draws {size} {text}")
        check(any(f"size={size}" in l and text in l for l in rep.splitlines()), f"report.md prints {size} {text}")
else:
    print("note: no gnuplot, plot's data not checked")

# --by=size: 16M against 64M, cell by cell (fork=1 and fork=0), the counts 4x apart after fork.
size = [json.loads(l) for l in open(f"{out}/size.json")]
both = [o for o in size if o["present"] == "both"]
check(len(both) == 4 and all(o["old"] == "size=16M" and o["new"] == "size=64M" for o in both),
      f"--by=size compares 4 lines 16M -> 64M: {[(o['old'], o['new'], o['present']) for o in size]}")
faults = [o for o in both if o["metric"] == "faults" and "fork=1" in o["cell"]]
# Every rep 4x apart: the interval is that point, and the one spelling prints it once (cb_ratio_text).
check(faults and faults[0].get("ratio_text") == "4x" and faults[0].get("ratio_ci_lo") == 4
      and faults[0].get("ratio_ci_hi") == 4, f"fork=1 faults 16M -> 64M: {faults}")

err = open(f"{out}/bad.err").read()
check(bad == 2 and err.count("\n") == 1 and "their axes: size, fork" in err and not open(f"{out}/bad.out").read(),
      f"--by=nonsense: exit {bad}, {err!r}")

if fail:
    print("stats-consistency: FAIL\n  " + "\n  ".join(fail))
    sys.exit(1)
print(f"stats-consistency: ok ({summ})")
PY

#!/usr/bin/env bash
# One number, one method for the kernel evidence scripts: no Python or shell under kernel/tests or
# kernel/data computes a median, spread, quantile or min-max range of its own (a grep, proven on a
# sample of the old scripts' lines), and the three that make kernel/RESULTS.md's tables from raw
# data (redis-mech-table.py, the replay and large-folio summarize.py) run on their bundled data
# through cowbench estimate: the Redis and replay rows are RESULTS.md's, summary.tsv and summary.md are what
# the scripts make now, the levels are the engine's.  Skips (77) the runs without a built cowbench.
# usage: tests/kernel-stats-test.sh COWBENCH REPO
set -euo pipefail
COWBENCH=${1:-}
REPO=$2
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }

# A second statistic: the statistics module, a numeric library, median/quantile/stdev/bootstrap
# calls, min(x) and max(x) of one sequence on one line (a range printed as a spread), awk sorts.
PAT='statistics\.|(import|from) +(statistics|numpy|scipy|pandas)|\bmin\(([A-Za-z_][A-Za-z_0-9.]*)\).*\bmax\(\3\)|\bmax\(([A-Za-z_][A-Za-z_0-9.]*)\).*\bmin\(\4\)|\bmedian\(|quantiles?\(|stdev|percentile|bootstrap|asort\(|NR */ *2'
# The pattern catches what the scripts did before they used the engine (lines of the old ones).
sample=$(mktemp /tmp/cbtest-kstats.XXXXXX)
trap 'rm -rf "$sample" "${OUT:-}"' EXIT
cat >"$sample" <<'OLD'
import statistics
    med = statistics.median(vals)
    return f"{fmt(med, scale)} ({fmt(min(vals), scale)}–{fmt(max(vals), scale)})"
    return f"{vals[0]:,}" if min(vals) == max(vals) else f"{min(vals):,}..{max(vals):,}"
            cells.append(f"{v:,.1f} [{min(v):,.0f}, {max(v):,.0f}]" if v else "")
OLD
[ "$(grep -cE "$PAT" "$sample")" = 5 ] || { echo "kernel-stats: FAIL: the grep misses a second statistic"; exit 1; }
printf 'room=max(0,limit-a); n=min(nr,room)\n' >"$sample"
! grep -qE "$PAT" "$sample" || { echo "kernel-stats: FAIL: the grep takes a clamp for a spread"; exit 1; }
second=$(grep -rnE "$PAT" --include='*.py' --include='*.sh' "$REPO/kernel/tests" "$REPO/kernel/data" || true)
[ -z "$second" ] || { echo "kernel-stats: FAIL: a statistic of the kernel scripts' own, not cowbench estimate's:"; echo "$second"; exit 1; }

[ -n "$COWBENCH" ] && [ -x "$COWBENCH" ] || { echo "SKIP: no cowbench program; the grep passed"; exit 77; }
export COWBENCH
OUT=$(mktemp -d /tmp/cbtest-kstats.XXXXXX)
V4=$REPO/kernel/data/v4-2026-11-27
D=$V4/redis-keys
python3 "$REPO/kernel/tests/redis-mech-table.py" "$D/stock-during/cycles.csv" "$D/patched-during/cycles.csv" >"$OUT/redis-a.md"
python3 "$REPO/kernel/tests/redis-mech-table.py" "$D/stock-after/cycles.csv" "$D/patched-after/cycles.csv" >"$OUT/redis-b1.md"
python3 "$REPO/kernel/tests/redis-mech-table.py" "$D/patched-after2/cycles.csv" >"$OUT/redis-b2.md"
python3 "$V4/replay/summarize.py" "$V4/replay" >"$OUT/replay.tsv"
python3 "$V4/replay/summarize.py" --markdown "$V4/replay" >"$OUT/replay.md"
python3 "$V4/large-folio/summarize.py" "$V4"/large-folio/{patched,stock}-[12].txt >"$OUT/large-folio.md"
printf 'label,pattern\n' >"$OUT/bad.csv"
set +e
python3 "$REPO/kernel/tests/redis-mech-table.py" "$OUT/bad.csv" >"$OUT/bad.out" 2>"$OUT/bad.err"
bad=$?
set -e

python3 - "$OUT" "$REPO" "$V4" "$bad" <<'PY'
import sys

out, repo, v4, bad = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
fail = []


def check(cond, what):
    if not cond:
        fail.append(what)


results = open(f"{repo}/kernel/RESULTS.md", encoding="utf-8").read().splitlines()
for name, rows in (("redis-a", 12), ("redis-b1", 8), ("redis-b2", 6)):
    text = open(f"{out}/{name}.md", encoding="utf-8").read()
    body = [l for l in text.splitlines() if l.startswith("| ") and " | 3 | " in l]
    check(len(body) == rows, f"{name}: {rows} rows of 3 cycles, got {len(body)}")
    check("intervals at 75 % (3 cycles)" in text and "exact interval at 90 %" in text,
          f"{name}: the engine's levels for 3 cycles and 3 + 3 (75 %, 90 %) stated")
    missing = [l for l in body if l not in results]
    check(not missing, f"{name}: kernel/RESULTS.md lacks the rows the script makes now: {missing[:2]}")
check(any("| reuse16 | 3 |" in l and "**met**" in l for l in open(f"{out}/redis-b1.md")), "redis-b1: reuse16 met")

tsv = open(f"{out}/replay.tsv", encoding="utf-8").read()
check(tsv == open(f"{v4}/replay/summary.tsv", encoding="utf-8").read(), "replay: summary.tsv is what summarize.py makes now")
lines = tsv.splitlines()
check(len(lines) == 15 and all(l.count("\t") == lines[0].count("\t") for l in lines),
      f"replay: a header and 14 rows of equal width, got {len(lines)} lines")
check("96.88 %" in tsv and "95.89 %" in tsv, "replay: the levels of 6 runs and 6 + 6 (96.88 %, 95.89 %)")
rows = [l for l in open(f"{out}/replay.md", encoding="utf-8").read().splitlines() if l.startswith("| ")]
check(len(rows) == 16, f"replay --markdown: two tables of 7 mechanisms, got {len(rows)} lines")
check(all(l in results for l in rows), "replay --markdown: kernel/RESULTS.md holds the tables the script makes now")
lf = open(f"{out}/large-folio.md", encoding="utf-8").read()
check(lf == open(f"{v4}/large-folio/summary.md", encoding="utf-8").read(), "large-folio: summary.md is what summarize.py makes now")
check("95.31 % (7 repetitions)" in lf and "exact interval at 96.21 %" in lf, "large-folio: the levels of 7 and 7 + 7")
check(lf.count("| order0 | reuse | reuse16 |") == 1, "large-folio: the changes table has order0 reuse reuse16")
err = open(f"{out}/bad.err").read()
check(bad == 2 and err.count("\n") == 1 and not open(f"{out}/bad.out").read(), f"bad input: exit {bad}, {err!r}")
if fail:
    print("kernel-stats: FAIL\n  " + "\n  ".join(fail))
    sys.exit(1)
print("kernel-stats: ok")
PY

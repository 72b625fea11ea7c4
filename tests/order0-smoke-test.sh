#!/usr/bin/env bash
# ctest kernel_order0 (label kernel): the order-0 machinery end to end, small. Stock and patched
# (pre-copy off) guests under QEMU's instruction counter (COWBENCH_VM_ICOUNT=1) run the pagefault
# loops (anon, file) and fork at 4 MiB; every row is ok and counts one fault per page, and
# analysis/projection_report.py turns the rows into one table line per loop. The numbers are the
# main job's business (analysis/order0.ini), never asserted here.
# usage: tests/order0-smoke-test.sh PATH/TO/cowbench
set -uo pipefail
COWBENCH=$(realpath "$1")
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cowbench-order0.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cat >"$WORK/o.ini" <<'INI'
[matrix]
reps = 2
warmup = 0
[faults]
kernel = patched, stock
workload = pagefault
size = 4M
fault = anon, file
precopy = 0
probes = none
[fork]
kernel = patched, stock
workload = fork
size = 4M
precopy = 0
probes = none
INI
COWBENCH_VM_ICOUNT=1 "$COWBENCH" matrix --build --output "$WORK/o.csv" "$WORK/o.ini" 2>"$WORK/log" || {
	tail -20 "$WORK/log"; echo "FAIL: the order-0 matrix under -icount"; exit 1; }
python3 - "$WORK/o.csv" <<'PY' || exit 1
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline=""))]
assert len(rows) == 12, f"{len(rows)} rows, want 12 (6 cells x 2 reps)"
for r in rows:
    assert r["status"] == "ok", (r["cell"], r["status"])
    if r["workload"] == "pagefault":
        assert int(r["touched"]) == 1024 and int(r["faults"]) >= 1024, (r["cell"], r["faults"])
    assert int(r["elapsed_ns"]) > 0
print("ok: 12 rows, one fault per page")
PY
python3 "$REPO/analysis/projection_report.py" order0 "$COWBENCH" "$WORK/o.csv" >"$WORK/o.md" || {
	echo "FAIL: the order-0 section"; exit 1; }
n=$(grep -c '^| \(pagefault\|fork\)' "$WORK/o.md")
[[ $n == 3 ]] || { cat "$WORK/o.md"; echo "FAIL: $n loop lines in the section, want 3"; exit 1; }
echo "ok: the section has a line per loop"
grep -q 'icount' "$WORK/log" || { echo "FAIL: the guests did not boot with -icount"; exit 1; }
echo "ok: booted with -icount"

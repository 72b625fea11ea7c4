#!/usr/bin/env bash
# ctest kernel_matrix (label kernel): cowbench matrix --kernel end to end.
#   1. --kernel=stock,patched --precopy=0,1 --workloads=seq --sizes=4M --reps=2 gives one CSV whose
#      every line parses, with exactly the cells {stock; patched precopy=0; patched precopy=1} x reps
#      1-2, guest releases in `kernel`, one boot id per kernel (per run), and exact COW fault counts of the
#      writer (taskstats wpcopy_count, + at most 8 of the writer's own pages): 1024 on stock and on
#      patched without pre-copy, 512 with depth 1 (every other page copied ahead); /proc/cow_stats (system-wide, so the writer's
#      faults plus cowbench's own few) agrees within 64.
#   2. The same matrix with 3 reps, SIGKILLed once rows of the first guest have come back, leaves
#      no QEMU behind; --resume then adds exactly the missing (cell, rep) pairs and keeps the rest.
# usage: tests/kernel-matrix-test.sh PATH/TO/cowbench
set -uo pipefail
COWBENCH=$(realpath "$1")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cowbench-kmatrix.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail=0
check() { # check DESCRIPTION COMMAND...
	if "${@:2}"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}
AXES=(--kernel=stock,patched --precopy=0,1 --workloads=seq --sizes=4M --build)

# Every line parses (Python's csv, independent of cowbench's reader), and the pairs are as asked.
verify() { # verify FILE REPS MAX-BOOTS-PER-KERNEL
	python3 - "$1" "$2" "$3" <<'EOF'
import csv, sys
path, reps, max_boots = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, newline="") as f:
    lines = f.read().split("\n")
assert lines[-1] == "", "the file does not end with a line end"
rows = [r for r in csv.DictReader(lines[:-1]) if r.get("rep_kind", "timed") != "evidence"]
header = next(csv.reader(lines[:1]))
for i, line in enumerate(lines[1:-1], 2):
    assert len(next(csv.reader([line]))) == len(header), f"line {i} has another field count"
want = {"kernel=stock workload=seq size=4M",
        "kernel=patched workload=seq size=4M precopy=0",
        "kernel=patched workload=seq size=4M precopy=1"}
pairs = [(r["cell"], int(r["rep"])) for r in rows]
assert len(pairs) == len(set(pairs)), f"a (cell, rep) pair twice: {pairs}"
assert set(pairs) == {(c, r) for c in want for r in range(1, reps + 1)}, f"pairs: {sorted(pairs)}"
boots = {}
for r in rows:
    assert r["status"] == "ok", f"{r['cell']} rep {r['rep']}: {r['status']}"
    assert r["kernel"].startswith("6.12"), f"kernel column {r['kernel']!r} is not the guest's release"
    assert r["boot"], "no boot id"
    boots.setdefault(r["cell"].split()[0], set()).add(r["boot"])
    want = 512 if r["cell"].endswith("precopy=1") else 1024
    # The writer's own COW copies: the region's pages plus, now and then, one of its own stack or libc pages.
    assert want <= int(r["wpcopy_count"]) <= want + 8, \
        f"{r['cell']}: the writer made {r['wpcopy_count']} COW copies, not {want} (+ at most 8 of its own)"
    if r["cell"].endswith("precopy=0"):
        assert 1024 <= int(r["cow_faults"]) < 1024 + 64, f"precopy=0: cow_stats counted {r['cow_faults']}"
        assert r["precopy"] == "0"
    elif r["cell"].endswith("precopy=1"):
        assert 512 <= int(r["cow_faults"]) < 512 + 64, f"precopy=1: cow_stats counted {r['cow_faults']}"
        assert 512 <= int(r["precopy_success"]) < 512 + 64, f"precopy_success {r['precopy_success']}"
    else:
        assert r["cow_faults"] == "" and r["precopy"] == "", "the stock kernel has no /proc/cow_stats"
assert all(1 <= len(b) <= max_boots for b in boots.values()), f"boots: {boots}"
print(f"{len(rows)} rows, cells and fault counts as expected")
EOF
}

# 1. A plain run.
"$COWBENCH" matrix "${AXES[@]}" --reps=2 --output "$WORK/a.csv" 2>"$WORK/a.err"
rc=$?
check "matrix exits 0 (got $rc)" test "$rc" -eq 0 || tail -20 "$WORK/a.err"
check "one CSV, every line parses, expected cells and fault counts" verify "$WORK/a.csv" 2 1
"$COWBENCH" summarize --quiet --format=csv --metric=wpcopy_count "$WORK/a.csv" --baseline precopy=0 >"$WORK/a.sum"
# summarize names the identity pairs that differ between cells (precopy_depth: empty on stock);
# The ratio follows the baseline column (the engine's Hodges-Lehmann ratio of the two cells' reps).
check "summarize: precopy=1 has half the writer's COW copies of precopy=0, same boot" \
	grep -q '^"\{0,1\}kernel=patched workload=seq size=4M precopy=1[^,"]*"\{0,1\},wpcopy_count,.*,precopy=0,0\.\(49[0-9][0-9]\|50[0-9][0-9]\),' "$WORK/a.sum"

# 2. SIGKILL mid-boot (once the first guest's rows have begun to come back), then --resume.
"$COWBENCH" matrix "${AXES[@]}" --reps=3 --output "$WORK/b.csv" 2>"$WORK/b.err" &
pid=$!
for _ in $(seq 1 1200); do
	[[ -f $WORK/b.csv && $(wc -l <"$WORK/b.csv") -ge 2 ]] && break
	sleep 0.5
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
before=$(wc -l <"$WORK/b.csv")
cp "$WORK/b.csv" "$WORK/b.before"
check "killed with some rows written ($((before - 1)) of 9)" test "$before" -ge 2 -a "$before" -lt 10
# The supervisor notices within half a second; a loaded machine may take a few more to tear QEMU down.
for _ in $(seq 1 20); do
	sleep 0.5
	left=$(grep -l "COWBENCH_WATCH_PID=$pid" /proc/[0-9]*/environ 2>/dev/null | wc -l)
	[[ $left -eq 0 ]] && break
done
check "no guest outlives the killed matrix ($left processes left)" test "$left" -eq 0
"$COWBENCH" matrix "${AXES[@]}" --reps=3 --resume "$WORK/b.csv" 2>"$WORK/c.err"
rc=$?
check "resume exits 0 (got $rc)" test "$rc" -eq 0 || tail -20 "$WORK/c.err"
check "resume completes exactly the missing pairs" verify "$WORK/b.csv" 3 2
check "rows written before the kill are kept as they were" cmp -s "$WORK/b.before" <(head -c "$(stat -c %s "$WORK/b.before")" "$WORK/b.csv")

# 3. Every cell of the boot in each round (--order=interleaved-all): a cell that names no depth runs
#    with the boot's own vm.cow_precopy_depth, not with the one the cell before it set.
"$COWBENCH" matrix --build --kernel=patched --precopy=0,1,2 --precopy-depth=1,15 --workloads=single --sizes=4M \
	--reps=3 --order=interleaved-all --probes=none --output "$WORK/d.csv" 2>"$WORK/d.err"
rc=$?
check "interleaved-all matrix exits 0 (got $rc)" test "$rc" -eq 0 || tail -20 "$WORK/d.err"
depths_pinned() {
	python3 - "$WORK/d.csv" <<'EOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["rep_kind"] == "timed"]
cells = {r["cell"] for r in rows}
assert len(cells) == 4 and len(rows) == 12, f"{len(cells)} cells, {len(rows)} rows"
rounds = {r["round"] for r in rows}
assert rounds == {"1", "2", "3"}, f"rounds {rounds}: every cell in each round"
free = [r for r in rows if "precopy-depth=" not in r["cell"]]
seen = {r["precopy_depth"] for r in free}
assert len(seen) == 1 and "" not in seen, f"depth of the cells that name none: {sorted(seen)}"
for r in rows:
    if "precopy-depth=" in r["cell"]:
        assert r["cell"].endswith("precopy-depth=" + r["precopy_depth"]), f"{r['cell']}: {r['precopy_depth']}"
print(f"cells without a depth ran at {seen.pop()} in every round")
EOF
}
check "cells that name no depth run at the boot's depth in every round" depths_pinned

[[ $fail -eq 0 ]] && echo "kernel_matrix: all passed" || echo "kernel_matrix: FAILED"
exit $fail

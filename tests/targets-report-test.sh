#!/usr/bin/env bash
# ctest targets_report (seconds): analysis/targets/targets-report.py, the judging half of
# analysis/targets/targets.sh, on a real guest's output (tests/fixtures/targets/matrix.out, a slice of
# one targets run) and fork boots' lines (fork.out). Checked: one row per cell of the input, the
# baseline against itself at +0.0 %, a cell's runtime change is cowbench estimate's own ratio of the
# per-repetition medians (one method, not a second one), a target block per adaptive mode, the fork
# comparison; damaged inputs exit 2 with one line and no table; targets.sh refuses bad arguments
# before it builds or boots anything.
# usage: tests/targets-report-test.sh COWBENCH REPO
set -uo pipefail
COWBENCH=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
REPO=$2
export COWBENCH # analysis/cbstats.py: the report's intervals come from this cowbench
FIX=$REPO/tests/fixtures/targets
REPORT=$REPO/analysis/targets/targets-report.py
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

python3 "$REPORT" "$FIX/matrix.out" "$FIX/fork.out" >"$W/out" 2>"$W/err" || fail "the fixture: exit $? ($(head -1 "$W/err"))"
[ -s "$W/err" ] && fail "the fixture: stderr not empty: $(head -1 "$W/err")"

# One row per (workload, size, mode) of the input.
cells=$(grep '^cowfaults ' "$FIX/matrix.out" | sed -E 's/.* batch=([0-9]+) .*pattern=([a-z]+) pages=([0-9]+) .*precopy=([0-9]) depth=([0-9]+) .*/\2 \3 \4 \5 \1/' |
	awk '{ print $1, $2, $3, $4, ($3 == 0 ? "" : $5) }' | sort -u | wc -l)
rows=$(grep -cE '^(seq|stride-2|hotset 10%|burst 64|random|single) [0-9]+M ' "$W/out")
[ "$cells" -gt 0 ] && [ "$rows" -eq "$cells" ] || fail "$rows table rows for $cells cells of the input"
grep -E '^[a-z0-9% -]+M +off ' "$W/out" | grep -vqF '+0.0% [' && fail "a baseline row's change against itself is not +0.0 %"

# seq 16M adaptive B=16, d.runtime: cowbench estimate of the same per-repetition values, formatted alike.
want=$(grep '^cowfaults ' "$FIX/matrix.out" | grep -E ' (batch=16 .*pattern=seq pages=4096 .*precopy=2|pattern=seq pages=4096 .*precopy=0) ' |
	sed -E 's/.*precopy=([0-9]) .* ns=([0-9]+) .*/\1 \2/' |
	awk 'BEGIN { print "group,value" } { print ($1 == 0 ? "old" : "new") "," $2 }' |
	"$COWBENCH" estimate --baseline=old --format=json |
	python3 -c 'import json, sys
for line in sys.stdin:
    o = json.loads(line)
    if o["group"] == "new":
        g, lo, hi = (100 * (o[k] - 1) for k in ("ratio", "ratio_ci_lo", "ratio_ci_hi"))
        print(f"{g:+6.1f}% [{lo:+.1f}, {hi:+.1f}]")')
[ -n "$want" ] && grep -E '^seq 16M +adaptive B=16 ' "$W/out" | grep -qF -- "$want" ||
	fail "seq 16M adaptive B=16: d.runtime is not cowbench estimate's '$want'"

modes=$(grep -oE 'batch=[0-9]+ .*precopy=2 ' "$FIX/matrix.out" | cut -d' ' -f1 | sort -u | wc -l)
[ "$(grep -c '^Targets (adaptive B=' "$W/out")" -eq "$modes" ] || fail "not one target block per adaptive mode ($modes)"
boots=$(grep -o 'boot=[0-9]*' "$FIX/fork.out" | sort -u | wc -l)
grep -q "^fork() of [0-9]* MiB populated, patched (cow_precopy=0) over stock, $boots alternating boots" "$W/out" ||
	fail "no fork comparison over $boots boots"
[ "$(grep -cE '^    boot [0-9]+ (stock|patched) ' "$W/out")" -eq $((2 * boots)) ] || fail "not one fork line per kernel and boot"

# Damaged inputs: exit 2, one line on stderr naming the file, nothing on stdout, no traceback.
bad() { # DESC ARGS...
	local desc=$1 rc
	shift
	python3 "$REPORT" "$@" >"$W/bout" 2>"$W/berr"
	rc=$?
	[ "$rc" -eq 2 ] || fail "$desc: exit $rc, not 2"
	[ "$(grep -c . "$W/berr")" -eq 1 ] || fail "$desc: $(grep -c . "$W/berr") lines on stderr, not one"
	grep -q Traceback "$W/berr" && fail "$desc: a traceback"
	[ -s "$W/bout" ] && fail "$desc: a partial table on stdout"
}
edit() { sed -E "$1" "$FIX/matrix.out" >"$W/m.out"; }
bad "no arguments"
bad "three arguments" "$FIX/matrix.out" "$FIX/fork.out" "$FIX/fork.out"
bad "a missing file" "$W/none"
bad "a folder" "$W"
mkfifo "$W/fifo"
bad "a FIFO (never waited on)" "$W/fifo"
edit '5s/ ns=[0-9]+ / /'
bad "a line without ns=" "$W/m.out"
edit '5s/ faults=[0-9]+ / faults=12x /'
bad "a count that is no number" "$W/m.out"
edit '5s/ wasted=[0-9-]+ / wasted=1e400 /'
bad "wasted that is no whole number" "$W/m.out"
edit '5s/pattern=[a-z]+/pattern=$(touch)/'
bad "an unknown pattern" "$W/m.out"
edit '5s/ precopy=[0-9] / precopy=7 /'
bad "a pre-copy mode that is none" "$W/m.out"
sed -E '3s/kernel=[a-z]+/kernel=other/' "$FIX/fork.out" >"$W/f.out"
bad "a fork line of another kernel" "$FIX/matrix.out" "$W/f.out"
sed -E '3s/ ns=[0-9]+//' "$FIX/fork.out" >"$W/f.out"
bad "a fork line without ns=" "$FIX/matrix.out" "$W/f.out"

# targets.sh: bad arguments exit 2 with their message before anything is built or booted.
for args in "--reps 3" "--modes 1:16" "--modes 0:1_3:1" "--smp 0" "--bogus"; do
	"$REPO/analysis/targets/targets.sh" ${args//_/ } >"$W/t.out" 2>&1
	rc=$?
	[ "$rc" -eq 2 ] || fail "targets.sh $args: exit $rc, not 2"
	grep -q '^== matrix' "$W/t.out" && fail "targets.sh $args: it started the matrix"
done

[ "$fails" -eq 0 ] || exit 1
echo "targets_report: $rows rows, $modes target blocks, the fork comparison, 12 damaged inputs and 5 bad arguments refused"

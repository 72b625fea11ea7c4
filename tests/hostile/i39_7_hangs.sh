#!/usr/bin/env bash
# Issue 39, "crashes, hangs, exit codes": every file a command reads named as a FIFO (directly,
# through a link, in matrix --dry-run, and the environment's stand-ins for /proc and /sys files),
# each under a 20 s timeout; record with a 10,000-character or directory --output; stat --folded
# with a too-long name; summarize --metric=, ; record of a program that never forks (UBSan's
# qsort(NULL, 0) with CB_ASAN=1). Counts hangs and sanitizer reports (crashes) and wrong exits.
ITEM=39.7; . "$(dirname "$0")/lib.sh"
cd "$W"
TRY_TIMEOUT=20
mkfifo fifo; ln -s fifo link; ln -s "$W/fifo" abslink
"$CB" run -w seq -s 64K -r 2 --warmup 0 -o rows.csv 2>/dev/null
for f in fifo link abslink; do
	try 2 "run replay --trace=$f" "$CB" run -w replay --trace="$f" -r 1
	try 2 "matrix --dry-run replay --trace=$f" "$CB" matrix --dry-run -w replay --trace="$f"
	try 2 "matrix replay --trace=$f" "$CB" matrix -w replay --trace="$f" -r 1 --warmup 0
	try 2 "summarize $f" "$CB" summarize "$f"
	try 2 "merge $f" "$CB" merge "$f"
	try 2 "compare $f rows" "$CB" compare "$f" rows.csv
	try 2 "plot $f" "$CB" plot "$f" --out p
	try 2 "project $f" "$CB" project "$f"
	try 2 "matrix --dry-run $f (matrix file)" "$CB" matrix --dry-run "$f"
	try 2 "plot --samples=$f" "$CB" plot rows.csv --samples="$f" --out p2
done
for var in COWBENCH_MEMINFO COWBENCH_PROC_CGROUP COWBENCH_CGROUP_ROOT; do
	try 0 "$var=fifo run" env "$var=$W/fifo" "$CB" run -w seq -s 64K -r 1 --warmup 0 --probes=none
done
try 2 "COWBENCH_COWSTATS=fifo stat --system" env COWBENCH_COWSTATS="$W/fifo" "$CB" stat --system --count=1 --interval=0.1
try any "COWBENCH_COWSTATS=fifo stat true" env COWBENCH_COWSTATS="$W/fifo" "$CB" stat --count=1 --interval=0.1 -- true
try any "COWBENCH_COWSTATS=fifo run" env COWBENCH_COWSTATS="$W/fifo" "$CB" run -w seq -s 64K -r 1 --warmup 0
LONG=$(printf 'a%.0s' $(seq 10000))
mkdir d
for o in "$LONG" d "$W/d" "d/$LONG" "$LONG/x"; do
	rm -f ran
	try 2 "record --output=${o:0:12}..." "$CB" record --output="$o" -- touch ran
	[ -e ran ] && bump N_OTHER RAN "record --output=${o:0:12}: ran the command before refusing"
	try 2 "stat --folded=${o:0:12}..." "$CB" stat --where=code --folded="$o" -- touch ran
	[ -e ran ] && bump N_OTHER RAN "stat --folded=${o:0:12}: ran the command before refusing"
	try 2 "run -o ${o:0:12}" "$CB" run -s 64K -r 1 -o "$o"
	try 2 "summarize -o ${o:0:12}" "$CB" summarize rows.csv -o "$o"
done
for m in , ,, "elapsed_ns," ",elapsed_ns" "elapsed_ns,,faults" "" " "; do
	try 2 "summarize --metric='$m'" "$CB" summarize --metric="$m" rows.csv
done
if "$CB" record --output=probe.trace -- true >/dev/null 2>&1; then
	for prog in true "sh -c exit" "sleep 0.1"; do
		rm -f t.trace
		try 0 "record $prog (never forks)" "$CB" record --output=t.trace -- $prog
	done
else
	echo "note: record cannot run here (root, tracepoint): the no-fork case not tried"
fi
report

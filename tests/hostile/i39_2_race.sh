#!/usr/bin/env bash
# Issue 39 item 2 (race): two `run -o F` / `matrix -o F` started on one new F, the first one's flock
# (its second) delayed with strace's fault injection so that the second opens F before the first
# locks it. TRIALS per variant (default 10). Counts rows lost or written twice and wrong exits.
ITEM=39.2; . "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || { echo "note: no strace: nothing tried"; report; exit 0; }
cd "$W"
TRIALS=${TRIALS:-10}
timed() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["rep_kind"] == "timed" { print $c["cell"] "/" $c["rep"] }' "$1" 2>/dev/null; }
for t in $(seq "$TRIALS"); do
	for variant in "run 400000 -s 8M -r 20" "run 1500000 -s 64K -r 3" "matrix 400000 -s 8M --fork=1,0 -r 8" "matrix 1500000 -s 64K --fork=1,0 -r 2"; do
		set -- $variant; cmd=$1 delay=$2; shift 2
		rm -f F.csv
		N_INPUTS=$((N_INPUTS + 2))
		# LeakSanitizer cannot stop a traced process's threads (CB_ASAN=1): no leak check under strace
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
			strace -f -o strace.log -e trace=flock -e inject=flock:delay_enter="$delay":when=2 \
			"$CB" $cmd -w seq -s 64K -r 3 --warmup 0 --probes=none -o F.csv >/dev/null 2>a.err & a=$!
		sleep 0.2
		"$CB" $cmd -w seq "$@" --warmup 0 --probes=none -o F.csv >/dev/null 2>b.err & b=$!
		wait $a; ra=$?; wait $b; rb=$?
		want=$(echo "$@" | sed 's/.*-r \([0-9]*\).*/\1/')
		[ "$cmd" = matrix ] && want=$((want * 2)) # two cells
		n=$(timed F.csv | wc -l); d=$(timed F.csv | sort | uniq -d | wc -l)
		[ "$rb" -eq 0 ] && [ "$ra" -eq 2 ] || { N_EXIT=$((N_EXIT + 1)); finding EXIT "$cmd delay $delay: A $ra B $rb: $(head -c 200 a.err)"; }
		[ "$n" -lt "$want" ] && bump N_LOST LOST "$cmd delay $delay trial $t: $n of $want rows"
		[ "$d" -gt 0 ] && bump N_DUP DUP "$cmd delay $delay trial $t: $d reps twice"
		[ "$n" -gt "$want" ] && bump N_DUP DUP "$cmd delay $delay trial $t: $n rows, $want written"
	done
done
report

#!/usr/bin/env bash
# Two `cowbench run -o F` started on the same new F (issue 39 item 2): the first creates F, and its
# lock is delayed by strace's fault injection so that the second opens F before the first locks it.
# Whoever wins, F ends with exactly the winner's rows, none twice, and the loser says why (exit 2):
#  - the second still writing when the first's flock comes: the first must not remove F;
#  - the second done by then: the first must not append its rows to F (F holds rows: not its own).
# usage: tests/output-race-test.sh COWBENCH
set -uo pipefail
CB=$1
command -v strace >/dev/null || { echo "SKIP: no strace (tests/install-deps.sh installs it)"; exit 77; }
D=$(mktemp -d /tmp/cbtest-race.XXXXXX)
trap 'rm -rf "$D"' EXIT
fail=0
# the timed reps of a CSV, one rep number per line (the header names the columns)
reps() {
	[ -f "$1" ] && awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["rep_kind"] == "timed" { print $c["rep"] }' "$1"
}
# round DELAY_US BREPS BSIZE: A's second flock (its output's) waits DELAY_US; B starts 0.2 s after A
round() {
	local F=$D/r.csv ra rb a b want=$2
	rm -f "$F"
	# (a sanitizer build: LeakSanitizer cannot stop the threads of a traced process)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -o "$D/strace.log" -e trace=flock -e inject=flock:delay_enter="$1":when=2 \
		"$CB" run -w seq -s 64K -r 3 --warmup=0 -o "$F" >"$D/a.out" 2>"$D/a.err" &
	a=$!
	sleep 0.2
	"$CB" run -w seq -s "$3" -r "$2" --warmup=0 -o "$F" >"$D/b.out" 2>"$D/b.err" &
	b=$!
	wait $a; ra=$?
	wait $b; rb=$?
	local n dup
	n=$(reps "$F" | wc -l)
	dup=$(reps "$F" | sort | uniq -d | wc -l)
	if [ $rb -ne 0 ] || [ $ra -ne 2 ] || [ "$n" -ne "$want" ] || [ "$dup" -ne 0 ] || [ "$(wc -l <"$D/a.err")" -ne 1 ]; then
		echo "FAIL (delay $1 us, B $2 reps of $3): A exit $ra, B exit $rb, $n rows in F (want $want), $dup reps twice"
		head -3 "$D/a.err" "$D/b.err"
		fail=1
	else
		echo "ok (delay $1 us, B $2 reps of $3): A exit 2 ($(cat "$D/a.err")), F has B's $n rows"
	fi
}
round 400000 20 8M      # B holds the lock when A's flock comes
round 1500000 3 64K     # B has finished when A's flock comes
exit $fail

#!/usr/bin/env bash
# Issue 29 items 2 and 3: a damaged guest row stream keeps every valid row; --resume after guest
# failures re-runs exactly the reps that failed. A hostile fake vm-run.sh (tests/hostile/fake-kernel).
ITEM=2-3; . "$(dirname "$0")/lib.sh"
export COWBENCH_KERNEL_DIR=$HERE/fake-kernel CB_H_COWBENCH=$CB
CHK=$HERE/check_rows.py
# 2 cells x 3 reps in one stock "boot"
M=(matrix --kernel=stock -w seq -s 64K --fork=1,0 -r 3 --warmup 0)
clean() { unset CB_H_MODE CB_H_AFTER CB_H_PAYLOAD CB_H_SPLIT CB_H_KEEP CB_H_CHUNKS CB_H_CRLF CB_H_NOEOL CB_H_EXIT CB_H_END CB_H_SIG CB_H_PLANLOG; }
leftover() { ls -d /tmp/cowbench-guest.* 2>/dev/null | wc -l; }
base_left=$(leftover)
# ---- item 2: every single bad line, at every position, whole or in pieces ----
payloads="kern kern2 nul nuls quote quote2 unterm midquote endquote quoterow long70k long2m long2mq commas commas110 header dup foreign rep0 rep999 repneg repbig schema99 esc cr ff half nulrow empty blank3 tab bom spaces ctrlz cell-inj morefields fewer flood dupflood blob20m"
for p in $payloads; do
	for after in 0 1 2 6 7; do
		for chunks in 1 4; do
			[ $chunks = 4 ] && [ $after != 2 ] && continue
			clean; export CB_H_PAYLOAD=$p CB_H_AFTER=$after CB_H_CHUNKS=$chunks
			out=$W/s.csv; rm -f "$out"
			want=0
			# a parseable row for rep 1 with another status, sent before the real one, is that rep's row (the first wins)
			[ $p = cell-inj ] && [ $after = 1 ] && want=1
			try "$want" "stream $p after $after chunks $chunks" "$CB" "${M[@]}" -o "$out"
			read -r okp miss dup err total ncell notes < <(python3 "$CHK" "$out" 2 3)
			[ $p = cell-inj ] && [ $after = 1 ] && miss=0 err=0
			[ "$miss" = 0 ] || bump N_LOST LOST "stream $p after $after chunks $chunks: $miss of 6 rows lost: $(echo "$ERR" | grep -m1 'did not')"
			[ "$dup" = 0 ] || bump N_DUP DUP "stream $p after $after: $dup duplicated"
			[ "$err" = 0 ] || bump N_OTHER ERRROWS "stream $p after $after: $err error rows"
			case $p in empty|blank3|cr) ;; *)  # cr: an empty line under CR LF
				echo "$ERR" | grep -qE 'skipped [0-9]+ bad line|ignored [0-9]+ record' ||
					bump N_OTHER SILENT "stream $p after $after chunks $chunks: bad line not reported: $(echo "$ERR" | head -c 200)";;
			esac
		done
	done
done
# CRLF everywhere, no final line end, bad lines under CRLF
for v in "CB_H_CRLF=1" "CB_H_NOEOL=1" "CB_H_CRLF=1 CB_H_PAYLOAD=kern CB_H_AFTER=3" "CB_H_NOEOL=1 CB_H_PAYLOAD=unterm CB_H_AFTER=7" "CB_H_CHUNKS=16" "CB_H_CHUNKS=9 CB_H_PAYLOAD=long2m CB_H_AFTER=4"; do
	clean; export $v; out=$W/s.csv; rm -f "$out"
	try 0 "stream $v" "$CB" "${M[@]}" -o "$out"
	read -r okp miss dup err total ncell notes < <(python3 "$CHK" "$out" 2 3)
	[ "$miss" = 0 ] && [ "$dup" = 0 ] || bump N_LOST LOST "stream $v: miss=$miss dup=$dup"
done
# A row cut in two by a kernel line is lost (it is not a row): reported, rc 1, and --resume runs it
for p in kern nul quote long70k; do
	for k in 1 3 6; do
		clean; export CB_H_PAYLOAD=$p CB_H_SPLIT=$k; out=$W/split.csv; rm -f "$out"
		try 1 "split row $k by $p" "$CB" "${M[@]}" -o "$out"
		read -r okp miss dup err total ncell notes < <(python3 "$CHK" "$out" 2 3)
		[ "$miss" = 1 ] && [ "$err" = 1 ] || bump N_LOST LOST "split row $k by $p: ok=$okp miss=$miss err=$err (want 5 ok + 1 error row)"
		clean; export CB_H_PLANLOG=$W/plan.log; rm -f "$W/plan.log"
		try 0 "resume after split row $k by $p" "$CB" "${M[@]}" --resume="$out"
		read -r okp miss dup err total ncell notes < <(python3 "$CHK" "$out" 2 3)
		planned=$(grep -vc -- '^--$' "$W/plan.log" 2>/dev/null || echo 0)
		[ "$miss" = 0 ] && [ "$dup" = 0 ] || bump N_LOST LOST "resume after split $k/$p: miss=$miss dup=$dup"
		[ "$planned" = 1 ] || bump N_OTHER RERUN "resume after split $k/$p: the guest was asked for $planned reps, want 1"
	done
done
# ---- item 3: guest failures after K rows, then --resume re-runs exactly the failed reps ----
for end in "exit 124" "exit 125" "exit 1" "exit 3" "exit 0" "sig SEGV" "sig KILL" "sig TERM"; do
	for keep in 0 1 4 6; do
		set -- $end
		clean; export CB_H_KEEP=$keep CB_H_END=$1; [ $1 = exit ] && export CB_H_EXIT=$2 || export CB_H_SIG=$2
		out=$W/f.csv; rm -f "$out"
		if [ $keep = 6 ] && [ "$end" = "exit 0" ]; then want=0; else want=1; fi
		try $want "guest $end after $keep rows" "$CB" "${M[@]}" -o "$out"
		read -r okp miss dup err total ncell notes < <(python3 "$CHK" "$out" 2 3)
		[ "$okp" = $keep ] && [ "$err" = $((6 - keep)) ] || bump N_LOST LOST "guest $end after $keep: ok=$okp err=$err (want $keep + $((6 - keep)))"
		# the first resume's guest also fails half-way (2 rows), the second is good
		for round in bad good; do
			clean; export CB_H_PLANLOG=$W/plan.log; rm -f "$W/plan.log"
			[ $round = bad ] && export CB_H_KEEP=1 CB_H_EXIT=124
			before_ok=$okp
			if [ $round = bad ] && [ $okp -lt 5 ]; then want=1; else want=0; fi
			[ $okp = 6 ] && want=0
			try "$want" "resume ($round) after guest $end/$keep" "$CB" "${M[@]}" --resume="$out"
			planned=$(grep -vc -- '^--$' "$W/plan.log" 2>/dev/null); planned=${planned:-0}
			[ "$planned" = $((6 - before_ok)) ] || bump N_OTHER RERUN "resume ($round) after $end/$keep: guest asked for $planned reps, want $((6 - before_ok)): $(echo "$ERR" | grep -m1 'resume')"
			read -r okp miss dup err total ncell notes < <(python3 "$CHK" "$out" 2 3)
			[ "$dup" = 0 ] || bump N_DUP DUP "resume ($round) after $end/$keep: $dup duplicated ok rows"
		done
		[ "$miss" = 0 ] || bump N_LOST LOST "after two resumes of $end/$keep: $miss reps still missing"
		clean; export CB_H_PLANLOG=$W/plan.log; rm -f "$W/plan.log"
		try 0 "third resume (nothing to do) after $end/$keep" "$CB" "${M[@]}" --resume="$out"
		[ -s "$W/plan.log" ] && bump N_OTHER RERUN "third resume after $end/$keep booted a guest"
		read -r okp2 miss dup err2 total ncell notes < <(python3 "$CHK" "$out" 2 3)
		[ "$okp2" = 6 ] && [ "$dup" = 0 ] || bump N_DUP DUP "third resume: ok=$okp2 dup=$dup"
	done
done
# host and guest cells in one matrix, the guest failing; resume runs only the guest's
clean; export CB_H_KEEP=2 CB_H_EXIT=124; out=$W/mix.csv; rm -f "$out"
MM=(matrix --kernel=host,stock -w seq -s 64K --fork=1,0 -r 2 --warmup 0)
try 1 "host+guest, guest times out" "$CB" "${MM[@]}" -o "$out"
clean; export CB_H_PLANLOG=$W/plan.log; rm -f "$W/plan.log"
try 0 "host+guest resume" "$CB" "${MM[@]}" --resume="$out"
read -r okp miss dup err total ncell notes < <(python3 "$CHK" "$out" 4 2)
[ "$miss" = 0 ] && [ "$dup" = 0 ] || bump N_LOST LOST "host+guest resume: miss=$miss dup=$dup"
planned=$(grep -vc -- '^--$' "$W/plan.log" 2>/dev/null)
[ "$planned" = 2 ] || bump N_OTHER RERUN "host+guest resume: guest asked for $planned reps, want 2"
# orders: the resumed plan keeps the missing reps only, whatever --order
for ord in sequential shuffle:7 interleaved-all; do
	clean; export CB_H_KEEP=3 CB_H_EXIT=125; out=$W/o.csv; rm -f "$out"
	try 1 "order $ord guest dies after 3" "$CB" "${M[@]}" --order=$ord -o "$out"
	clean; export CB_H_PLANLOG=$W/plan.log; rm -f "$W/plan.log"
	try 0 "order $ord resume" "$CB" "${M[@]}" --order=$ord --resume="$out"
	read -r okp miss dup err total ncell notes < <(python3 "$CHK" "$out" 2 3)
	planned=$(grep -vc -- '^--$' "$W/plan.log" 2>/dev/null)
	[ "$miss" = 0 ] && [ "$dup" = 0 ] && [ "$planned" = 3 ] || bump N_LOST LOST "order $ord resume: miss=$miss dup=$dup planned=$planned"
done
[ "$(leftover)" = "$base_left" ] || bump N_PARTIAL LEFTOVER "cowbench-guest.* directories left: $(leftover) (were $base_left)"
report

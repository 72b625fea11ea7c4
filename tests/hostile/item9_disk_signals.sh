#!/usr/bin/env bash
# Issue 29 item 9 (and the SIGKILL-then---resume lock fix): exit codes and partial files on a full
# disk (/dev/full, a 64 KiB tmpfs), directories as output files, SIGTERM/SIGINT/SIGHUP/SIGKILL
# during host runs followed by --resume: no lost or duplicated rows, settings restored.
ITEM=9; . "$(dirname "$0")/lib.sh"
cd "$W"
KILLS=${KILLS:-8}
"$CB" run -w seq -s 256K -r 3 --warmup 0 -q -o r.csv
"$CB" run -w seq -s 256K -r 3 --warmup 0 -q -o r2.csv
"$CB" matrix -w seq -s 256K --fork=1,0 -r 2 --warmup 0 -q -o pr.csv 2>/dev/null
mkdir -p adir
# ---- standard output on a full disk: every command that prints must fail ----
while read -r cmd; do
	# stat --count ends its command with SIGTERM: it exits with that status (143), write error or not
	case $cmd in stat*) want="1 143";; *) want=1;; esac
	TRY_TIMEOUT=60 try "$want" "$cmd >/dev/full" bash -c "exec $CB $cmd >/dev/full"
	[ $RC = 0 ] && bump N_EXIT EXIT0 "$cmd >/dev/full exited 0"
done <<L
list --columns
list
info
--help
run --help
-V
run -w seq -s 256K -r 1 --warmup 0 -f csv
run -w seq -s 256K -r 1 --warmup 0 -f json
matrix -w seq -s 256K -r 1 --warmup 0 -f csv
matrix --dry-run -w seq -s 256K
summarize $W/r.csv
summarize -f csv $W/r.csv
compare $W/r.csv $W/r2.csv
compare -f json $W/r.csv $W/r2.csv
merge $W/r.csv
project --units $W/pr.csv
stat --count=1 -- sleep 2
L
# ---- directories as output files ----
for cmd in "run -w seq -s 256K -r 1 -o adir" "run -w seq -s 256K -r 1 -o adir --force" "run -w seq -s 256K -r 1 --samples=adir -o s.csv" \
	"matrix -w seq -s 256K -r 1 -o adir" "matrix -w seq -s 256K -r 1 --resume=adir" "summarize r.csv -o adir --force" \
	"compare r.csv r2.csv -o adir --force" "merge r.csv -o adir/ --force" "project pr.csv -o adir --force" \
	"stat --where=code --folded=adir -- true" "stat --where=maps --folded=adir -- true" "summarize r.csv -o adir/."; do
	rm -f s.csv
	try 2 "$cmd (a directory)" "$CB" $cmd
	[ -z "$(ls -A adir)" ] || { bump N_PARTIAL PARTIAL "$cmd: wrote into the directory: $(ls adir)"; rm -rf adir/*; }
done
# ---- a full small disk ----
FS=$W/small
if mkdir -p "$FS" && mount -t tmpfs -o size=64k tmpfs "$FS" 2>/dev/null; then
	trap 'umount "$FS" 2>/dev/null; rm -rf "$W"' EXIT
	fill() { [ -n "${fill_keep:-}" ] || rm -rf "$FS"/*; head -c $((64 * 1024 - ${1:-2048})) /dev/zero > "$FS/fill" 2>/dev/null; sync; }
	for room in 0 512 2048 6000; do
		while read -r name cmd; do
			rm -rf "$FS"/*; echo keep > "$FS/old.$name"; fill_keep=1 fill $room
			try "1" "[room $room] $name" bash -c "exec $CB ${cmd//@/$FS}"
			out=$FS/out.$name
			if [ $RC = 0 ]; then
				# success is fine only when the whole output is there
				[ -e "$out" ] && [ ! -s "$out" ] && { bump N_PARTIAL PARTIAL "[room $room] $name: exit 0 with an empty $out: $(echo "$ERR" | tail -2 | tr '\n' ' ')"; cp "$W/.out" "/tmp/h29-empty-$name-$room.stdout"; }
				case $name in
				run|matrix|matrixj) python3 -c "import csv,sys; r=list(csv.DictReader(open('$out'))); sys.exit(0 if r and all(x['status'] for x in r) else 1)" 2>/dev/null ||
					bump N_PARTIAL PARTIAL "[room $room] $name: exit 0 with a damaged $out";;
				esac
			else
				# a failed command leaves no partial output (rows files: whole rows only)
				if [ -e "$out" ]; then
					case $name in
					matrix) python3 - "$out" <<'P' || bump N_PARTIAL PARTIAL "[room $room] matrix: a torn row left in $out (rc $RC)"
import sys
d=open(sys.argv[1],'rb').read()
sys.exit(0 if not d or d.endswith(b'\n') else 1)
P
					;;
					*) [ -s "$out" ] && bump N_PARTIAL PARTIAL "[room $room] $name: rc $RC and a partial $out ($(stat -c %s "$out") bytes)";
					   [ -e "$out" ] && [ ! -s "$out" ] && bump N_PARTIAL PARTIAL "[room $room] $name: rc $RC and an empty $out left";;
					esac
				fi
				ls "$FS" | grep -qE '\.tmp|XXXX|\.new' && bump N_PARTIAL PARTIAL "[room $room] $name: temporary file left: $(ls "$FS")"
			fi
			[ "$(cat "$FS/old.$name")" = keep ] || bump N_PARTIAL PARTIAL "[room $room] $name: another file changed"
		done <<L
run run -w seq -s 1M -r 20 --warmup 0 -q -o @/out.run
samples run -w seq -s 1M -r 2 --warmup 0 -q --samples=@/out.samples -f csv >/dev/null
matrix matrix -w seq -s 256K --fork=1,0 -r 10 --warmup 0 -q -o @/out.matrix
summarize summarize -f csv $W/r.csv $W/pr.csv -o @/out.summarize
compare compare -f csv $W/r.csv $W/r2.csv -o @/out.compare
merge merge $W/r.csv $W/pr.csv -o @/out.merge
project project -f table $W/pr.csv -o @/out.project
folded stat --where=code --folded=@/out.folded -- python3 -c 'import os;[os.waitpid(p,0) if (p:=os.fork()) else os._exit(0) for i in range(20)]'
plot plot $W/pr.csv --out @/out.plot
L
	done
	umount "$FS"
	trap 'rm -rf "$W"' EXIT
else
	echo "note: no tmpfs mount here; the small-disk cases were skipped"
fi
# ---- signals during host runs, then --resume ----
delay0=$(cat /proc/sys/kernel/task_delayacct)
journal_owners_dead() { # owners in the journal that are gone
	[ -f /run/cowbench/overrides ] || { echo 0; return; }
	local n=0
	for o in $(awk '{for(i=3;i<=NF;i++) print $i}' /run/cowbench/overrides); do
		kill -0 "${o%%:*}" 2>/dev/null || n=$((n + 1))
	done
	echo $n
}
MX=(matrix -w seq,random -s 8M --fork=1,0 -r 3 --warmup 1)
want_cells=4 want_reps=3
trial() { # SIGNAL DELAY WAIT(yes|no) [extra args]
	local sig=$1 delay=$2 waitit=$3; shift 3
	local out=$W/k.csv; rm -f "$out"
	"$CB" "${MX[@]}" "$@" -q -o "$out" >/dev/null 2>"$W/k.err" &
	local pid=$!
	sleep "$delay"
	kill -s "$sig" $pid 2>/dev/null
	[ "$waitit" = yes ] && wait $pid 2>/dev/null
	N_INPUTS=$((N_INPUTS + 1))
	# the fix: an immediate --resume proceeds, it does not say "being written by PID"
	try "0 1" "resume after $sig at ${delay}s (wait=$waitit) $*" "$CB" "${MX[@]}" "$@" -q --resume="$out"
	echo "$ERR" | grep -q "being written by" && bump N_EXIT LOCKED "resume right after $sig (wait=$waitit): $(echo "$ERR" | grep -m1 'being written')"
	wait $pid 2>/dev/null
	read -r okp miss dup err total ncell notes < <(python3 "$HERE/check_rows.py" "$out" $want_cells $want_reps)
	[ "$miss" = 0 ] || bump N_LOST LOST "$sig at ${delay}s then resume: $miss reps missing ($(echo "$ERR" | tail -1))"
	[ "$dup" = 0 ] || bump N_DUP DUP "$sig at ${delay}s then resume: $dup duplicated"
	tail -c1 "$out" | od -An -c | grep -q '\\n' || bump N_PARTIAL PARTIAL "$sig at ${delay}s: $out does not end in a line end"
	[ "$(journal_owners_dead)" = 0 ] || bump N_SETTINGS SETTINGS "$sig at ${delay}s: dead owners left in the journal: $(cat /run/cowbench/overrides)"
}
for sig in TERM INT HUP KILL; do
	for i in $(seq 1 "$KILLS"); do
		d=$(python3 -c "import random; print(round(random.uniform(0.05, 1.5), 2))")
		w=yes; [ $sig = KILL ] && [ $((i % 2)) = 0 ] && w=no
		trial $sig "$d" $w
	done
done
# the lock fix: SIGKILL, then --resume at once (no wait for the killed run), many times
for i in $(seq 1 "${LOCKTRIALS:-10}"); do
	d=$(python3 -c "import random; print(round(random.uniform(0.1, 1.2), 2))")
	trial KILL "$d" no
done
# a kill of the whole process group, and kills of the resume itself
for i in 1 2 3; do
	out=$W/g.csv; rm -f "$out"
	setsid "$CB" "${MX[@]}" -q -o "$out" >/dev/null 2>&1 & pid=$!
	sleep 0.$((3 * i)); kill -KILL -- -$pid 2>/dev/null; wait $pid 2>/dev/null
	"$CB" "${MX[@]}" -q --resume="$out" >/dev/null 2>&1 & pid=$!
	sleep 0.4; kill -KILL $pid; wait $pid 2>/dev/null
	try "0 1" "resume after two SIGKILLs ($i)" "$CB" "${MX[@]}" -q --resume="$out"
	read -r okp miss dup err total ncell notes < <(python3 "$HERE/check_rows.py" "$out" $want_cells $want_reps)
	[ "$miss" = 0 ] && [ "$dup" = 0 ] || bump N_LOST LOST "group kill $i: miss=$miss dup=$dup"
done
# hugetlb: nr_hugepages is a setting cowbench changes
hp0=$(cat /proc/sys/vm/nr_hugepages)
for i in 1 2 3; do
	out=$W/h.csv; rm -f "$out"
	"$CB" matrix -w seq -s 4M --hugetlb=1 --fork=1,0 -r 4 --warmup 0 -q -o "$out" >/dev/null 2>&1 & pid=$!
	sleep 0.$((2 * i)); kill -KILL $pid; wait $pid 2>/dev/null
	try "0 1" "hugetlb resume after SIGKILL ($i)" "$CB" matrix -w seq -s 4M --hugetlb=1 --fork=1,0 -r 4 --warmup 0 -q --resume="$out"
	read -r okp miss dup err total ncell notes < <(python3 "$HERE/check_rows.py" "$out" 2 4)
	[ "$miss" = 0 ] && [ "$dup" = 0 ] || bump N_LOST LOST "hugetlb kill $i: miss=$miss dup=$dup ($(echo "$ERR" | tail -1))"
done
sleep 0.5
[ "$(cat /proc/sys/vm/nr_hugepages)" = "$hp0" ] || bump N_SETTINGS SETTINGS "nr_hugepages $(cat /proc/sys/vm/nr_hugepages), was $hp0"
[ "$(journal_owners_dead)" = 0 ] || bump N_SETTINGS SETTINGS "dead owners left in the journal at the end"
# task_delayacct: back to its value unless another (live) cowbench holds it
if [ "$(cat /proc/sys/kernel/task_delayacct)" != "$delay0" ] && ! grep -q task_delayacct /run/cowbench/overrides 2>/dev/null; then
	bump N_SETTINGS SETTINGS "task_delayacct $(cat /proc/sys/kernel/task_delayacct), was $delay0, nobody holds it"
fi
"$CB" info 2>/dev/null | grep -m1 '^overrides'
report

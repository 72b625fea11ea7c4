#!/usr/bin/env bash
# analysis/redis/redis-guest.sh on this machine (as on bare metal, issue 39): whatever step fails, or a
# signal, it leaves kernel.task_delayacct and vm.overcommit_memory as they were and no
# redis-server running. Three ways to fail: a mode whose sysctl cowbench does not change
# (redis_load refuses it), SIGTERM during the load, and rows that cannot be written.
# usage: tests/redis-guest-cleanup-test.sh REPO REDIS_LOAD
set -uo pipefail
REPO=$1
LOAD=$2
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (the script writes two sysctls)"; exit 77; }
command -v redis-server >/dev/null && command -v redis-cli >/dev/null || { echo "SKIP: no redis-server"; exit 77; }
W=$(mktemp -d /tmp/cbtest-redisguest.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/bin"
ln -s "$(cd "$(dirname "$LOAD")" && pwd)/$(basename "$LOAD")" "$W/bin/redis_load"
# the suites that switch task_delayacct take this lock for their whole run (testutil.h)
exec 9>/tmp/cowbench-delayacct-tests.lock
flock 9
fail=0
servers() { pgrep -f "redis-server.*$W" | wc -l; }
# A cowbench outside the tests (a matrix between its evidence reps) may hold task_delayacct
# in the settings journal ("PATH ORIGINAL PID:START ..."): its live PID, else nothing. The
# script's own cowbench has exited when we look, so any live owner is someone else's run,
# whose value is not ours to compare or to put back.
delayacct_holder() {
	local f=${COWBENCH_RUN_DIR:-/run/cowbench}/overrides p
	[ -r "$f" ] || return 0
	for p in $(awk '$1 == "/proc/sys/kernel/task_delayacct" { for (i = 3; i <= NF; i++) { split($i, a, ":"); print a[1] } }' "$f"); do
		kill -0 "$p" 2>/dev/null && { echo "$p"; return 0; }
	done
}
# The value before any cowbench touched it: the journal's original while someone holds it.
d0=$(cat /proc/sys/kernel/task_delayacct) o0=$(cat /proc/sys/vm/overcommit_memory)
[ -n "$(delayacct_holder)" ] &&
	d0=$(awk '$1 == "/proc/sys/kernel/task_delayacct" { print $2; exit }' "${COWBENCH_RUN_DIR:-/run/cowbench}/overrides")
check() { # WHAT RC
	local d o n h
	h=$(delayacct_holder) # before and after the read: a holder may come or go in between
	d=$(cat /proc/sys/kernel/task_delayacct) o=$(cat /proc/sys/vm/overcommit_memory) n=$(servers)
	[ -n "$h" ] || h=$(delayacct_holder)
	if [ -n "$h" ]; then
		echo "note: $1: task_delayacct is held by another running cowbench (PID $h): not compared"
		d=$d0
	fi
	if [ "$2" -eq 0 ] || [ "$d" != "$d0" ] || [ "$o" != "$o0" ] || [ "$n" -ne 0 ]; then
		echo "FAIL: $1: exit $2, task_delayacct $d (was $d0), overcommit_memory $o (was $o0), $n redis-server left"
		[ -n "$h" ] || echo "$d0" >/proc/sys/kernel/task_delayacct
		echo "$o0" >/proc/sys/vm/overcommit_memory
		pkill -f "redis-server.*$W"
		fail=1
	else
		echo "ok: $1: exit $2, settings as they were, no server left"
	fi
}
run() { # NAME MODE...: one round, tiny, in $W/NAME
	local t=$W/$1
	shift
	PATH="$W/bin:$PATH" REDIS_OUT="$t/out" REDIS_TMP="$t" timeout 60 \
		sh "$REPO/analysis/redis/redis-guest.sh" 1000 16 1 1 0.2 0 100 "$@" >"$W/log" 2>&1
}
run t1 bad:vm.swappiness=60 # a value nobody would mind, were it written
check "a mode redis_load refuses" $?
PATH="$W/bin:$PATH" REDIS_OUT="$W/out" REDIS_TMP="$W/t2" sh "$REPO/analysis/redis/redis-guest.sh" 1000 16 1 1 5 0 100 \
	plain >"$W/log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -S "$W/t2/redis.sock" ] && pgrep -f "redis_load.*$W" >/dev/null && break; sleep 0.1; done
kill -TERM $pid
wait $pid
check "SIGTERM during the load" $?
mkdir -p "$W/t3/out/saves.csv" # a step that fails after the server runs: redis_load cannot write its rows
run t3 plain
check "a failed write of the rows" $?
exit $fail

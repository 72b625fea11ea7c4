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
d0=$(cat /proc/sys/kernel/task_delayacct) o0=$(cat /proc/sys/vm/overcommit_memory)
fail=0
servers() { pgrep -f "redis-server.*$W" | wc -l; }
check() { # WHAT RC
	local d o n
	d=$(cat /proc/sys/kernel/task_delayacct) o=$(cat /proc/sys/vm/overcommit_memory) n=$(servers)
	if [ "$2" -eq 0 ] || [ "$d" != "$d0" ] || [ "$o" != "$o0" ] || [ "$n" -ne 0 ]; then
		echo "FAIL: $1: exit $2, task_delayacct $d (was $d0), overcommit_memory $o (was $o0), $n redis-server left"
		echo "$d0" >/proc/sys/kernel/task_delayacct
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

#!/bin/sh
# Redis BGSAVE save cycles per COW mechanism, uniform and Gaussian keys (guest side, busybox sh;
# needs redis-server, redis-cli and analysis/redis/redis_load in PATH):
#
#   redis-mech.sh KEYS VALUE_SIZE ROUNDS DURING AFTER MODE...
#
# MODE is LABEL or LABEL:NAME=VALUE[,NAME=VALUE...] (sysctls redis_load holds for the cycle, e.g.
# reuse16:vm.cow_reuse_around=16 or adaptive:vm.cow_precopy=2). One redis-server (unix socket, no
# persistence of its own) holds KEYS keys key:0 .. key:KEYS-1 of VALUE_SIZE bytes (DEBUG
# POPULATE, the key names redis_load writes). One unrecorded warm-up cycle per pattern, then
# ROUNDS rounds; in each, every MODE runs one save cycle per key pattern (REDIS_PATTERNS, default
# "random gauss": uniform, and memtier_benchmark's G:G), modes in an order rotated by one per
# round and the patterns' order swapped every round. A save cycle (redis_load --cycle-sets):
# BGSAVE, DURING SETs (4 connections) started with it, wait until the save is reaped, AFTER more
# SETs. REDIS_SAVE_DELAY=US sets Redis's rdb-key-save-delay (microseconds per key saved) so that
# the save outlasts the DURING SETs whatever the emulator's speed. One CSV row per cycle
# (redis_load's --cycles-out columns) goes to $REDIS_OUT/cycles.csv (default /out) and, at the end,
# to stdout. kernel.task_delayacct (taskstats' wpcopy_count, the server's COW copies) and
# vm.overcommit_memory=1 are held for the whole run through redis_load.
set -eu
if [ "${REDIS_MECH_HELD:-}" != 1 ]; then
	REDIS_MECH_HELD=1 exec redis_load --saves 0 --set kernel.task_delayacct=1,vm.overcommit_memory=1 -- \
		sh "$0" "$@"
fi
keys=$1 vsize=$2 rounds=$3 during=$4 after=$5
shift 5
out=${REDIS_OUT:-/out}
tmp=${REDIS_TMP:-/tmp}
sock=$tmp/redis.sock
patterns=${REDIS_PATTERNS:-random gauss}
mkdir -p "$out" "$tmp"
cleanup() {
	redis-cli -s "$sock" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
}
trap cleanup EXIT
redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$tmp" --daemonize yes \
	--enable-debug-command local --logfile "$tmp/redis.log" --pidfile "$tmp/redis.pid" \
	--rdb-key-save-delay "${REDIS_SAVE_DELAY:-0}"
i=0
until redis-cli -s "$sock" ping >/dev/null 2>&1; do
	i=$((i + 1))
	[ "$i" -lt 300 ] || { echo "redis-mech: redis-server did not start" >&2; exit 1; }
	sleep 0.1
done
redis-cli -s "$sock" DEBUG POPULATE "$keys" key "$vsize" >/dev/null
echo "redis-mech: kernel $(uname -r), $(redis-cli -s "$sock" DBSIZE) keys, used_memory $(redis-cli -s "$sock" INFO memory |
	sed -n 's/^used_memory:\([0-9]*\).*/\1/p') B, THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)," \
	"save delay ${REDIS_SAVE_DELAY:-0} us/key, $during SETs during, $after after" >&2

cycle() { # LABEL SETS PATTERN ROUND FILE
	set -- --socket "$sock" --label "$1" --pattern "$3" --round "$4" --saves 1 --keys "$keys" \
		--value-size "$vsize" --conns 4 --cycle-sets "$during,$after" --cycles-out "$5" ${2:+--set "$2"}
	redis_load "$@"
}
for p in $patterns; do
	cycle warmup "" "$p" 0 "$tmp/warmup.csv"
done
r=0
while [ "$r" -lt "$rounds" ]; do
	for m in "$@"; do
		l=${m%%:*} s=""
		case "$m" in *:*) s=${m#*:} ;; esac
		for p in $patterns; do
			echo "redis-mech: round $r, $l, $p" >&2
			cycle "$l" "$s" "$p" "$r" "$out/cycles.csv"
		done
	done
	first=$1
	shift
	set -- "$@" "$first"
	# the other pattern first next round
	patterns=$(for p in $patterns; do echo "$p"; done | sed -n '1!G;h;$p' | tr '\n' ' ')
	r=$((r + 1))
done
cat "$out/cycles.csv"

#!/bin/sh
# Redis BGSAVE save cycles with vm.cow_reuse_around off and on (guest side, busybox sh; needs
# redis-server, redis-cli and redis-benchmark in PATH and a kernel with vm.cow_reuse_around):
#
#   redis-reuse.sh KEYS VALUE_SIZE CYCLES DURING AFTER WINDOW...
#
# One redis-server (unix socket, no persistence of its own) is filled by redis-benchmark with
# KEYS keys of VALUE_SIZE bytes (uniform random SETs until about every key exists).  Then CYCLES
# rounds; in each, every WINDOW (a vm.cow_reuse_around value, e.g. 0 16) runs one save cycle, in
# an order rotated by one per round: BGSAVE, DURING uniform random SETs started with it (4
# connections), wait until the save is reaped, then AFTER more SETs (the writes that reach pages
# the exited child no longer shares).  Per cycle one CSV line on stdout:
#   window,round,parent_traps,cow_faults,pgreuse,around_faults,around_pages,cow_size,during_ms,
#   save_outlasted
# parent_traps: redis-server's minor faults over the cycle (/proc/PID/stat, every thread);
# cow_faults, pgreuse, around_*: /proc/vmstat deltas (cow_fault, pgreuse, cow_reuse_around,
# cow_reuse_around_pages) over the cycle, system-wide; cow_size: Redis's rdb_last_cow_size;
# save_outlasted: 1 when the save was still running as the DURING SETs ended (all of them then hit
# pages the child shared).  REDIS_SAVE_DELAY=US sets Redis's rdb-key-save-delay (microseconds per
# key saved) to make the save outlast the DURING SETs, so that the COW part of a cycle does not
# depend on how fast the emulated guest runs.
set -eu
keys=$1 vsize=$2 cycles=$3 during=$4 after=$5
shift 5
tmp=${REDIS_TMP:-/tmp}
sock=$tmp/redis.sock
cleanup() {
	redis-cli -s "$sock" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
}
trap cleanup EXIT
redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$tmp" --daemonize yes \
	--logfile "$tmp/redis.log" --pidfile "$tmp/redis.pid" --rdb-key-save-delay "${REDIS_SAVE_DELAY:-0}"
i=0
until redis-cli -s "$sock" ping >/dev/null 2>&1; do
	i=$((i + 1))
	[ "$i" -lt 300 ] || { echo "redis-reuse: redis-server did not start" >&2; exit 1; }
	sleep 0.1
done
pid=$(cat "$tmp/redis.pid")
redis-benchmark -s "$sock" -t set -n $((keys * 4)) -r "$keys" -d "$vsize" -c 4 -q >/dev/null 2>&1
echo "redis-reuse: $(redis-cli -s "$sock" DBSIZE) keys, used_memory $(redis-cli -s "$sock" INFO memory |
	sed -n 's/^used_memory:\([0-9]*\).*/\1/p') B, THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)" >&2

saving() { redis-cli -s "$sock" INFO persistence | sed -n 's/^rdb_bgsave_in_progress:\([0-9]\).*/\1/p'; }
info() { redis-cli -s "$sock" INFO persistence | sed -n "s/^$1:\([0-9-]*\).*/\1/p"; }
minflt() { cut -d' ' -f10 "/proc/$pid/stat"; }
ev() { sed -n "s/^$1 //p" /proc/vmstat; }
now_ms() { cut -d' ' -f1 /proc/uptime | awk '{ printf "%d", $1 * 1000 }'; }
set_load() { redis-benchmark -s "$sock" -t set -n "$1" -r "$keys" -d "$vsize" -c 4 -q >/dev/null 2>&1; }

echo "window,round,parent_traps,cow_faults,pgreuse,around_faults,around_pages,cow_size,during_ms,save_outlasted"
r=0
while [ "$r" -lt "$cycles" ]; do
	for w in "$@"; do
		echo "$w" >/proc/sys/vm/cow_reuse_around
		until [ "$(saving)" = 0 ]; do sleep 0.1; done
		f0=$(minflt) c0=$(ev cow_fault) g0=$(ev pgreuse) a0=$(ev cow_reuse_around) p0=$(ev cow_reuse_around_pages)
		t0=$(now_ms)
		redis-cli -s "$sock" BGSAVE >/dev/null
		set_load "$during"
		t1=$(now_ms)
		outlasted=$(saving)
		until [ "$(saving)" = 0 ]; do sleep 0.1; done
		set_load "$after"
		f1=$(minflt) c1=$(ev cow_fault) g1=$(ev pgreuse) a1=$(ev cow_reuse_around) p1=$(ev cow_reuse_around_pages)
		echo "$w,$r,$((f1 - f0)),$((c1 - c0)),$((g1 - g0)),$((a1 - a0)),$((p1 - p0)),$(info rdb_last_cow_size),$((t1 - t0)),$outlasted"
	done
	first=$1
	shift
	set -- "$@" "$first"
	r=$((r + 1))
done
echo 0 >/proc/sys/vm/cow_reuse_around

#!/bin/sh
# The Redis study's guest side (busybox sh), run by analysis/redis/redis-study.sh through kernel/vm-run.sh:
#   redis-guest.sh KEYS VALUE_SIZE CONNS ROUNDS BEFORE AFTER BENCH_REQUESTS MODE...
# MODE is LABEL or LABEL:NAME=VALUE[,NAME=VALUE...] (sysctls that redis_load writes, e.g.
# depth16:vm.cow_precopy=1,vm.cow_precopy_depth=16). One redis-server holds KEYS keys of
# VALUE_SIZE bytes (DEBUG POPULATE). Each round runs every mode once, in an order rotated by one
# per round (the study's interleaving), and per mode one BGSAVE under random SETs and one under
# sequential SETs. Then redis-benchmark once per mode, started together with a BGSAVE.
# Writes saves.csv (per save, with its client latency quantiles), requests.csv.gz (round 0's requests), bench.csv and env.txt into $REDIS_OUT (default /out, the
# guest's; on a machine booted into the kernel itself, as root: REDIS_OUT=DIR REDIS_TMP=DIR, with
# redis_load in PATH — the host's `accel` is then "none", real time).
set -eu
persistence() { redis-cli -s "$1" INFO persistence | sed -n 's/^rdb_bgsave_in_progress:\([0-9]\).*/\1/p'; }
# One line of bench.csv, run by redis_load while the mode's sysctls are held (see the end):
#   redis-guest.sh --bench-one SOCK LABEL REQUESTS KEYS VALUE_SIZE CONNS FILE
if [ "${1:-}" = --bench-one ]; then
	sock=$2
	until [ "$(persistence "$sock")" = 0 ]; do sleep 0.1; done
	redis-cli -s "$sock" BGSAVE >/dev/null
	rps=$(redis-benchmark -s "$sock" -t set -n "$4" -r "$5" -d "$6" -c "$7" --csv |
		sed -n 's/^"SET","\([0-9.]*\)".*/\1/p')
	echo "$3,$rps,$(persistence "$sock")" >>"$8"
	exit 0
fi
# The two settings the whole study needs are held through cowbench's settings journal by
# redis_load for as long as this script runs (put back when it ends, however it ends; a run
# beside it that holds them too is a co-owner, not overwritten): this script never writes one.
# kernel.task_delayacct before redis-server starts, so the kernel keeps count of its COW copies
# (taskstats); vm.overcommit_memory=1 is Redis's own advice for BGSAVE (a fork never fails for
# want of commit charge).
if [ "${REDIS_GUEST_HELD:-}" != 1 ]; then
	REDIS_GUEST_HELD=1 exec redis_load --saves 0 --set kernel.task_delayacct=1,vm.overcommit_memory=1 -- \
		sh "$0" "$@"
fi
keys=$1 vsize=$2 conns=$3 rounds=$4 before=$5 after=$6 bench=$7
shift 7
out=${REDIS_OUT:-/out}
tmp=${REDIS_TMP:-/tmp}
sock=$tmp/redis.sock
mkdir -p "$out" "$tmp"

# What this script starts goes on every exit, a failed step or a signal included (on bare metal it
# runs as root on a real machine): the daemonized redis-server.
cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	if [ -f "$tmp/redis.pid" ]; then
		pid=$(cat "$tmp/redis.pid")
		redis-cli -s "$sock" SHUTDOWN NOSAVE >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
		i=0
		while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$pid" 2>/dev/null || true
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$tmp" --daemonize yes \
	--enable-debug-command local --logfile "$tmp/redis.log" --pidfile "$tmp/redis.pid"
i=0
until redis-cli -s "$sock" ping >/dev/null 2>&1; do
	i=$((i + 1))
	[ "$i" -lt 300 ] || { echo "redis-guest: redis-server did not start" >&2; cat "$tmp/redis.log" >&2; exit 1; }
	sleep 0.1
done
redis-cli -s "$sock" DEBUG POPULATE "$keys" key "$vsize" >/dev/null
{
	accel=$(sed -n 's/.*cowbench\.accel=\([a-z]*\).*/\1/p' /proc/cmdline)
	echo "accel=${accel:-none}"
	echo "kernel=$(uname -r)"
	echo "redis=$(redis-server --version | sed 's/.* v=\([^ ]*\).*/\1/')"
	echo "mem_total_kb=$(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)"
	echo "used_memory=$(redis-cli -s "$sock" INFO memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p')"
	echo "keys=$keys value_size=$vsize conns=$conns rounds=$rounds before=$before after=$after"
} >"$out/env.txt"

label_of() { echo "${1%%:*}"; }
sets_of() { case "$1" in *:*) echo "${1#*:}" ;; esac; }

load() { # MODE ROUND PATTERN SAVES
	l=$(label_of "$1")
	s=$(sets_of "$1")
	rnd=$2
	set -- --socket "$sock" --label "$l" --round "$rnd" --pattern "$3" --saves "$4" --conns "$conns" \
		--keys "$keys" --value-size "$vsize" --before "$before" --after "$after" \
		--saves-out "$out/saves.csv"
	# Every request of round 0 (the plot around a save); the rest only as per-save quantiles.
	[ "$rnd" -ne 0 ] || set -- "$@" --requests "$tmp/requests.csv"
	if [ -n "$s" ]; then
		redis_load "$@" --set "$s"
	else
		redis_load "$@"
	fi
}

r=0
while [ "$r" -lt "$rounds" ]; do
	for m in "$@"; do
		for p in random seq; do
			echo "redis-guest: round $r, $(label_of "$m"), $p" >&2
			load "$m" "$r" "$p" 1
		done
	done
	first=$1
	shift
	set -- "$@" "$first"
	r=$((r + 1))
done

# redis-benchmark as a cross-check: SET requests/s of a run started with a BGSAVE; whether the
# save was still running when the benchmark ended says how much of it the save covered. The
# mode's sysctls are held by redis_load (--saves 0) for as long as the benchmark runs.
echo "label,set_rps,save_running_at_end" >"$out/bench.csv"
for m in "$@"; do
	s=$(sets_of "$m")
	set_arg=""
	[ -z "$s" ] || set_arg="--set=$s"
	redis_load --socket "$sock" --saves 0 --saves-out "$out/saves.csv" $set_arg -- \
		sh "$0" --bench-one "$sock" "$(label_of "$m")" "$bench" "$keys" "$vsize" "$conns" "$out/bench.csv"
done
until [ "$(persistence "$sock")" = 0 ]; do
	sleep 0.1
done
gzip -c "$tmp/requests.csv" >"$out/requests.csv.gz"

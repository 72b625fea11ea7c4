#!/usr/bin/env bash
# Record the bundled replay traces (issue 25) from real programs, on this host:
#
#   analysis/traces/record-traces.sh [--build DIR] [--out DIR] [--only cpython|redis]
#
#   cpython-refcount.trace  the CPython refcount case (analysis/traces/cpython-refcount.py): the parent builds
#                           PY_OBJECTS small objects (default 200000), forks, the child reads them all;
#                           the child's first writes (reference counts) after the fork
#   redis-bgsave.trace      Redis BGSAVE under SET load: redis-server holds REDIS_KEYS keys (default
#                           100000) of REDIS_VALUE_SIZE bytes (256); analysis/redis/redis_load sends random SETs
#                           over REDIS_CONNS connections (4) for 1 s, triggers one BGSAVE and stops when the
#                           save ends; the parent's (the server's) first writes
#
# Each is `cowbench record` (root: the write-fault tracepoint and pagemap PFNs) of the program, written
# whole or not at all; the default --out is analysis/traces/, where the study (analysis/study.ini,
# [replay-*] groups) replays them on every kernel and pre-copy mode. PYTHON picks the interpreter
# (default /usr/bin/python3, Debian's; a pyenv shim would add its own forks to the trace). For each
# trace the script prints its writes and the --size its replay needs (the study.ini groups name it:
# a re-recorded trace that needs more makes the study say so and exit 2).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
build=$REPO/build
out=$HERE
only=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--build) build=$2; shift ;;
	--out) out=$2; shift ;;
	--only) only=$2; shift ;;
	-h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "record-traces: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done
[[ -z $only || $only == cpython || $only == redis ]] || { echo "record-traces: --only cpython or redis" >&2; exit 2; }
[[ $build = /* ]] || build=$PWD/$build
cowbench=$build/cli/cowbench
[[ -x $cowbench ]] || { echo "record-traces: $cowbench is not built" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "record-traces: cowbench record needs root" >&2; exit 2; }
objects=${PY_OBJECTS:-200000} keys=${REDIS_KEYS:-100000} vsize=${REDIS_VALUE_SIZE:-256} conns=${REDIS_CONNS:-4}
for v in "$objects" "$keys" "$vsize" "$conns"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "record-traces: not a positive integer: '$v'" >&2; exit 2; }
done
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/record-traces.XXXXXX")
redis_pid=""
cleanup() {
	[[ -z $redis_pid ]] || kill "$redis_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# What the replay of TRACE needs: the side's writes in its busiest fork and the region (cowbench's
# own check names the exact --size when a smaller one is given).
describe() { # TRACE SIDE
	local why
	why=$("$cowbench" run --workload=replay --trace="$1" --writer="$2" --size=4K --reps=1 2>&1 >/dev/null || true)
	echo "record-traces: $(basename "$1"): $(grep -c "^[0-9].*,$2," "$1") first writes of the $2; replay: $(
		sed -n 's/.*needs \(--size=[0-9]*K\).*the \([0-9]*\) pages.* its \([0-9]*\) writes of fork \([0-9]*\).*/\1 (\3 writes of fork \4)/p' <<<"$why")" >&2
}

if [[ -z $only || $only == cpython ]]; then
	py=${PYTHON:-/usr/bin/python3}
	[[ -x $py ]] || py=$(command -v python3)
	echo "record-traces: CPython refcount case, $objects objects ($py)" >&2
	cp "$HERE/cpython-refcount.py" "$tmp/"
	(cd "$tmp" && "$cowbench" record --force --output="$out/cpython-refcount.trace" -- "$py" cpython-refcount.py "$objects")
	describe "$out/cpython-refcount.trace" child
fi

if [[ -z $only || $only == redis ]]; then
	load=$build/analysis/redis/redis_load
	[[ -x $load ]] || { echo "record-traces: $load is not built (libhiredis-dev)" >&2; exit 2; }
	command -v redis-server >/dev/null || { echo "record-traces: redis-server is not installed" >&2; exit 2; }
	sock=$tmp/redis.sock
	echo "record-traces: Redis BGSAVE under random SETs, $keys keys of $vsize B, $conns connections" >&2
	redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$tmp" --daemonize no \
		--enable-debug-command local --logfile "$tmp/redis.log" &
	redis_pid=$!
	for _ in $(seq 300); do
		redis-cli -s "$sock" ping >/dev/null 2>&1 && break
		sleep 0.1
	done
	redis-cli -s "$sock" ping >/dev/null || { echo "record-traces: redis-server did not start" >&2; exit 1; }
	redis-cli -s "$sock" DEBUG POPULATE "$keys" key "$vsize" >/dev/null
	# The recording covers the whole load run: 1 s before the save and the save.
	"$cowbench" record --force --output="$out/redis-bgsave.trace" --duration=4 -p "$redis_pid" &
	rec=$!
	sleep 0.5
	"$load" --socket "$sock" --label record --pattern random --saves 1 --before 1 --after 0 --conns "$conns" \
		--keys "$keys" --value-size "$vsize" --saves-out "$tmp/saves.csv" >&2
	wait "$rec"
	cow=$(redis-cli -s "$sock" INFO persistence | sed -n 's/^rdb_last_cow_size:\([0-9]*\).*/\1/p')
	echo "record-traces: the save's rdb_last_cow_size: $cow bytes ($((cow / 4096)) pages)" >&2
	redis-cli -s "$sock" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
	wait "$redis_pid" 2>/dev/null || true
	redis_pid=""
	describe "$out/redis-bgsave.trace" parent
fi
ls -l "$out"/*.trace >&2

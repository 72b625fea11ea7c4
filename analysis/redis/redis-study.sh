#!/usr/bin/env bash
# Redis BGSAVE under SET load, in QEMU guests of the stock and the patched 6.12 kernel (issue 30).
#
#   analysis/redis/redis-study.sh [--smoke] [--kernel stock|patched [--image BZIMAGE]] [--build DIR]
#                           [--modes FILE] OUTDIR
#
# One boot per kernel of analysis/redis/redis-modes.txt (the mode table); inside a boot the kernel's modes
# run interleaved, round by round (analysis/redis/redis-guest.sh). Per round and mode: one BGSAVE under
# random SETs, one under sequential SETs (analysis/redis/redis_load, hiredis). Then
# analysis/redis/redis-report.py writes OUTDIR/redis.csv, OUTDIR/redis.md and the plot around a save.
#   --smoke      one round, the patched kernel's "off" mode only, a small dataset (the ctest smoke)
#   --kernel K   boot only this kernel (its rows join those of the other already in OUTDIR)
#   --image F    with --kernel: boot this bzImage as K instead of kernel/build.sh's (e.g. a respun
#                series built elsewhere); env.txt records the guest's uname -r
#   --build DIR  the cmake build directory holding analysis/redis/redis_load (default: build)
#   --modes FILE another mode table (default: analysis/redis/redis-modes.txt)
# Sizes come from the environment: REDIS_KEYS (default 600000), REDIS_VALUE_SIZE (256 bytes),
# REDIS_CONNS (4), REDIS_ROUNDS (5: five saves per mode and pattern), REDIS_BEFORE / REDIS_AFTER
# (seconds of load around each save, 2 / 1), REDIS_BENCH (redis-benchmark requests, 20000),
# REDIS_MEM (guest memory, 2G), REDIS_TIMEOUT (seconds per boot, 3600). vm-run.sh picks KVM
# where a probe boot works, TCG otherwise; env.txt of each boot and the report say which.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
smoke=0
only=""
image=""
build=build
modes_file=$HERE/redis-modes.txt
while [[ $# -gt 0 ]]; do
	case "$1" in
	--smoke) smoke=1 ;;
	--kernel) only=$2; shift ;;
	--image) image=$2; shift ;;
	--build) build=$2; shift ;;
	--modes) modes_file=$2; shift ;;
	-h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "redis-study: unknown option: $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[[ $# -eq 1 ]] || { echo "redis-study: give one OUTDIR" >&2; exit 2; }
out=$1
[[ $build = /* ]] || build=$REPO/$build
load=$build/analysis/redis/redis_load
[[ -x $load ]] || { echo "redis-study: $load is not built (libhiredis-dev missing?)" >&2; exit 2; }
[[ -z $only || $only == stock || $only == patched ]] || { echo "redis-study: --kernel stock or patched" >&2; exit 2; }
[[ -z $image || ( -n $only && -s $image ) ]] || { echo "redis-study: --image needs --kernel and a readable image" >&2; exit 2; }
[[ -r $modes_file ]] || { echo "redis-study: cannot read the mode table $modes_file" >&2; exit 2; }

keys=${REDIS_KEYS:-600000} vsize=${REDIS_VALUE_SIZE:-256} conns=${REDIS_CONNS:-4}
rounds=${REDIS_ROUNDS:-5} before=${REDIS_BEFORE:-2} after=${REDIS_AFTER:-1}
bench=${REDIS_BENCH:-20000} mem=${REDIS_MEM:-2G} timeout=${REDIS_TIMEOUT:-3600}
if [[ $smoke -eq 1 ]]; then
	keys=${REDIS_KEYS:-20000} rounds=1 before=0.5 after=0.5 bench=1000 mem=${REDIS_MEM:-1G}
fi
for v in "$keys" "$vsize" "$conns" "$rounds" "$bench" "$timeout"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "redis-study: not a positive integer: '$v'" >&2; exit 2; }
done

# The mode table: KERNEL LABEL [SYSCTLS]; each kernel's modes become redis-guest.sh arguments.
declare -A modes=()
while read -r kernel label sets rest; do
	[[ -z $kernel || $kernel == \#* ]] && continue
	[[ $kernel == stock || $kernel == patched ]] && [[ $label =~ ^[A-Za-z0-9_.-]+$ ]] && [[ -z $rest ]] &&
		[[ -z $sets || $sets =~ ^[a-z0-9_.]+=-?[0-9]+(,[a-z0-9_.]+=-?[0-9]+)*$ ]] ||
		{ echo "redis-study: bad line in $modes_file: $kernel $label $sets $rest" >&2; exit 2; }
	[[ $smoke -eq 1 && $label != off ]] && continue
	[[ -n $only && $kernel != "$only" ]] && continue
	modes[$kernel]+="$label${sets:+:$sets} "
done <"$modes_file"
[[ ${#modes[@]} -gt 0 ]] || { echo "redis-study: no modes in $modes_file" >&2; exit 2; }

mkdir -p "$out"
status=0
for kernel in stock patched; do
	[[ -n ${modes[$kernel]:-} ]] || continue
	read -r -a list <<<"${modes[$kernel]}"
	dir=$out/redis-$kernel
	rm -rf "$dir"
	mkdir -p "$dir"
	args=(--smp 2 --mem "$mem" --cowbench none --quiet-boot --timeout "$timeout" --out "$dir" --log "$dir/console.log")
	[[ $kernel == stock ]] && args+=(--stock)
	[[ -n $image ]] && args+=(--kernel "$image")
	for p in /usr/bin/redis-server /usr/bin/redis-cli /usr/bin/redis-benchmark "$load" "$HERE/redis-guest.sh"; do
		args+=(--add "$p")
	done
	echo "redis-study: $kernel kernel, modes ${list[*]}, $rounds rounds, $keys keys of $vsize B" >&2
	start=$SECONDS
	if ! "$REPO/kernel/vm-run.sh" "${args[@]}" -- sh /bin/redis-guest.sh "$keys" "$vsize" "$conns" "$rounds" \
		"$before" "$after" "$bench" "${list[@]}" >"$dir/stdout" 2>"$dir/stderr"; then
		echo "redis-study: the $kernel guest failed (see $dir/stderr)" >&2
		status=1
	fi
	echo "wall_s=$((SECONDS - start))" >>"$dir/env.txt"
done
[[ $status -eq 0 ]] || exit 1
# The report's intervals come from this build's cowbench estimate (analysis/cbstats.py).
COWBENCH=${COWBENCH:-$build/cli/cowbench} python3 "$HERE/redis-report.py" "$out"

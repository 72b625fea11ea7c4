#!/usr/bin/env bash
# The main job: install what is needed, build, run the default matrix, and render its statistics,
# plots and report into results/<UTC time>/, whose path is the last line printed. Then the study:
# analysis/study.ini on the stock and patched 6.12 kernels under QEMU (built once, cached). report.md
# opens with the Redis section (analysis/redis/redis-study.sh: BGSAVE under SET load per pre-copy mode,
# redis.csv), then the native projection (projection.md, projection.csv), then the study's TCG table
# "The study, reproduced" (analysis/study-report.py; order: analysis/compose-report.py); its
# [replay-*] groups replay the bundled traces of real programs (analysis/traces/, recorded by
# analysis/traces/record-traces.sh) in every kernel and mode, a replay table per program.
#   ./analysis/main-job.sh                     # the default matrix, adaptive reps (a few minutes on 2 CPUs)
#   ./analysis/main-job.sh my-matrix.ini       # anything else is passed to the host `cowbench matrix`
# COWBENCH_BUILD_DIR picks the build directory (default: build); COWBENCH_SKIP_KERNEL=1 skips the
# study's guests (the report says so); COWBENCH_STUDY picks another study matrix file.
# One part of the campaign alone (each part's --help says more; a matrix file of one of these
# names is given as ./NAME):
#   ./analysis/main-job.sh study [OUTDIR] [OPTIONS]  study.ini and its table (analysis/study.sh)
#   ./analysis/main-job.sh redis [OPTIONS] OUTDIR    Redis BGSAVE under SET load (analysis/redis/)
#   ./analysis/main-job.sh targets [OPTIONS]         the pre-copy targets, met or not (analysis/targets/)
#   ./analysis/main-job.sh traces [OPTIONS]          record the bundled replay traces (analysis/traces/)
#   ./analysis/main-job.sh --help                   this text
set -euo pipefail
here=$(dirname "$0")
case ${1:-} in # before the cd: a part's paths are the caller's
-h | --help)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
study) shift; exec "$here/study.sh" "$@" ;;
redis) shift; exec "$here/redis/redis-study.sh" "$@" ;;
targets) shift; exec "$here/targets/targets.sh" "$@" ;;
traces) shift; exec "$here/traces/record-traces.sh" "$@" ;;
esac
cd "$here/.."
build=${COWBENCH_BUILD_DIR:-build}
study=${COWBENCH_STUDY:-analysis/study.ini}

# stdout is the results folder alone (its last line): what the installer and the build say goes to stderr.
./tests/install-deps.sh >&2
cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
cowbench=$build/cli/cowbench

out=results/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
echo "cowbench: running the matrix into $out/results.csv" >&2
status=0
# The default matrix runs adaptive reps: each cell until the 95 % interval of its headline metric is
# within +-3 %, and each fork cell until its headline ratio (the writes' elapsed time after fork over
# the same writes without fork: the engine's Hodges-Lehmann ratio, which a rep the host stalled 15x
# barely moves) is too, within a budget of 1000 reps or 90 s of reps per cell.
[ "$#" -gt 0 ] || set -- --target-ci=3 --baseline=fork=0 --baseline-metric=elapsed_ns \
	--max-reps=1000 --max-time=90s
# Off a terminal (CI logs, nohup) the matrix draws no progress line: say every minute how far it got.
ticker=
if [ ! -t 2 ]; then
	(
		trap 'kill "$nap" 2>/dev/null; exit 0' TERM
		start=$SECONDS
		while :; do
			sleep 60 &
			nap=$!
			wait "$nap"
			rows=$(($(wc -l <"$out/results.csv" 2>/dev/null || echo 1) - 1))
			echo "cowbench: matrix running for $(((SECONDS - start) / 60)) min, $((rows < 0 ? 0 : rows)) rows so far" >&2
		done
	) &
	ticker=$!
fi
"$cowbench" matrix --output "$out/results.csv" "$@" || status=$?
[ -z "$ticker" ] || { kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true; }
if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
	exit "$status" # bad input: nothing measured
fi
# Status 1: some rep failed; its row says how, and the rest is still worth summarising.
# Headline metrics, and each fork cell's ratio to its --no-fork cell (what COW costs), with CIs.
metrics=lat_p50_ns,elapsed_ns,fork_ns,slowdown
"$cowbench" summarize --quiet --metric=$metrics --baseline fork=0 "$out/results.csv" >"$out/summary.txt"
"$cowbench" summarize --quiet --metric=$metrics --baseline fork=0 --format=csv "$out/results.csv" \
	>"$out/summary.csv"
"$cowbench" plot "$out/results.csv" --out "$out" >&2
# The headline ratios, first in report.md: what a cell's writes cost after fork, against its
# --no-fork twin's. Every number and its text is summarize's own (its JSON, read by field name).
"$cowbench" summarize --quiet --metric=elapsed_ns --baseline fork=0 --format=json "$out/results.csv" |
	python3 analysis/headline-ratios.py >"$out/ratios.md"

# ---- native unit costs (issue 30): what a COW write fault, a trap-free COW break (one
# MADV_POPULATE_WRITE) and a private write cost on this host, interleaved; the study's native
# projection prices its exact counts with them (cowbench project --native) ----
echo "cowbench: the host's unit costs into $out/native-units.csv" >&2
"$cowbench" matrix -w seq -s 16M,64M --fork=1,0 --break=fault,populate --reps=21 --probes=none --quiet \
	--output "$out/native-units.csv" || status=$?

# ---- the study on the kernel patch: QEMU guests of the stock and the patched kernel ----
study_skipped() { # REASON: the report still opens with the sections, saying why they have no table
	printf '## Native projection of the study\n\nNot run here: %s.\n\n' "$1" >"$out/projection.md"
	printf '## The study, reproduced\n\nNot run here: %s. The host part of the report follows.\n\n' "$1" \
		>"$out/study.md"
	echo "cowbench: the study was not run: $1" >&2
}
kstatus=0
if [ "${COWBENCH_SKIP_KERNEL:-0}" = 1 ]; then
	study_skipped "COWBENCH_SKIP_KERNEL=1"
elif ! ./tests/install-deps.sh qemu-system-x86 busybox-static cpio python3 >"$out/study.log" 2>&1 ||
	! command -v qemu-system-x86_64 >/dev/null; then
	study_skipped "QEMU could not be installed (see study.log)"
else
	echo "cowbench: the study ($study) on the stock and patched kernels into $out/study.csv" >&2
	"$cowbench" matrix --build --output "$out/study.csv" "$study" 2>>"$out/study.log" || kstatus=$?
	if [ "$kstatus" -ge 2 ] || ! grep -q ',ok,' "$out/study.csv" 2>/dev/null; then
		study_skipped "the guests did not run (cowbench matrix exit $kstatus; the end of study.log: $(
			grep -v '^\[' "$out/study.log" | tail -1 | tr -d '`|'))"
		kstatus=1
	else
		python3 analysis/study-report.py "$cowbench" "$out/study.csv" "$out" "$out/native-units.csv"
		# Order-0 faults and fork() of 1 GiB, pre-copy off against stock, in instructions (QEMU
		# -icount): deterministic across boots, where TCG time is not (analysis/order0.ini).
		if COWBENCH_VM_ICOUNT=1 COWBENCH_VM_MEM=3G "$cowbench" matrix --build --output "$out/order0.csv" \
			analysis/order0.ini 2>>"$out/study.log"; then
			python3 analysis/projection_report.py order0 "$cowbench" "$out/order0.csv" >>"$out/study.md"
		else
			echo "cowbench: the order-0 runs failed (see $out/study.log)" >&2
			kstatus=1
		fi
		# Every study row through cowbench plot too: distributions per cell and the pre-copy
		# trade-off of the sparse writers (faults saved against pages wasted, memory, p99).
		if "$cowbench" plot "$out/study.csv" --out "$out/study" >>"$out/study.log" 2>&1; then
			printf '\nThe study'"'"'s own plots and its pre-copy trade-off table (stride, hotset, burst): `study/report.md`.\n\n' \
				>>"$out/study.md"
		else
			echo "cowbench: plotting the study failed (see $out/study.log)" >&2
			kstatus=1
		fi
	fi
fi
# ---- Redis BGSAVE under SET load in the same kernels' guests (issue 30): opens the report ----
redis_skipped() {
	printf '## Redis BGSAVE under SET load\n\nNot run here: %s.\n\n' "$1" >"$out/redis.md"
	echo "cowbench: the Redis study was not run: $1" >&2
}
if [ "${COWBENCH_SKIP_KERNEL:-0}" = 1 ]; then
	redis_skipped "COWBENCH_SKIP_KERNEL=1"
elif [ ! -x "$build/analysis/redis/redis_load" ]; then
	redis_skipped "analysis/redis/redis_load is not built (libhiredis-dev)"
else
	echo "cowbench: the Redis study (analysis/redis/redis-modes.txt) into $out/redis.csv" >&2
	if ! ./analysis/redis/redis-study.sh --build "$build" "$out" >>"$out/redis.log" 2>&1; then
		redis_skipped "analysis/redis/redis-study.sh failed (see redis.log: $(tail -1 "$out/redis.log" | tr -d '`|'))"
		kstatus=1
	fi
fi
# report.md opens with the Redis result per mode, then the native projection (analysis/compose-report.py).
{
	python3 analysis/compose-report.py "$out"
	printf '\nMain job wall time: %d min %02d s (kernel builds included when they were not cached).\n' \
		$((SECONDS / 60)) $((SECONDS % 60))
} >"$out/report.md.new"
mv "$out/report.md.new" "$out/report.md"

[ "$status" -eq 0 ] || echo "cowbench: some repetitions failed (see the status column of $out/results.csv)" >&2
[ "$kstatus" -eq 0 ] || echo "cowbench: the study had failures (see $out/study.log and the status column)" >&2
echo "cowbench: results.csv, study.csv, redis.csv, summary.txt, summary.csv, report.md and the PNG/SVG plots are in:" >&2
echo "$out"
[ "$status" -eq 0 ] && exit "$kstatus"
exit "$status"

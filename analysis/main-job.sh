#!/usr/bin/env bash
# The main job: install what is needed, build, run the default matrix, and render its statistics,
# plots and report into results/<UTC time>/, whose path is the last line printed.
#   ./analysis/main-job.sh                     # the default matrix, adaptive reps (about a minute on 2 CPUs)
#   ./analysis/main-job.sh my-matrix.ini       # anything else is passed to `cowbench matrix`
# COWBENCH_BUILD_DIR picks the build directory (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${COWBENCH_BUILD_DIR:-build}

./tests/install-deps.sh
cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
cowbench=$build/cli/cowbench

out=results/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
echo "cowbench: running the matrix into $out/results.csv" >&2
status=0
# The default matrix runs adaptive reps: each cell until the 95 % interval of its headline metric is
# within +-3 %, within a budget (30 reps or 3 s of reps per cell) that keeps the job near a minute.
[ "$#" -gt 0 ] || set -- --target-ci=3 --max-reps=30 --max-time=3s
"$cowbench" matrix --output "$out/results.csv" "$@" || status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
	exit "$status" # bad input: nothing measured
fi
# Status 1: some rep failed; its row says how, and the rest is still worth summarising.
# Headline metrics, and each fork cell's ratio to its --no-fork cell (what COW costs), with CIs.
metrics=lat_p50_ns,elapsed_ns,fork_ns,slowdown
"$cowbench" summarize --quiet --metric=$metrics --baseline fork=0 "$out/results.csv" >"$out/summary.txt"
"$cowbench" summarize --quiet --metric=$metrics --baseline fork=0 --format=csv "$out/results.csv" >"$out/summary.csv"
"$cowbench" plot "$out/results.csv" --out "$out"
[ "$status" -eq 0 ] || echo "cowbench: some repetitions failed (see the status column of $out/results.csv)" >&2
echo "cowbench: results.csv, summary.txt, summary.csv, report.md and the PNG/SVG plots are in:" >&2
echo "$out"
exit "$status"

#!/usr/bin/env bash
# The study alone (the main job's `study` part): analysis/study.ini (seq / random / single at 16M
# and 64M; stock; patched with pre-copy 0, depth 1 and 16, adaptive) with one QEMU boot per kernel
# and the modes interleaved rep by rep inside it; rows in one CSV, the table from
# analysis/study-report.py (changes against pre-copy 0 with 95 % CIs, beside the seed's figures).
#   analysis/study.sh [OUT-DIR] [cowbench matrix options, e.g. --reps=5]
# COWBENCH: the cowbench to use (default: build/cli/cowbench, built if missing).
set -euo pipefail
case ${1:-} in -h | --help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-$(mktemp -d "${TMPDIR:-/tmp}/cowbench-bench.XXXXXX")}
[[ $# -gt 0 ]] && shift
COWBENCH=${COWBENCH:-$REPO/build/cli/cowbench}
[[ -x $COWBENCH ]] || { cmake -S "$REPO" -B "$REPO/build" >/dev/null && cmake --build "$REPO/build" -j2 >/dev/null; }
mkdir -p "$OUT"
"$COWBENCH" matrix --output "$OUT/study.csv" "$@" "$REPO/analysis/study.ini" || [[ $? -eq 1 ]]
python3 "$REPO/analysis/study-report.py" "$COWBENCH" "$OUT/study.csv" "$OUT"
cat "$OUT/study.md"
echo "rows: $OUT/study.csv; plots: $OUT/study_modes.png, $OUT/study_latency.png"

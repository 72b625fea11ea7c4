#!/bin/sh
# Replay a fuzz target's checked-in corpus, then fuzz it for SECONDS (libFuzzer).
# usage: run-fuzz.sh TARGET CORPUS-DIR SECONDS
# New inputs go to a temporary corpus (the checked-in one is only read); a crash leaves its
# input as ./crash-* in the working directory (ctest: build/tests/fuzz/) and fails the test.
# Longer runs by hand: TARGET -max_total_time=3600 NEWDIR CORPUS-DIR   (see docs/develop.md, "Fuzzing").
set -eu
[ $# -eq 3 ] || { echo "usage: $0 TARGET CORPUS-DIR SECONDS" >&2; exit 2; }
bin=$1 corpus=$2 secs=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" -runs=0 "$corpus"
"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
	-artifact_prefix=./ "$tmp" "$corpus"

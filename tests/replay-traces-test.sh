#!/usr/bin/env bash
# ctest replay_traces (seconds): the bundled traces of analysis/traces/record-traces.sh are whole, the
# study's [replay-*] groups (analysis/study.ini) name a size each trace fits, and replaying each on
# this host writes exactly the pages its side wrote in its busiest fork (the distinct pages: a page
# written twice is played once). The guest and every pre-copy mode: the main job's study.
# usage: tests/replay-traces-test.sh PATH/TO/cowbench SOURCE_DIR
set -uo pipefail
cowbench=$(realpath "$1")
cd "$2" || exit 2
fail=0
groups=$(python3 - analysis/study.ini <<'PY'
import configparser, sys
ini = configparser.ConfigParser(inline_comment_prefixes=(";",))
ini.read(sys.argv[1])
for g in ini.sections():
    if g.startswith("replay-"):
        s = ini[g]
        print(g, s["trace"], s["writer"], s["size"])
PY
)
[ -n "$groups" ] || { echo "FAIL: no [replay-*] groups in analysis/study.ini"; exit 1; }
while read -r group trace writer size; do
	[ -f "$trace" ] || { echo "FAIL: $group: $trace is missing"; fail=1; continue; }
	bytes=$(stat -c %s "$trace")
	[ "$bytes" -lt 1000000 ] || { echo "FAIL: $trace is $bytes bytes (keep bundled traces under 1 MB)"; fail=1; }
	want=$(python3 - "$trace" "$writer" <<'PY'
import collections, sys
path, side = sys.argv[1], sys.argv[2]
per_fork = collections.defaultdict(list)
for line in open(path):
    if line[0].isdigit():
        t, fork, s, pid, m, kind, map_pages, page, cls = line.strip().split(",")
        if s == side:
            per_fork[int(fork)].append((int(m), int(page)))
best = max(sorted(per_fork), key=lambda f: len(per_fork[f]))
print(len(set(per_fork[best])))
PY
)
	got=$("$cowbench" run --workload=replay --trace="$trace" --writer="$writer" --size="$size" --reps=1 \
		--warmup=0 --probes=none --format=csv 2>/dev/null |
		python3 -c 'import csv, sys; print(" ".join(r["touched"] + ":" + r["status"] for r in csv.DictReader(sys.stdin)))')
	if [ "$got" = "$want:ok" ]; then
		echo "ok: $group: replayed $want writes of the $writer ($trace, --size=$size)"
	else
		echo "FAIL: $group: wanted $want:ok, got '$got'"
		fail=1
	fi
done <<<"$groups"
# The study lists the replay cells on both kernels, carried into the guests as files (no boot here).
n=$("$cowbench" matrix --dry-run analysis/study.ini 2>/dev/null | grep -c '^[0-9].*workload=replay')
[ "$n" -eq 8 ] && echo "ok: the study has 8 replay cells" || { echo "FAIL: the study has $n replay cells, not 8"; fail=1; }
exit $fail

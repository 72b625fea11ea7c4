#!/usr/bin/env bash
# Issue 29's and issue 39's (round 4) findings re-tried as an attacker (tests/hostile/README.md): every
# item's script, then the totals they counted. CB_ASAN=1 runs build-asan's cowbench (cmake -DCOWBENCH_SANITIZE=ON -B build-asan).
# Root, no QEMU: the guest is tests/hostile/fake-kernel. KILLS=N kills per signal in item 9 (default 8).
set -u
cd "$(dirname "$0")"
export TOTALS_FILE=${TOTALS_FILE:-$(mktemp /tmp/h29-totals.XXXXXX)}
: > "$TOTALS_FILE"
for s in item1_output_is_input.sh item23_guest_stream.sh item4_journal.sh item5_pairing.py item6_duplicates.sh \
	item7_equivalent.sh item8_where_exec.sh item9_disk_signals.sh \
	i39_1_outputs.sh i39_2_race.sh i39_3_plot.sh i39_4_settings.sh i39_6_readers.sh i39_7_hangs.sh; do
	echo "=== $s"
	case $s in *.py) nice python3 "./$s" ;; *) nice "./$s" ;; esac 2>&1 | grep -E '^(==|   -|note:)'
done
echo
printf '%-5s %7s %8s %10s %8s %5s %5s %9s %11s %6s\n' item inputs crashes wrong_exit partial lost dup settings wrote_input other
awk '/^TOTALS/ { printf "%-5s %7d %8d %10d %8d %5d %5d %9d %11d %6d\n", $2, $3, $4, $5, $6, $7, $8, $9, $10, $11
	for (i = 3; i <= 11; i++) t[i] += $i }
	END { printf "%-5s %7d %8d %10d %8d %5d %5d %9d %11d %6d\n", "all", t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11] }' "$TOTALS_FILE"

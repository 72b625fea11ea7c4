#!/usr/bin/env bash
# The bundled CPython and Redis replays (analysis/study.ini [replay-cpython], [replay-redis]) per
# COW mechanism, interleaved in one -icount boot per kernel: every mechanism once per round, the
# order rotating each round. Round 0 adds the perf software counter inline (user traps); rounds 1..3
# are clean (pagemap and smaps only, read around the loop). /proc/vmstat's cow_* lines are saved
# around every run (exact counts: COW faults, pre-copied and populate-batched pages).
# usage: run-replays.sh patched|stock IMAGE [BOOT]   (from the repository root; writes $DIR/KIND[-BOOT]/)
set -euo pipefail
kind=$1 image=$2 boot=${3:-}
dir=kernel/data/v4-2026-11-27/replay/$kind${boot:+-$boot}
mkdir -p "$dir"
if [[ $kind == stock ]]; then mechs="stock stock-populate"; else mechs="off adaptive fixed16 reuse16 populate"; fi
guest='
M="'"$mechs"'"
[ -w /proc/sys/vm/cow_stats_timing ] && echo 0 > /proc/sys/vm/cow_stats_timing
{ uname -a; for f in /proc/sys/vm/cow_*; do [ -e "$f" ] && echo "$f=$(cat $f)"; done; } > /out/info.txt
one() { # prog trace writer size mech tag probes
	prog=$1 tr=$2 w=$3 sz=$4 mech=$5 tag=$6 probes=$7 pc=0 extra=""
	case $mech in
	adaptive) pc=2 ;;
	fixed16) pc=1 extra="--precopy-depth=16" ;;
	populate|stock-populate) extra="--break=populate" ;;
	esac
	if [ -w /proc/sys/vm/cow_reuse_around ]; then
		if [ $mech = reuse16 ]; then echo 16; else echo 0; fi > /proc/sys/vm/cow_reuse_around
	fi
	pcopt=""
	[ -e /proc/sys/vm/cow_precopy ] && pcopt="--precopy=$pc"
	f=/out/$prog-$mech-$tag
	grep "^cow_" /proc/vmstat > $f.vm0
	cowbench run --workload=replay --trace=/data/$tr --writer=$w --size=$sz --reps=1 --warmup=0 \
		--probes=$probes $pcopt $extra --format=csv > $f.csv 2> $f.err
	echo $? > $f.rc
	grep "^cow_" /proc/vmstat > $f.vm1
	[ -w /proc/sys/vm/cow_reuse_around ] && echo 0 > /proc/sys/vm/cow_reuse_around
	echo "done $prog $mech $tag rc=$(cat $f.rc)"
}
list=$M
for tag in 0 1 2 3; do
	probes=pagemap,smaps
	[ $tag = 0 ] && probes=pagemap,smaps,perf,inline
	for mech in $list; do
		one cpython cpython-refcount.trace child 36620K $mech $tag $probes
		one redis redis-bgsave.trace parent 51012K $mech $tag $probes
	done
	set -- $list; first=$1; shift; list="$* $first"
done
'
exec kernel/vm-run.sh --kernel "$image" --icount --quiet-boot --out "$dir" --log "$dir/console.log" \
	--cowbench build-static/cli/cowbench --timeout 1500 \
	--data analysis/traces/cpython-refcount.trace --data analysis/traces/redis-bgsave.trace -- sh -c "$guest"

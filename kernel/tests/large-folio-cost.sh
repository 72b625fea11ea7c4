#!/bin/sh
# The COW paths over large folios (guest side, busybox sh; cowcost in PATH): per THP setting and,
# on the patched kernel, per mode, `cowcost --thp --counts` (regions 2 MiB aligned, MADV_HUGEPAGE)
# on a forked child writing 4,096 shared pages in order (cow-seq) and in random order (cow-rand)
# and on the parent writing them after its child exited (reuse): instructions per page under
# vm-run.sh --icount, the writer's traps and the event deltas of each repetition.
#
#   large-folio-cost.sh REPS
#
# THP settings: "always" (transparent_hugepage/enabled = always, the PMD size; the other sizes
# keep their defaults) and "mthp64" (enabled = never, hugepages-64kB/enabled = always); then
# "order0" (cowcost without --thp: MADV_NOHUGEPAGE) as the reference.  Modes, where the kernel has
# the sysctls: off; fixed16 (vm.cow_precopy = 1, depth 16, batch 16); adaptive (vm.cow_precopy =
# 2); reuse16 (vm.cow_reuse_around = 16, pre-copy off).  Each block starts with a "=== SETTING
# MODE" line.  Timing of /proc/cow_stats is switched off (vm.cow_stats_timing = 0) as for the
# off-cost runs; every setting it changes is put back at the end.
set -eu
reps=${1:-7}
T=/sys/kernel/mm/transparent_hugepage
V=/proc/sys/vm
ops=cow-seq,cow-rand,reuse
thp0=$(sed 's/.*\[\(.*\)\].*/\1/' $T/enabled)
m640=$(sed 's/.*\[\(.*\)\].*/\1/' $T/hugepages-64kB/enabled)
restore() {
	echo "$thp0" > $T/enabled
	echo "$m640" > $T/hugepages-64kB/enabled
	if [ -w $V/cow_precopy ]; then
		echo 0 > $V/cow_precopy; echo 1 > $V/cow_precopy_depth; echo 16 > $V/cow_precopy_batch
	fi
	[ -w $V/cow_reuse_around ] && echo 0 > $V/cow_reuse_around
	return 0
}
trap restore EXIT
[ -w $V/cow_stats_timing ] && echo 0 > $V/cow_stats_timing
modes=off
[ -w $V/cow_precopy ] && modes="$modes fixed16 adaptive"
[ -w $V/cow_reuse_around ] && modes="$modes reuse16"
setmode() {
	if [ -w $V/cow_precopy ]; then
		echo 0 > $V/cow_precopy; echo 16 > $V/cow_precopy_batch
		case $1 in
		fixed16) echo 16 > $V/cow_precopy_depth; echo 1 > $V/cow_precopy ;;
		adaptive) echo 1 > $V/cow_precopy_depth; echo 2 > $V/cow_precopy ;;
		*) echo 1 > $V/cow_precopy_depth ;;
		esac
	fi
	if [ -w $V/cow_reuse_around ]; then
		if [ "$1" = reuse16 ]; then echo 16 > $V/cow_reuse_around; else echo 0 > $V/cow_reuse_around; fi
	fi
}
echo "# $(uname -r) $(cat /proc/cmdline | tr ' ' '\n' | grep accel)"
for setting in always mthp64 order0; do
	case $setting in
	always) echo always > $T/enabled; echo "$m640" > $T/hugepages-64kB/enabled; thp=--thp ;;
	mthp64) echo never > $T/enabled; echo always > $T/hugepages-64kB/enabled; thp=--thp ;;
	order0) echo "$thp0" > $T/enabled; echo "$m640" > $T/hugepages-64kB/enabled; thp= ;;
	esac
	echo "# enabled: $(cat $T/enabled); hugepages-64kB: $(cat $T/hugepages-64kB/enabled);" \
		"hugepages-2048kB: $(cat $T/hugepages-2048kB/enabled); defrag: $(cat $T/defrag)"
	for mode in $modes; do
		setmode "$mode"
		echo "=== $setting $mode"
		cowcost $thp --counts --reps "$reps" --ops $ops
	done
done

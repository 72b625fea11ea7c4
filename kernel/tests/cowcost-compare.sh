#!/usr/bin/env bash
# Instructions per fault path, stock against patched, with intervals: boots
# the two images alternately under QEMU -icount (stock, patched, stock, ...),
# runs cowcost (kernel/tests/cowcost.c) in each, on the patched kernel once per
# mode, and hands every repetition to `cowbench estimate`: per operation the
# Hodges-Lehmann ratio of each mode against stock (and of each copying mode
# against off) with its exact interval.  Every number is an instruction count
# (1 emulated ns = 1 guest instruction), never a time.
#
#   kernel/tests/cowcost-compare.sh [--boots N] [--reps N] [--ops LIST]
#       [--modes LIST] [--out DIR] STOCK_BZIMAGE PATCHED_BZIMAGE
#
#   --boots N   boots per kernel (default 2)
#   --reps N    cowcost repetitions per operation and boot (default 7)
#   --ops LIST  cowcost operations (default cow-seq,cow-rand,reuse,anon-touch,
#               file-write,anon-populate,cow-populate,fork-vmas)
#   --modes LIST  patched modes, each run in every patched boot: off (everything
#               off), adaptive (vm.cow_precopy = 2), fixed16 (vm.cow_precopy = 1,
#               depth 16), reuse16 (vm.cow_reuse_around = 16); default off,adaptive
#   --out DIR   keep the raw cowcost lines, values.csv and the estimate tables
#
# The mode names are looked up here, never passed to a shell.  Timing
# (vm.cow_stats_timing) is 0 in every patched boot.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KDIR=$(cd "$HERE/.." && pwd)
ROOT=$(cd "$KDIR/.." && pwd)
BOOTS=2
REPS=7
OPS=cow-seq,cow-rand,reuse,anon-touch,file-write,anon-populate,cow-populate,fork-vmas
MODES=off,adaptive
OUT=""
die() { echo "cowcost-compare: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
	case "$1" in
	--boots) BOOTS=${2:-}; shift ;;
	--reps) REPS=${2:-}; shift ;;
	--ops) OPS=${2:-}; shift ;;
	--modes) MODES=${2:-}; shift ;;
	--out) OUT=${2:-}; shift ;;
	-h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option '$1'" ;;
	*) break ;;
	esac
	shift
done
[[ $# -eq 2 ]] || die "give STOCK_BZIMAGE and PATCHED_BZIMAGE"
STOCK=$1
PATCHED=$2
[[ -s $STOCK && -s $PATCHED ]] || die "no such image: $STOCK or $PATCHED"
[[ $BOOTS =~ ^[1-9][0-9]?$ ]] || die "--boots must be 1..99"
[[ $REPS =~ ^[1-9][0-9]?$ ]] || die "--reps must be 1..99"
[[ $OPS =~ ^[a-z-]+(,[a-z-]+)*$ ]] || die "--ops: names separated by commas"

# mode -> the guest's settings (fixed text, chosen here)
mode_settings() {
	case "$1" in
	off) echo "" ;;
	adaptive) echo "echo 2 > /proc/sys/vm/cow_precopy;" ;;
	fixed16) echo "echo 16 > /proc/sys/vm/cow_precopy_depth; echo 1 > /proc/sys/vm/cow_precopy;" ;;
	reuse16) echo "echo 16 > /proc/sys/vm/cow_reuse_around;" ;;
	*) return 1 ;;
	esac
}
IFS=, read -r -a MODE_LIST <<< "$MODES"
GUEST="echo 0 > /proc/sys/vm/cow_stats_timing;"
for m in "${MODE_LIST[@]}"; do
	s=$(mode_settings "$m") || die "unknown mode '$m' (off, adaptive, fixed16, reuse16)"
	# Each mode from everything off, so that the modes do not mix.
	GUEST+=" echo 0 > /proc/sys/vm/cow_precopy; echo 0 > /proc/sys/vm/cow_reuse_around; $s"
	GUEST+=" echo mode=$m; cowcost --reps $REPS --ops $OPS;"
done

COWBENCH=${COWBENCH:-$ROOT/build/cli/cowbench}
[[ -x $COWBENCH ]] || die "no cowbench at $COWBENCH (build it, or set COWBENCH)"
WORK=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/cowcost-compare.XXXXXX")}
mkdir -p "$WORK"
for ((b = 1; b <= BOOTS; b++)); do
	"$KDIR/vm-run.sh" --kernel "$STOCK" --icount --cowbench none --quiet-boot -- \
		sh -c "echo mode=stock; cowcost --reps $REPS --ops $OPS" > "$WORK/stock-$b.txt"
	"$KDIR/vm-run.sh" --kernel "$PATCHED" --icount --cowbench none --quiet-boot -- \
		sh -c "$GUEST" > "$WORK/patched-$b.txt"
done
# set = operation, group = stock or the mode, value = instructions per page (per fork)
awk 'BEGIN { print "set,group,value" }
	/^mode=/ { mode = substr($1, 6) }
	/^cowcost op=/ { split($2, o, "="); split($4, v, "="); print o[2] "," mode "," v[2] }' \
	"$WORK"/stock-*.txt "$WORK"/patched-*.txt > "$WORK/values.csv"
echo "# patched (each mode) against stock: instructions, $BOOTS boots x $REPS reps per kernel"
"$COWBENCH" estimate --baseline=stock --format=markdown "$WORK/values.csv" | tee "$WORK/vs-stock.md"
if [[ ${#MODE_LIST[@]} -gt 1 && " ${MODE_LIST[*]} " == *" off "* ]]; then
	echo "# each mode against off, same boots"
	grep -v ',stock,' "$WORK/values.csv" > "$WORK/values-patched.csv"
	"$COWBENCH" estimate --baseline=off --format=markdown "$WORK/values-patched.csv" | tee "$WORK/vs-off.md"
fi
echo "raw: $WORK" >&2

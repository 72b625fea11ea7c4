#!/usr/bin/env bash
# The pre-copy targets matrix: one boot of the patched kernel runs every
# workload under every pre-copy mode, interleaved and rotated inside each
# repetition, and prints for each cell the change against cow_precopy=0 with
# its interval from cowbench estimate (docs/reference.md "Statistics"), then the
# targets of the pre-copy v3 work (faults, pages per fault against the cap
# vm.cow_precopy_batch, pages wasted, single-page runtime) as met / not met.  With --fork it also boots the
# stock and the patched kernel alternately and compares fork() of a
# populated mapping (fork neutrality).
#
#   analysis/targets/targets.sh [--reps N] [--smp N] [--modes "0:1 2:1 1:16"]
#                     [--fork-boots N] [--fork-mb N] [--kernel BZIMAGE] [--native]
#
#   --reps N        repetitions of every cell (default 9, at least 5; 0 skips
#                   the matrix, for a fork comparison alone)
#   --smp N         guest CPUs (default 1: the least emulation noise)
#   --modes M       pre-copy modes as MODE:DEPTH[:bB] (default "0:1 2:1
#                   1:16"); MODE 0 off, 1 fixed, 2 adaptive; 0:1 is the
#                   baseline and must be there; ":bB" runs the mode with
#                   vm.cow_precopy_batch=B (1-16, the most pages one fault
#                   copies ahead), otherwise with the default 16
#   --fork-boots N  boot stock and patched N times each, alternately, for the
#                   fork comparison (default 0: skip)
#   --fork-mb N     size of the forked mapping (default 1024)
#   --kernel F      patched bzImage to use instead of kernel/build.sh's
#   --native        run the matrix on the running kernel (bare metal or a
#                   KVM guest booted with the patched kernel; needs root)
#                   instead of a QEMU guest
#
# Workloads (kernel/tests/cowfaults.c, every write timed with --lat): seq
# 16 and 64 MiB, stride-2, hotset 10 %, bursts of 64 pages, random and
# single page at 16 MiB.  /proc/cow_stats is reset before every run, so its
# precopy_fault_pages_max is that run's worst fault.
# Under TCG all times are emulated: only ratios inside one boot mean
# anything.  Fault counts, wasted pages and growth are exact.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KDIR=$(cd "$HERE/../../kernel" && pwd) # build.sh, vm-run.sh and the guest's cowfaults
REPS=9
SMP=1
MODES="0:1 2:1 1:16"
FORK_BOOTS=0
FORK_MB=1024
KERNEL=""
NATIVE=0
usage() { sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [[ $# -gt 0 ]]; do
	case "$1" in
	--reps) REPS=$2; shift ;;
	--smp) SMP=$2; shift ;;
	--modes) MODES=$2; shift ;;
	--fork-boots) FORK_BOOTS=$2; shift ;;
	--fork-mb) FORK_MB=$2; shift ;;
	--kernel) KERNEL=$2; shift ;;
	--native) NATIVE=1 ;;
	-h|--help) usage 0 ;;
	*) echo "targets.sh: unknown argument: $1" >&2; usage 2 ;;
	esac
	shift
done
[[ $REPS =~ ^[0-9]+$ && ( $REPS -ge 5 || $REPS -eq 0 ) ]] || { echo "targets.sh: --reps must be 0 or a number >= 5" >&2; exit 2; }
[[ $REPS -gt 0 || $FORK_BOOTS -gt 0 ]] || { echo "targets.sh: nothing to do with --reps 0 and no --fork-boots" >&2; exit 2; }
[[ $SMP =~ ^[0-9]+$ && $SMP -ge 1 ]] || { echo "targets.sh: --smp must be a number >= 1" >&2; exit 2; }
[[ $FORK_BOOTS =~ ^[0-9]+$ && $FORK_MB =~ ^[0-9]+$ ]] || { echo "targets.sh: --fork-boots/--fork-mb must be numbers" >&2; exit 2; }
for m in $MODES; do
	[[ $m =~ ^[0-2]:([0-9]+)(:b([0-9]+))?$ ]] || { echo "targets.sh: bad mode '$m' (want MODE:DEPTH[:bB], MODE 0-2)" >&2; exit 2; }
	[[ ${BASH_REMATCH[1]} -ge 1 && ${BASH_REMATCH[1]} -le 64 ]] || { echo "targets.sh: bad mode '$m' (depth 1-64)" >&2; exit 2; }
	[[ -z ${BASH_REMATCH[3]:-} || ( ${BASH_REMATCH[3]} -ge 1 && ${BASH_REMATCH[3]} -le 16 ) ]] || { echo "targets.sh: bad mode '$m' (batch 1-16)" >&2; exit 2; }
done
[[ " $MODES " == *" 0:1 "* ]] || { echo "targets.sh: --modes must include 0:1" >&2; exit 2; }

OUT=$(mktemp -d "${TMPDIR:-/tmp}/cowbench-targets.XXXXXX")
if [[ $NATIVE -eq 1 ]]; then
	[[ -w /proc/sys/vm/cow_precopy ]] || { echo "targets.sh: --native needs root and a kernel with /proc/sys/vm/cow_precopy" >&2; exit 2; }
	[[ $FORK_BOOTS -eq 0 ]] || { echo "targets.sh: --fork-boots needs guests; leave it out with --native" >&2; exit 2; }
	mkdir -p "$OUT/bin"
	gcc -O2 -pthread -Wall -o "$OUT/bin/cowfaults" "$KDIR/tests/cowfaults.c" || exit 1
	KERNEL="native $(uname -r)"
else
	[[ -n $KERNEL ]] || KERNEL=$("$KDIR/build.sh" | tail -1) || exit 1
fi

WORKLOADS=("seq 16" "seq 64" "stride 16" "hotset 16" "burst 16" "random 16" "single 16")
{
	echo "set -e"
	read -r -a modes <<< "$MODES"
	for rep in $(seq 0 $(( REPS - 1 ))); do
		for w in "${WORKLOADS[@]}"; do
			read -r pat mb <<< "$w"
			n=1 extra=""
			[[ $pat == single ]] && n=7
			[[ $pat == burst ]] && extra="--stride 64"
			for i in "${!modes[@]}"; do
				m=${modes[$(( (i + rep) % ${#modes[@]} ))]}
				IFS=: read -r pm pd pa <<< "$m"
				batch=${pa#b}
				batch=${batch:-16}
				# A reset before the run makes precopy_fault_pages_max this run's worst fault.
				echo "echo $batch > /proc/sys/vm/cow_precopy_batch && echo 0 > /proc/cow_stats"
				echo "cowfaults --pattern $pat --size-mb $mb --reps $n --lat --precopy $pm --depth $pd $extra > /tmp/cf.out"
				echo "pmax=\$(sed -n 's/^precopy_fault_pages_max: *//p' /proc/cow_stats)"
				echo "sed \"s/^cowfaults /cowfaults rep_outer=$rep batch=$batch pages_max=\${pmax:-0} /\" /tmp/cf.out | grep '^cowfaults '"
			done
		done
	done
} > "$OUT/matrix.sh"

echo "== matrix: $REPS repetitions, modes $MODES, kernel $KERNEL"
if [[ $REPS -eq 0 ]]; then
	: > "$OUT/matrix.out"
	rc=0
elif [[ $NATIVE -eq 1 ]]; then
	old_mode=$(cat /proc/sys/vm/cow_precopy) old_depth=$(cat /proc/sys/vm/cow_precopy_depth)
	old_batch=$(cat /proc/sys/vm/cow_precopy_batch)
	# Put the sysctls back however the run ends.
	trap 'echo "$old_depth" > /proc/sys/vm/cow_precopy_depth; echo "$old_mode" > /proc/sys/vm/cow_precopy
	      echo "$old_batch" > /proc/sys/vm/cow_precopy_batch' EXIT
	trap 'exit 130' INT TERM
	PATH="$OUT/bin:$PATH" sh "$OUT/matrix.sh" > "$OUT/matrix.out" 2>&1
	rc=$?
else
	"$KDIR/vm-run.sh" --kernel "$KERNEL" --cowbench none --quiet-boot --smp "$SMP" --mem 1G \
		--add "$OUT/matrix.sh" --timeout 5400 -- sh /bin/matrix.sh > "$OUT/matrix.out" 2>&1
	rc=$?
fi
grep -v '^cowfaults ' "$OUT/matrix.out" | tail -5
[[ $rc -eq 0 ]] || { echo "targets.sh: guest run failed ($rc); raw output in $OUT/matrix.out" >&2; exit 1; }

if [[ $FORK_BOOTS -gt 0 ]]; then
	STOCK=$("$KDIR/build.sh" --stock | tail -1) || exit 1
	for b in $(seq 1 "$FORK_BOOTS"); do
		for k in stock patched; do
			img=$KERNEL
			[[ $k == stock ]] && img=$STOCK
			echo "== fork boot $b: $k"
			"$KDIR/vm-run.sh" --kernel "$img" --cowbench none --quiet-boot --smp "$SMP" --mem 2G \
				--timeout 1800 -- sh -c "cowfaults --pattern fork --size-mb $FORK_MB --reps 15 --precopy 0" \
				2>/dev/null | grep '^cowfaults ' | sed "s/^cowfaults /cowfaults kernel=$k boot=$b /" >> "$OUT/fork.out"
		done
	done
fi

# The table and the verdicts: analysis/targets/targets-report.py (its intervals from cowbench estimate).
fork_out=()
[[ -e $OUT/fork.out ]] && fork_out=("$OUT/fork.out")
python3 "$HERE/targets-report.py" "$OUT/matrix.out" "${fork_out[@]}" || { rc=$?; echo "raw output: $OUT"; exit "$rc"; }
echo "raw output: $OUT"

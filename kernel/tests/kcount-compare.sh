#!/usr/bin/env bash
# Where two kernels' instructions differ, function by function: boots each
# image under QEMU -icount with the TCG plugin lib/qemu-kcount.c (vm-run.sh
# --kcount), runs `cowcost --mark` (sync() right before and after each
# measured loop; the plugin dumps its counts whenever the kernel enters
# ksys_sync), takes the kernel's instructions inside the last repetition's
# loop, maps them to functions with each image's System.map and prints, per
# written page, each function's instructions on A and on B and B - A,
# largest differences first.  Counts are exact; a difference that is the same
# in every repetition is the code's, one that is not is the allocator's state
# (compare two repetitions with --window).
#
#   kernel/tests/kcount-compare.sh [--op OP] [--pages N] [--reps N] [--mode MODE]
#       [--window K] [--top N] [--out DIR] A_BZIMAGE B_BZIMAGE
#
#   --op OP      a cowcost operation with a loop of writes or a populate:
#                cow-seq, cow-rand (default), reuse, anon-touch, file-write,
#                cow-populate, anon-populate
#   --pages N    pages per loop (default 4096)
#   --reps N     repetitions (default 3); the window is the last one's loop
#   --window K   the K-th loop instead (1 = the first)
#   --mode MODE  on B only: off (default), adaptive, fixed16, reuse16
#   --top N      functions shown (default 25)
#   --out DIR    keep the dumps and consoles
#
# Each image's System.map must lie beside it (kernel/build.sh's cache does so).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KDIR=$(cd "$HERE/.." && pwd)
OP=cow-rand
PAGES=4096
REPS=3
WINDOW=""
MODE=off
TOP=25
OUT=""
die() { echo "kcount-compare: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
	case "$1" in
	--op) OP=${2:-}; shift ;;
	--pages) PAGES=${2:-}; shift ;;
	--reps) REPS=${2:-}; shift ;;
	--window) WINDOW=${2:-}; shift ;;
	--mode) MODE=${2:-}; shift ;;
	--top) TOP=${2:-}; shift ;;
	--out) OUT=${2:-}; shift ;;
	-h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option '$1'" ;;
	*) break ;;
	esac
	shift
done
[[ $# -eq 2 ]] || die "give A_BZIMAGE and B_BZIMAGE"
case $OP in cow-seq|cow-rand|reuse|anon-touch|file-write|cow-populate|anon-populate) ;;
	*) die "--op must name a loop of writes or a populate (see --help)" ;; esac
[[ $PAGES =~ ^[1-9][0-9]{0,6}$ ]] || die "--pages must be 1..9999999"
[[ $REPS =~ ^[1-9][0-9]?$ ]] || die "--reps must be 1..99"
[[ -z $WINDOW || ( $WINDOW =~ ^[1-9][0-9]?$ && $WINDOW -le $REPS ) ]] || die "--window must be 1..--reps"
[[ $TOP =~ ^[1-9][0-9]{0,3}$ ]] || die "--top must be 1..9999"
case $MODE in
off) SETTINGS="" ;;
adaptive) SETTINGS="echo 2 > /proc/sys/vm/cow_precopy;" ;;
fixed16) SETTINGS="echo 16 > /proc/sys/vm/cow_precopy_depth; echo 1 > /proc/sys/vm/cow_precopy;" ;;
reuse16) SETTINGS="echo 16 > /proc/sys/vm/cow_reuse_around;" ;;
*) die "--mode must be off, adaptive, fixed16 or reuse16" ;;
esac
WORK=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kcount-compare.XXXXXX")}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
run() { # NAME IMAGE GUEST-SETTINGS
	local map mark
	map="$(dirname "$2")/System.map"
	[[ -s $2 && -s $map ]] || die "no image or no System.map beside it: $2"
	mark=$(awk '$3 == "ksys_sync" { print $1 }' "$map")
	[[ -n $mark ]] || die "no ksys_sync in $map"
	rm -f "$WORK/$1".[0-9]*
	"$KDIR/vm-run.sh" --kernel "$2" --icount --cowbench none --quiet-boot \
		--kcount "$WORK/$1,$mark" --log "$WORK/$1.console" -- \
		sh -c "[ -w /proc/sys/vm/cow_stats_timing ] && echo 0 > /proc/sys/vm/cow_stats_timing; $3
			cowcost --mark --reps $REPS --pages $PAGES --ops $OP" > "$WORK/$1.out"
}
run a "$1" ""
run b "$2" "$SETTINGS"
python3 - "$WORK" "$1" "$2" "$PAGES" "$REPS" "${WINDOW:-$REPS}" "$TOP" "$OP" "$MODE" <<'PY'
import bisect, collections, os, sys

work, img_a, img_b, pages, reps, window, top, op, mode = sys.argv[1:]
pages, reps, window, top = int(pages), int(reps), int(window), int(top)


def symbols(image):
    addrs, names = [], []
    for line in open(os.path.join(os.path.dirname(image), "System.map")):
        f = line.split()
        if len(f) >= 3 and f[1] in "tTwW":
            addrs.append(int(f[0], 16))
            names.append(f[2])
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def dump(path):
    counts = {}
    for line in open(path):
        key, n = line.split()
        counts[key if key == "user" else int(key, 16)] = int(n)
    return counts


def window_counts(name, image):
    n = len([f for f in os.listdir(work) if f.startswith(name + ".") and f[len(name) + 1:].isdigit()])
    # two marks per loop: cowcost's warm-up loop (0, 1), then repetition k's (2k, 2k + 1);
    # the guest's own sync() calls come after the command
    if n < 2 * reps + 2:
        sys.exit(f"kcount-compare: {name}: {n} marks, want {2 * reps + 2} (did cowcost run?)")
    first = 2 * window
    a, b = dump(f"{work}/{name}.{first}"), dump(f"{work}/{name}.{first + 1}")
    addrs, names = symbols(image)
    per_fn = collections.Counter()
    for va, v in b.items():
        if va == "user":
            continue
        d = v - a.get(va, 0)
        if d:
            i = bisect.bisect_right(addrs, va) - 1
            per_fn[names[i] if i >= 0 else hex(va)] += d
    return per_fn, b["user"] - a["user"]


fa, ua = window_counts("a", img_a)
fb, ub = window_counts("b", img_b)
ta, tb = sum(fa.values()) / pages, sum(fb.values()) / pages
print(f"# {op}, {pages} pages, loop {window} of {reps}; B in mode {mode}; instructions per page")
print(f"# kernel: A {ta:,.2f}  B {tb:,.2f}  B - A {tb - ta:+,.2f};  user: A {ua / pages:,.2f}  B {ub / pages:,.2f}")
print(f"{'function':44s} {'A':>11s} {'B':>11s} {'B - A':>9s}")
rows = sorted(set(fa) | set(fb), key=lambda k: -abs(fb[k] - fa[k]))
for k in rows[:top]:
    d = (fb[k] - fa[k]) / pages
    if abs(d) < 0.005:
        break
    print(f"{k[:44]:44s} {fa[k] / pages:11.2f} {fb[k] / pages:11.2f} {d:+9.2f}")
PY
echo "dumps and consoles: $WORK" >&2

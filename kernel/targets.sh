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
#   kernel/targets.sh [--reps N] [--smp N] [--modes "0:1 2:1 1:16"]
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
#   --kernel F      patched bzImage to use instead of kernel/build.sh
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
	gcc -O2 -pthread -Wall -o "$OUT/bin/cowfaults" "$HERE/tests/cowfaults.c" || exit 1
	KERNEL="native $(uname -r)"
else
	[[ -n $KERNEL ]] || KERNEL=$("$HERE/build.sh" | tail -1) || exit 1
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
	"$HERE/vm-run.sh" --kernel "$KERNEL" --cowbench none --quiet-boot --smp "$SMP" --mem 1G \
		--add "$OUT/matrix.sh" --timeout 5400 -- sh /bin/matrix.sh > "$OUT/matrix.out" 2>&1
	rc=$?
fi
grep -v '^cowfaults ' "$OUT/matrix.out" | tail -5
[[ $rc -eq 0 ]] || { echo "targets.sh: guest run failed ($rc); raw output in $OUT/matrix.out" >&2; exit 1; }

if [[ $FORK_BOOTS -gt 0 ]]; then
	STOCK=$("$HERE/build.sh" --stock | tail -1) || exit 1
	for b in $(seq 1 "$FORK_BOOTS"); do
		for k in stock patched; do
			img=$KERNEL
			[[ $k == stock ]] && img=$STOCK
			echo "== fork boot $b: $k"
			"$HERE/vm-run.sh" --kernel "$img" --cowbench none --quiet-boot --smp "$SMP" --mem 2G \
				--timeout 1800 -- sh -c "cowfaults --pattern fork --size-mb $FORK_MB --reps 15 --precopy 0" \
				2>/dev/null | grep '^cowfaults ' | sed "s/^cowfaults /cowfaults kernel=$k boot=$b /" >> "$OUT/fork.out"
		done
	done
fi

python3 - "$OUT/matrix.out" "$OUT/fork.out" "$HERE/../analysis" <<'EOF'
import re
import statistics
import sys

sys.path.insert(0, sys.argv[3])
import cbstats  # noqa: E402  the intervals come from cowbench estimate (docs/reference.md "Statistics")

NAN3 = (float("nan"), float("nan"), float("nan"))


def ratios(sets):
    """{name: (old values, new values)} -> {name: (ratio, lo, hi)}: cowbench's Hodges-Lehmann ratio new/old."""
    est = cbstats.estimate({(k, g): v for k, (old, new) in sets.items() for g, v in (("old", old), ("new", new))},
                           baseline="old")
    out = {}
    for k in sets:
        o = est.get((k, "new"), {})
        r = o.get("ratio")
        lo, hi = o.get("ratio_ci_lo"), o.get("ratio_ci_hi")
        out[k] = NAN3 if r is None else (r, float("nan") if lo is None else lo, float("nan") if hi is None else hi)
    return out


rows = {}
for line in open(sys.argv[1], errors="replace"):
    if not line.startswith("cowfaults "):
        continue
    kv = dict(re.findall(r"(\w+)=([^\s]+)", line))
    if kv["pattern"] == "single":
        kv["pattern"] = "single"
    size = int(kv["pages"]) * 4 // 1024
    name = {"stride": "stride-2", "hotset": "hotset 10%", "burst": "burst 64"}.get(kv["pattern"], kv["pattern"])
    w = f"{name} {size}M"
    mode = kv["precopy"] + ":" + kv["depth"]
    if kv["precopy"] != "0":
        mode += ":b" + kv["batch"]
    rows.setdefault((w, mode), {}).setdefault(int(kv["rep_outer"]), []).append(kv)


def agg(runs, key, f=statistics.median):
    return f([float(r[key]) for r in runs])


def label(mode):
    m, d, *b = mode.split(":")
    name = {"0": "off", "1": f"depth {d}", "2": "adaptive"}[m]
    return name + (f" B={b[0][1:]}" if b else "")


def verdict(ok):
    return "met" if ok else "NOT met"


if rows:
    workloads = []
    for (w, _m) in rows:
        if w not in workloads:
            workloads.append(w)
    modes = sorted({m for (_w, m) in rows}, key=lambda m: (m != "0:1", m))
    print()
    print("Per cell: mean over repetitions of faults / pre-copied pages / wasted pages / new pages; pmax: most")
    print("pages one fault copied (precopy_fault_pages_max);")
    print("d.runtime and d.p99: Hodges-Lehmann ratio of the per-repetition values to cow_precopy=0's in the")
    print("same boot, with its exact CI (cowbench estimate); p99 = 99th percentile of the per-write times.")
    print()
    hdr = (f"{'workload':<16}{'mode':<17}{'reps':>5}{'faults':>9}{'d.faults':>9}{'precopied':>10}{'wasted':>8}"
           f"{'growth':>8}{'pmax':>6}{'runtime ms':>11}{'d.runtime [CI]':>27}{'p99 us':>9}{'d.p99 [CI]':>27}")
    print(hdr)
    print("-" * len(hdr))
    summary = {}
    sets = {}
    for w in workloads:
        base = rows.get((w, "0:1"))
        for mode in modes:
            cell = rows.get((w, mode))
            if base and cell:
                reps = sorted(set(cell) & set(base))
                for key in ("ns", "lat_p99"):
                    sets[(w, mode, key)] = ([agg(base[k], key) for k in reps], [agg(cell[k], key) for k in reps])
    est = ratios({"|".join(k): v for k, v in sets.items()}) if sets else {}
    for w in workloads:
        base = rows.get((w, "0:1"))
        if not base:
            continue
        for mode in modes:
            cell = rows.get((w, mode))
            if not cell:
                continue
            reps = sorted(set(cell) & set(base))
            runs = [r for k in reps for r in cell[k]]
            bruns = [r for k in reps for r in base[k]]
            faults = agg(runs, "faults", statistics.mean)
            bfaults = agg(bruns, "faults", statistics.mean)
            pre = agg(runs, "precopy_success", statistics.mean)
            wasted = agg(runs, "wasted", statistics.mean)
            newp = agg(runs, "new_pages", statistics.mean)
            bnew = agg(bruns, "new_pages", statistics.mean)
            growth = newp / bnew if bnew else float("nan")
            g_rt, lo_rt, hi_rt = est.get("|".join((w, mode, "ns")), NAN3)
            g_p99, lo_p99, hi_p99 = est.get("|".join((w, mode, "lat_p99")), NAN3)
            df = 100 * (faults - bfaults) / bfaults if bfaults else 0.0
            fmt = lambda g, lo, hi: f"{100 * (g - 1):+6.1f}% [{100 * (lo - 1):+.1f}, {100 * (hi - 1):+.1f}]"
            print(f"{w:<16}{label(mode):<17}{len(reps):>5}{faults:>9.0f}{df:>8.1f}%{pre:>10.0f}{wasted:>8.0f}"
                  f"{growth:>8.3f}{max(int(r.get('pages_max', '0')) for r in runs):>6}{agg(runs, 'ns') / 1e6:>11.2f}{fmt(g_rt, lo_rt, hi_rt):>27}"
                  f"{agg(runs, 'lat_p99') / 1e3:>9.1f}{fmt(g_p99, lo_p99, hi_p99):>27}")
            summary[(w, mode)] = dict(df=df, rt=(g_rt, lo_rt, hi_rt), p99=(g_p99, lo_p99, hi_p99),
                                      wasted=wasted, written=agg(runs, "distinct", statistics.mean),
                                      growth=growth, reps=len(reps),
                                      pmax=max(int(r.get("pages_max", "0")) for r in runs),
                                      traps=agg(runs, "minflt", statistics.mean),
                                      btraps=agg(bruns, "minflt", statistics.mean))
        print()

    for target_mode in [m for m in modes if m.split(":")[0] == "2"]:
        cap = int(target_mode.split(":")[2][1:])
        print(f"Targets ({label(target_mode)}, cow_precopy=2, against cow_precopy=0 in the same boot; counts exact):")
        for w in ("seq 16M", "seq 64M"):
            s = summary.get((w, target_mode))
            if not s:
                continue
            dt = 100 * (s["traps"] - s["btraps"]) / s["btraps"] if s["btraps"] else 0.0
            print(f"  {w}: copy faults {s['df']:+.1f}%, traps (minflt) {s['traps']:.0f} = {dt:+.1f}% "
                  f"(target <= -90% for both: {verdict(s['df'] <= -90 and dt <= -90)}); "
                  f"in-boot runtime ratio x{s['rt'][0]:.2f} [{s['rt'][1]:.2f}, {s['rt'][2]:.2f}]")
        for w in ("burst 64 16M", "stride-2 16M", "hotset 10% 16M", "random 16M"):
            s = summary.get((w, target_mode))
            if not s:
                continue
            share = 100 * s["wasted"] / s["written"] if s["written"] else 0.0
            print(f"  {w}: wasted {s['wasted']:.0f} pages = {share:.2f}% of {s['written']:.0f} written "
                  f"(target <= 5%: {verdict(share <= 5)})")
        s = summary.get(("single 16M", target_mode))
        if s:
            print(f"  single 16M: in-boot runtime ratio x{s['rt'][0]:.3f} [{s['rt'][1]:.3f}, {s['rt'][2]:.3f}]")
        worst = max((s["pmax"] for (w, m), s in summary.items() if m == target_mode), default=0)
        print(f"  worst pages one fault copied (precopy_fault_pages_max, any workload): {worst} "
              f"(target <= B = {cap}: {verdict(worst <= cap)})")
        print()

try:
    fork = [dict(re.findall(r"(\w+)=([^\s]+)", l)) for l in open(sys.argv[2]) if l.startswith("cowfaults ")]
except OSError:
    fork = []
if fork:
    boots = {}
    for kv in fork:
        boots.setdefault((kv["kernel"], kv["boot"]), []).append(float(kv["ns"]))
    med = {k: statistics.median(v[1:] if len(v) > 2 else v) for k, v in boots.items()}
    both = [b for (k, b) in med if k == "stock" and ("patched", b) in med]
    pairs = [(med[("stock", b)], med[("patched", b)]) for b in both]
    g, lo, hi = ratios({"fork": ([p[0] for p in pairs], [p[1] for p in pairs])})["fork"] if pairs else NAN3
    mb = int(fork[0]["pages"]) * 4 // 1024
    print()
    print(f"fork() of {mb} MiB populated, patched (cow_precopy=0) over stock, {len(pairs)} alternating boots "
          f"each (median of 14 forks per boot, first dropped; Hodges-Lehmann ratio, exact CI):")
    print(f"  x{g:.4f} [{lo:.4f}, {hi:.4f}] -> {100 * (g - 1):+.2f}% (target within +-1%: "
          f"{verdict(lo >= 0.99 and hi <= 1.01)})")
    for (k, b), v in sorted(med.items(), key=lambda x: (int(x[0][1]), x[0][0])):
        print(f"    boot {b} {k:<8} {v / 1e6:8.2f} ms")
EOF
echo "raw output: $OUT"

#!/usr/bin/env python3
"""The pre-copy targets, judged from the cowfaults lines of one targets run (analysis/targets/targets.sh).

usage: targets-report.py MATRIX.OUT [FORK.OUT]

MATRIX.OUT: the guest's (or --native run's) output; its `cowfaults rep_outer=R batch=B pages_max=M ...`
lines are the matrix (every other line, the boot's messages, is skipped). FORK.OUT: the fork boots'
`cowfaults kernel=stock|patched boot=N ...` lines. Prints, per workload and pre-copy mode, the
counts (means over repetitions: exact) and the runtime and p99 change against cow_precopy=0 of the
same boot with its interval, then each adaptive mode's targets as met / not met, then fork()
neutrality. Every ratio and interval is cowbench estimate's (analysis/cbstats.py: Hodges-Lehmann
ratio with its exact CI); this script only takes each repetition's median (a rep of the single-page
workload runs 7 times) and the mean of exact counts. A damaged line is bad input: one line on
stderr, exit 2 (analysis/report_io.py).
"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbstats  # noqa: E402  the intervals come from cowbench estimate (docs/reference.md "Statistics")
from report_io import BadInput, run_main  # noqa: E402

NAN3 = (float("nan"), float("nan"), float("nan"))
PATTERNS = {"seq", "stride", "hotset", "burst", "random", "single", "fork"}
# Keys each matrix line must carry, as counts (>= 0); wasted may be negative (pages freed early).
MATRIX_COUNTS = ("rep_outer", "batch", "pages", "precopy", "depth", "faults", "minflt", "precopy_success", "ns",
                 "distinct", "new_pages", "lat_p99")
FORK_COUNTS = ("boot", "pages", "ns")


def read_lines(path, prefix):
    """The lines of path that start with prefix, as {key: value}; a regular file, bytes other than UTF-8 replaced
    (a guest's console is not ours to police outside our own lines)."""
    try:
        if not os.path.isfile(path):
            raise BadInput(f"{path}: not a regular file" if os.path.exists(path) else f"{path}: no such file")
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}") from None
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.startswith(prefix):
            out.append((n, dict(re.findall(r"(\w+)=([^\s]+)", line))))
    return out


def check(path, n, kv, counts, signed=()):
    """kv with every key of counts a whole number >= 0 and every key of signed a whole number."""
    for key in counts + signed:
        v = kv.get(key)
        if v is None:
            raise BadInput(f"{path}: line {n}: no {key}=")
        if not re.fullmatch(r"-?[0-9]{1,18}" if key in signed else r"[0-9]{1,18}", v):
            raise BadInput(f"{path}: line {n}: {key}={v[:40]!r} is not a{' whole number' if key in signed else ' count'}")
    if kv.get("pattern") not in PATTERNS:
        raise BadInput(f"{path}: line {n}: pattern={str(kv.get('pattern'))[:40]!r} is not a cowfaults pattern")
    return kv


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


def agg(runs, key, f=statistics.median):
    return f([float(r[key]) for r in runs])


def label(mode):
    m, d, *b = mode.split(":")
    name = {"0": "off", "1": f"depth {d}", "2": "adaptive"}[m]
    return name + (f" B={b[0][1:]}" if b else "")


def verdict(ok):
    return "met" if ok else "NOT met"


def matrix_rows(path):
    rows = {}
    for n, kv in read_lines(path, "cowfaults "):
        check(path, n, kv, MATRIX_COUNTS + (("pages_max",) if "pages_max" in kv else ()), signed=("wasted",))
        if kv["pattern"] == "fork" or kv["precopy"] not in ("0", "1", "2"):
            raise BadInput(f"{path}: line {n}: not a matrix line (pattern {kv['pattern']}, precopy {kv['precopy']})")
        size = int(kv["pages"]) * 4 // 1024
        name = {"stride": "stride-2", "hotset": "hotset 10%", "burst": "burst 64"}.get(kv["pattern"], kv["pattern"])
        w = f"{name} {size}M"
        mode = kv["precopy"] + ":" + kv["depth"]
        if kv["precopy"] != "0":
            mode += ":b" + kv["batch"]
        rows.setdefault((w, mode), {}).setdefault(int(kv["rep_outer"]), []).append(kv)
    return rows


def print_matrix(rows):
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
            if not runs:
                continue  # no repetition in common with the baseline: nothing to compare
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
            pmax = max(int(r.get("pages_max", "0")) for r in runs)

            def fmt(g, lo, hi):
                return f"{100 * (g - 1):+6.1f}% [{100 * (lo - 1):+.1f}, {100 * (hi - 1):+.1f}]"
            print(f"{w:<16}{label(mode):<17}{len(reps):>5}{faults:>9.0f}{df:>8.1f}%{pre:>10.0f}{wasted:>8.0f}"
                  f"{growth:>8.3f}{pmax:>6}{agg(runs, 'ns') / 1e6:>11.2f}{fmt(g_rt, lo_rt, hi_rt):>27}"
                  f"{agg(runs, 'lat_p99') / 1e3:>9.1f}{fmt(g_p99, lo_p99, hi_p99):>27}")
            summary[(w, mode)] = dict(df=df, rt=(g_rt, lo_rt, hi_rt), p99=(g_p99, lo_p99, hi_p99),
                                      wasted=wasted, written=agg(runs, "distinct", statistics.mean),
                                      growth=growth, reps=len(reps), pmax=pmax,
                                      traps=agg(runs, "minflt", statistics.mean),
                                      btraps=agg(bruns, "minflt", statistics.mean))
        print()
    return modes, summary


def print_targets(modes, summary):
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


def fork_rows(path):
    fork = []
    for n, kv in read_lines(path, "cowfaults "):
        check(path, n, kv, FORK_COUNTS)
        if kv.get("kernel") not in ("stock", "patched"):
            raise BadInput(f"{path}: line {n}: kernel={str(kv.get('kernel'))[:40]!r} is not stock or patched")
        fork.append(kv)
    return fork


def print_fork(fork):
    boots = {}
    for kv in fork:
        boots.setdefault((kv["kernel"], kv["boot"]), []).append(float(kv["ns"]))
    # Each boot's median fork, its first fork (a cold page cache) left out.
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


def main():
    args = sys.argv[1:]
    if not 1 <= len(args) <= 2:
        raise BadInput("usage: targets-report.py MATRIX.OUT [FORK.OUT]")
    # Both files read and checked whole before anything prints: bad input leaves no partial table.
    rows = matrix_rows(args[0])
    fork = fork_rows(args[1]) if len(args) == 2 else []
    if rows:
        print_targets(*print_matrix(rows))
    if fork:
        print_fork(fork)


if __name__ == "__main__":
    run_main("targets-report", main)

#!/usr/bin/env python3
"""The report's first section, "The study, reproduced", from the rows of analysis/study.ini.

usage: analysis/study-report.py COWBENCH STUDY.csv OUTDIR [NATIVE-UNITS.csv]

Writes OUTDIR/study.md (the section), OUTDIR/study-data/*.dat and, with gnuplot,
OUTDIR/study_modes.{png,svg} (runtime and COW faults by mode, 95 % CI whiskers, stock vs
patched) and OUTDIR/study_latency.{png,svg} (per-write latency p50 / p90 / p99 / p99.9 by mode).

With the study's [units] cells, a second section projects every cell to native time
(analysis/projection_report.py, `cowbench project`; NATIVE-UNITS.csv: the host's unit costs) into
OUTDIR/projection.csv, OUTDIR/unit-costs.csv and OUTDIR/projection.md, which the main job's report
puts right after the Redis section (analysis/compose-report.py).

Every change against pre-copy 0 is `cowbench summarize --baseline precopy=0`: the Hodges-Lehmann
ratio with its exact CI (docs/reference.md "Statistics"), from rows of one boot only (the patched kernel's modes run interleaved
rep by rep in that boot). The stock kernel ran in a boot of its own: its times are shown for
scale, never divided by the patched kernel's. Nothing here is code made from data: gnuplot gets
fixed scripts and reads the data files by fixed relative names.
"""
import csv
import os
import stat
import subprocess
import sys

import cbstats
from report_io import md as md_text, run_main, write_output

MODES = [  # (label, (precopy, precopy-depth)): the patched kernel's modes; stock is separate
    ("off (0)", ("0", None)),
    ("depth 1", ("1", "1")),
    ("depth 15", ("1", "15")),  # v3: at most vm.cow_precopy_batch (16) - 1 pages ahead
    ("adaptive (2)", ("2", None)),
]
WORKLOADS = ["seq", "random", "single"]  # the study's order; sizes are those of the rows
# The seed study (000_cddd1554ac395688.txt, Linux 6.8 bare metal, pre-copy depth 1 vs off).
SEED = {
    ("seq", "16M"): "faults −49.7 %, runtime −17.0 %, hit 99 %",
    ("seq", "64M"): "faults −49.7 %, runtime −17.8 %, hit 99 %",
    ("random", "16M"): "faults −36.3 %, runtime −14.9 %, hit 57 %",
    ("random", "64M"): "faults −36.3 %, runtime −14.6 %, hit 57 %",
    ("single", "16M"): "runtime +17 % (6,782 → 7,935 ns)",
    ("single", "64M"): "runtime +17 % (6,782 → 7,935 ns)",
}
METRICS = "elapsed_ns,wpcopy_count,faults,lat_p50_ns,lat_p90_ns,lat_p99_ns,lat_p999_ns"


def summarize(cowbench, path):
    """cowbench summarize's CSV, keyed by (cell, metric)."""
    out = subprocess.run([cowbench, "summarize", "--quiet", "--format=csv", "--metric=" + METRICS,
                          "--baseline=precopy=0", path], check=True, capture_output=True, text=True).stdout
    return PrefixDict({(r["cell"], r["metric"]): r for r in csv.DictReader(out.splitlines())})


class PrefixDict(dict):
    """summarize names a cell by its key plus the identity pairs that differ between cells
    (e.g. precopy_depth, empty on the stock kernel): look a row's cell up by that prefix."""

    def get(self, key, default=None):
        if key in self:
            return self[key]
        cell, metric = key
        if cell is None:
            return default
        for (c, m), v in self.items():
            if m == metric and c.startswith(cell + " "):
                return v
        return default


def pairs(key):
    return dict(p.split("=", 1) for p in key.split())


def finder(cells):
    """cell(kernel, workload, size, mode) -> the cell key with those settings (other axes free), or None."""
    parsed = [(c, pairs(c)) for c in cells]

    def cell(kernel, workload, size, mode=(None, None)):
        for c, d in parsed:
            if (d.get("kernel"), d.get("workload"), d.get("size"), d.get("precopy"), d.get("precopy-depth")) == \
                    (kernel, workload, size) + tuple(mode):
                return c
        return None
    return cell


def num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def mean_ci(values):
    """The engine's centre of values and its interval (cowbench estimate); lo = hi = centre for one value."""
    c = cbstats.centre(values)
    if c is None:
        return None
    return (c[0], c[0], c[0]) if c[1] is None else c


def change(s):
    """'−49.9 % [−50.0, −49.8]' from a summarize line's ratio (its numbers, not recomputed), or '—'."""
    if not s or not s.get("ratio"):
        return "—"
    r = 100 * (float(s["ratio"]) - 1)
    if not s.get("ratio_ci_lo") or not s.get("ratio_ci_hi"):
        return f"{r:+.1f} % [no interval]"  # summarize gave none (one rep a side): say so, print no bounds
    lo, hi = (100 * (float(s[k]) - 1) for k in ("ratio_ci_lo", "ratio_ci_hi"))
    if abs(hi - lo) < 0.05:
        return f"{r:+.1f} %"
    return f"{r:+.1f} % [{lo:+.1f}, {hi:+.1f}]"


def fmt_ns(v):
    if v is None:
        return "—"
    return f"{v / 1e6:.2f} ms" if v >= 1e6 else f"{v / 1e3:.1f} µs" if v >= 1e4 else f"{v:,.0f} ns"


def hit_rate(rows):
    """Pre-copied pages later written / pre-copied pages, per rep: (touched − wpcopy_count) / precopy_success.

    Every page the writer wrote either faulted (its own COW copies, wpcopy_count) or had been
    copied ahead, so touched − wpcopy_count counts the pre-copies it used; precopy_success counts
    every page pre-copied during the rep (system-wide, cowbench's own few included), so the rate
    is a lower bound. Reps where the counts disagree (more used than copied) are left out and counted.
    """
    rates, wasted, bad = [], [], 0
    for r in rows:
        t, f, s = num(r["touched"]), num(r["wpcopy_count"]), num(r["precopy_success"])
        if t is None or f is None or not s:
            continue
        used = t - f
        if used < 0 or used > s:
            bad += 1
            continue
        rates.append(used / s)
        wasted.append(s - used)
    return mean_ci(rates), mean_ci(wasted), bad


REPLAY_MODES = [("off (0)", "0"), ("fixed (1)", "1"), ("adaptive (2)", "2")]


def trace_header(path):
    """The trace's '# command:' line, or '' (the file is read as text, never run; a FIFO is not waited on)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return ""
        with open(path, errors="replace") as f:
            for line in f:
                if not line.startswith("#"):
                    break
                if line.startswith("# command:"):
                    return line[len("# command:"):].strip()
    except OSError:
        pass
    return ""


def replay_section(by_cell, summ):
    """Issue 25: one table per replayed program (workload=replay cells, one per --trace), per kernel and mode."""
    traces = {}
    for cell in by_cell:
        p = pairs(cell)
        if p.get("workload") == "replay" and p.get("trace"):
            traces.setdefault((p["trace"], p.get("writer", "parent")), []).append(cell)
    if not traces:
        return []
    md = ["### Real programs replayed: would pre-copy help them, and what would it waste?", "",
          "The bundled traces of `analysis/traces/record-traces.sh` (`cowbench record` of the real program on the host: "
          "every first write of one side after its fork, in order) replayed by `--workload=replay` in each kernel "
          "and mode: the same pages in the same order, from the side that wrote them. Writes: pages the replay "
          "wrote (`touched`). Traps: the writer's write faults in its loop (`faults`), Δ against pre-copy off "
          "in the same boot. "
          "Pre-copied: pages the kernel copied ahead during the rep (`precopy_success`, kernel-wide). Wasted: "
          "pages copied ahead that the writer never wrote (`precopy_wasted`, pagemap). Memory: growth of the "
          "writer's private memory over the writes (`anon_growth_kb`, smaps). Runtime: the write loop's wall "
          "time (emulated under TCG: compare Δ, not ms). Means over reps; counts barely vary.", ""]
    for (trace, writer), cells in sorted(traces.items()):
        name = os.path.basename(trace).rsplit(".", 1)[0]
        cmd = trace_header(trace)
        # the trace's path and its command are data: escaped text, never a code span they could end
        md.append(f"**{md_text(name)}** ({md_text(trace)}, the {md_text(writer)}'s writes"
                  + (f"; recorded: {md_text(cmd)}" if cmd else "") + ")")
        md.append("")
        md.append("| kernel, pre-copy | writes | traps | Δ traps | pre-copied | wasted | memory "
                  "| runtime | Δ runtime | reps |")
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        order = [("stock", None, "stock")] + [("patched", m, f"patched, {label}") for label, m in REPLAY_MODES]
        for kernel, mode, label in order:
            cell = next((c for c in cells if pairs(c).get("kernel") == kernel and pairs(c).get("precopy") == mode),
                        None)
            if not cell:
                continue
            rows = by_cell[cell]

            def avg(col, rows=rows):
                v = [num(r.get(col)) for r in rows if num(r.get(col)) is not None]
                return sum(v) / len(v) if v else None

            def cnt(v, unit=""):
                return "—" if v is None else f"{v:,.0f}{unit}"
            s = lambda m: summ.get((cell, m))  # noqa: E731
            mem = avg("anon_growth_kb")
            pre = avg("precopy_success") if kernel == "patched" else None
            wasted = avg("precopy_wasted")
            md.append(f"| {label} | {cnt(avg('touched'))} | {cnt(avg('faults'))} | "
                      f"{change(s('faults')) if kernel == 'patched' and mode != '0' else ''} | "
                      f"{cnt(pre)} | {cnt(wasted)} | "
                      f"{'—' if mem is None else f'{mem / 1024:,.1f} MiB'} | {fmt_ns(avg('elapsed_ns'))} | "
                      f"{change(s('elapsed_ns')) if kernel == 'patched' and mode != '0' else ''} | {len(rows)} |")
        md.append("")
    return md


def native_projection(cowbench, path, outdir):
    """The native projection section (issue 30): its own module, so other sections stay apart."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import projection_report
    native = sys.argv[4] if len(sys.argv) > 4 else None
    return projection_report.projection_section(cowbench, path, outdir, native)


def main():
    cowbench, path, outdir = sys.argv[1:4]
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f)]
    ok = [r for r in rows if r["status"] == "ok" and r.get("rep_kind", "timed") != "evidence"]
    failed = len(rows) - len(ok)
    summ = summarize(cowbench, path)
    by_cell = {}
    for r in ok:
        by_cell.setdefault(r["cell"], []).append(r)
    cell_of = finder(by_cell)
    release = {pairs(r["cell"]).get("kernel"): r["kernel"] for r in ok}
    boots = {}
    for r in ok:
        boots.setdefault(pairs(r["cell"]).get("kernel"), set()).add(r["boot"])

    os.makedirs(os.path.join(outdir, "study-data"), exist_ok=True)
    md = ["## The study, reproduced", ""]
    md.append("The seed study's pre-copy experiment (Linux 6.8 on bare metal) rerun by the main job on this "
              "project's Linux 6.12 kernel under QEMU "
              f"(stock: {md_text(release.get('stock', '?'))}, patched: {md_text(release.get('patched', '?'))}), "
              "from `analysis/study.ini`. Each change is against pre-copy 0 on the patched kernel in the "
              "same boot (`cowbench summarize --baseline precopy=0`: Hodges-Lehmann ratio with its exact "
              "CI, docs/reference.md \"Statistics\"; an interval is left out where every rep gave the same number). Under TCG times are "
              "emulated: compare changes, not nanoseconds, with the seed. COW faults are the writer's "
              "own COW copies (taskstats `wpcopy_count`, exact, the same on both kernels). Hit rate: "
              "pre-copied pages later written / pre-copied pages ((touched − wpcopy_count) / "
              "precopy_success, centre [CI] over reps, `cowbench estimate`; `precopy_success` is the kernel-wide "
              "count, so this is a lower bound); unused: pages copied ahead but never written by the "
              "writer, per rep. Runtime: the write loop's wall time (`elapsed_ns`); p50 / p99 per "
              "write: percentiles of the first-write latencies of one rep, averaged over reps.")
    md.append("")
    n_reps = {c: len(v) for c, v in by_cell.items()}
    md.append(f"{len(ok)} rows ok, {failed} failed; reps per cell {min(n_reps.values()) if n_reps else 0}"
              f"–{max(n_reps.values()) if n_reps else 0}; boots: "
              + ", ".join(f"{k} {len(v)}" for k, v in sorted(boots.items())) + ".")
    md.append("")
    md.append("| workload | kernel, pre-copy | COW faults | Δ faults | runtime | Δ runtime | p50 / write | Δ p50 "
              "| p99 / write | Δ p99 | hit rate | unused pages | seed (6.8, depth 1 vs off) |")
    md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    plot_modes, plot_lat = [], []
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    sizes = sorted({pairs(c).get("size", "") for c in by_cell} - {""},
                   key=lambda v: int(v[:-1]) * units.get(v[-1], 1) if v[:-1].isdigit() else 0)
    for w in WORKLOADS:
        for size in sizes:
            msize = md_text(size)  # from the cell keys: data
            stock = cell_of("stock", w, size)
            if stock:
                s = lambda m: summ.get((stock, m))  # noqa: E731
                mf = s("wpcopy_count")
                md.append(f"| {w} {msize} | stock | {float(mf['centre']):,.0f} | | "
                          f"{fmt_ns(num(s('elapsed_ns')['centre']))} | | {fmt_ns(num(s('lat_p50_ns')['centre']))} | | "
                          f"{fmt_ns(num(s('lat_p99_ns')['centre']))} | | | | |" if mf else f"| {w} {msize} | stock | |")
            for label, mode in MODES:
                cell = cell_of("patched", w, size, mode)
                if not cell:
                    continue
                s = lambda m: summ.get((cell, m))  # noqa: E731
                hr, wasted, bad = hit_rate(by_cell[cell])
                hit = "—" if mode[0] == "0" or not hr else f"{100 * hr[0]:.0f} % [{100 * hr[1]:.0f}, {100 * hr[2]:.0f}]"
                if bad:
                    hit += f" ({bad} reps inconsistent)"
                unused = "—" if mode[0] == "0" or not wasted else f"{wasted[0]:,.0f}"
                cf = s("wpcopy_count")
                md.append(f"| {w} {msize} | patched, {label} | {float(cf['centre']):,.0f} | {change(cf)} | "
                          f"{fmt_ns(num(s('elapsed_ns')['centre']))} | {change(s('elapsed_ns'))} | "
                          f"{fmt_ns(num(s('lat_p50_ns')['centre']))} | {change(s('lat_p50_ns'))} | "
                          f"{fmt_ns(num(s('lat_p99_ns')['centre']))} | {change(s('lat_p99_ns'))} | {hit} | {unused} | "
                          f"{SEED.get((w, size), SEED.get((w, '16M'))) if mode == ('1', '1') else ''} |")
            # Plot rows: one line per workload/size, per mode mean and CI of runtime and faults.
            line = [f"{w}-{size}"]
            for cell, metric in [(stock, "elapsed_ns"), (stock, "wpcopy_count")] + \
                    [(cell_of("patched", w, size, mode), m) for _, mode in MODES
                     for m in ("elapsed_ns", "wpcopy_count")]:
                x = summ.get((cell, metric))
                scale = 1e6 if metric == "elapsed_ns" else 1
                line += [f"{float(x[k]) / scale:.6g}" if x and x[k] else "nan" for k in ("centre", "ci_lo", "ci_hi")]
            plot_modes.append("\t".join(line))
            for label, mode in [("stock", None)] + MODES:
                cell = stock if mode is None else cell_of("patched", w, size, mode)
                vals = [summ.get((cell, m)) for m in ("lat_p50_ns", "lat_p90_ns", "lat_p99_ns", "lat_p999_ns")]
                plot_lat.append("\t".join([f"{w}-{size} {label}"] +
                                          [f"{float(v['centre']) / 1e3:.6g}" if v else "nan" for v in vals]))
    md.append("")
    copy = [num(r["cow_copy_ns"]) / num(r["cow_faults"]) for r in ok
            if pairs(r["cell"]).get("precopy") == "0" and num(r["cow_copy_ns"]) and num(r["cow_faults"])]
    single = cell_of("patched", "single", "16M", ("0", None))
    fault = [num(r["lat_p50_ns"]) for r in ok if r["cell"] == single and num(r["lat_p50_ns"])]
    if copy and fault:
        c, f = mean_ci(copy), mean_ci(fault)
        md.append(f"The copy inside a fault: the kernel's page copy (`cow_copy_ns / cow_faults`, pre-copy 0) takes "
                  f"{c[0]:,.0f} ns [{c[1]:,.0f}, {c[2]:,.0f}] of a {f[0]:,.0f} ns [{f[1]:,.0f}, {f[2]:,.0f}] "
                  f"single-page COW write (p50 per write): {100 * c[0] / f[0]:.1f} % here, against the seed's "
                  "copy p50 361 ns of a 6,782 ns fault (5.3 %). Emulated times: the share, not the ns, compares.")
        md.append("")
    md += replay_section(by_cell, summ)
    write_output(os.path.join(outdir, "projection.md"), "\n".join(native_projection(cowbench, path, outdir)) + "\n")
    md.append("![runtime and COW faults by mode](study_modes.png)")
    md.append("")
    md.append("![per-write latency by mode](study_latency.png)")
    md.append("")
    data = os.path.join(outdir, "study-data")
    # outputs written whole, never through a link planted where they go (report_io.py)
    write_output(os.path.join(data, "study_modes.dat"), "\n".join(plot_modes) + "\n")
    write_output(os.path.join(data, "study_latency.dat"), "\n".join(plot_lat) + "\n")
    write_output(os.path.join(outdir, "study.md"), "\n".join(md) + "\n")
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("study_modes", "study_latency"):
        for term in ("png", "svg"):
            subprocess.run(["gnuplot", "-e", f"term='{term}'", os.path.join(here, name + ".gp")],
                           cwd=data, check=True)
            os.replace(os.path.join(data, f"{name}.{term}"), os.path.join(outdir, f"{name}.{term}"))


if __name__ == "__main__":
    run_main("study-report", main)

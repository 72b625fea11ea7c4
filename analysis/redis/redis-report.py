#!/usr/bin/env python3
"""The Redis section of the main job's report, from analysis/redis/redis-study.sh's guest output.

usage: analysis/redis/redis-report.py OUTDIR

Reads OUTDIR/redis-<kernel>/{saves.csv, requests.csv.gz, bench.csv, env.txt} and writes
OUTDIR/redis.csv (per kernel, mode, pattern and metric: centre over saves and its CI, ratio to the
patched kernel's "off" mode with its CI), OUTDIR/redis-saves.csv (one row per save, the derived
figures beside the raw ones), OUTDIR/redis.md (the report section) and, with gnuplot,
OUTDIR/redis_save.{png,svg} (client latency around the first save of each mode).

analysis/redis/redis_load classifies every request: inside a save's window when it overlaps [BGSAVE sent,
save reaped]; set apart when it overlaps the probe reads just before the fork and just after the
save (smaps_rollup, taskstats, /proc/cow_stats); "outside" otherwise. Per save it writes p50 / p99 /
p99.9 / max (nearest rank) of each class; requests.csv.gz (round 0) feeds only the plot. Per mode:
the centre of the per-save figures with its interval, and the ratio to "off" with its interval,
p and verdict, all from `cowbench estimate` (analysis/cbstats.py: the engine every cowbench
command uses, docs/reference.md "Statistics"). Nothing from the data reaches code: gnuplot gets a
fixed script and reads fixed file names. Inputs are checked as cowbench checks its own
(report_io.py): a damaged file is one line on stderr and exit 2; outputs are written whole and
never through a link; labels and env.txt values reach the Markdown escaped.
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # analysis/: the shared modules
import cbstats  # noqa: E402
from report_io import (BadInput, check_output, install, md, name, number, read_csv, read_text,  # noqa: E402
                       run_main, write_output)

PAGE = 4096
BASELINE = "off"

# (metric, unit, how a save's value is made from its row and latencies, one line of meaning)
METRICS = [
    ("fork_ms", "ms", "latest_fork_usec / 1000: Redis's own fork() time"),
    ("bgsave_s", "s", "BGSAVE sent to save reaped (INFO polled every 10 ms; reaped at serverCron, 1/hz)"),
    ("rdb_last_cow_size_mib", "MiB", "Redis's COW size of the save (the child's Private_Dirty at its end)"),
    ("cow_peak_mib", "MiB", "largest current_cow_peak seen while the save ran"),
    ("parent_cow_faults", "pages", "the server's own COW copies during the window (taskstats wpcopy_count, exact)"),
    ("precopied_pages", "pages", "pages copied ahead during the window (/proc/cow_stats precopy_success, system-wide)"),
    ("kernel_cow_mib", "MiB", "(parent COW faults + pre-copied pages) x 4 KiB: memory the parent's copies took"),
    ("wasted_pages", "pages", "pre-copied, never written: 0 when nothing was pre-copied, unknown (empty) otherwise"),
    ("in_p50_ms", "ms", "client SET latency p50 inside the save window"),
    ("in_p99_ms", "ms", "p99 inside the window"),
    ("in_p999_ms", "ms", "p99.9 inside the window"),
    ("in_max_ms", "ms", "max inside the window"),
    ("out_p50_ms", "ms", "p50 outside the window (same run, probe reads excluded)"),
    ("out_p99_ms", "ms", "p99 outside"),
    ("out_p999_ms", "ms", "p99.9 outside"),
    ("out_max_ms", "ms", "max outside"),
    ("in_requests", "requests", "requests completed inside the window"),
]


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


ENV_NUMBERS = ("mem_total_kb", "used_memory", "keys", "value_size", "conns", "rounds", "wall_s")


def read_env(path):
    """env.txt's NAME=VALUE words; the numbers the report computes with must be numbers."""
    env = {}
    if os.path.exists(path):
        for n, line in enumerate(read_text(path).splitlines(), start=1):
            for part in line.split():
                if "=" in part:
                    k, v = part.split("=", 1)
                    if k in ENV_NUMBERS:
                        number(path, n, {k: v}, k, integer=True)
                    env[k] = v
    return env


SAVE_NUMBERS = ("latest_fork_usec", "rdb_last_cow_size", "current_cow_peak", "parent_wpcopy", "precopy_success",
                "in_requests") + tuple(f"{c}_{q}_ns" for c in ("in", "out") for q in ("p50", "p99", "p999", "max"))


def read_saves(path):
    """saves.csv of analysis/redis/redis_load, every row checked before any figure is made."""
    rows = read_csv(path, ("label", "pattern", "round", "t_bgsave_ns", "t_end_ns") + SAVE_NUMBERS)
    for n, r in enumerate(rows, start=2):
        name(path, n, r, "label")
        if r["pattern"] not in ("random", "seq"):
            raise BadInput(f"{path}: record {n}: pattern {r['pattern'][:40]!r} (random or seq)")
        number(path, n, r, "round", integer=True)
        t0 = number(path, n, r, "t_bgsave_ns", integer=True)
        if number(path, n, r, "t_end_ns", integer=True) < t0:
            raise BadInput(f"{path}: record {n}: the save ends before its BGSAVE (t_end_ns < t_bgsave_ns)")
        for col in r:  # every other column redis_load writes is a number (or empty: not measured)
            if col not in ("label", "pattern", "round", "t_bgsave_ns", "t_end_ns", "sysctls"):
                number(path, n, r, col, empty_ok=True)
    return rows


def read_bench(path):
    rows = read_csv(path, ("label", "set_rps", "save_running_at_end"))
    for n, r in enumerate(rows, start=2):
        name(path, n, r, "label")
        number(path, n, r, "set_rps", empty_ok=True)
        if r["save_running_at_end"] not in ("0", "1", ""):
            raise BadInput(f"{path}: record {n}: save_running_at_end {r['save_running_at_end'][:40]!r} (0 or 1)")
    return rows


def load_requests(path):
    """(label, pattern, round) -> list of (t_ns, lat_ns)."""
    reqs = {}
    if not os.path.exists(path):
        return reqs
    for n, r in enumerate(read_csv(path, ("label", "pattern", "round", "t_ns", "lat_ns"), gz=True), start=2):
        t = int(number(path, n, r, "t_ns", integer=True))
        lat = int(number(path, n, r, "lat_ns", integer=True))
        reqs.setdefault((r["label"], r["pattern"], r["round"]), []).append((t, lat))
    return reqs


def save_figures(save):
    f = {}
    g = lambda k: num(save.get(k))  # noqa: E731
    f["fork_ms"] = g("latest_fork_usec") / 1e3 if g("latest_fork_usec") is not None else None
    f["bgsave_s"] = (g("t_end_ns") - g("t_bgsave_ns")) / 1e9
    f["rdb_last_cow_size_mib"] = g("rdb_last_cow_size") / 2**20 if g("rdb_last_cow_size") is not None else None
    f["cow_peak_mib"] = g("current_cow_peak") / 2**20 if g("current_cow_peak") is not None else None
    f["parent_cow_faults"] = g("parent_wpcopy")
    f["precopied_pages"] = g("precopy_success")
    pre = f["precopied_pages"] or 0
    f["kernel_cow_mib"] = (f["parent_cow_faults"] + pre) * PAGE / 2**20 if f["parent_cow_faults"] is not None else None
    # The series maps a pre-copied page as wp_page_copy() maps its copy (dirty, writable), so nothing
    # in the parent tells a page copied ahead and never written from one the server wrote: with no
    # page pre-copied nothing was wasted; otherwise the figure is unknown here (the replay of the
    # Redis trace counts it exactly, page by page: analysis/traces/redis-bgsave.trace).
    f["wasted_pages"] = 0.0 if pre == 0 else None
    # Latency quantiles per save come from redis_load itself (it saw every request).
    for cls in ("in", "out"):
        for name in ("p50", "p99", "p999", "max"):
            v = g(f"{cls}_{name}_ns")
            f[f"{cls}_{name}_ms"] = v / 1e6 if v is not None else None
    f["in_requests"] = g("in_requests")
    return f


def fmt(v, unit):
    if v is None:
        return "—"
    if unit in ("pages", "requests"):
        return f"{v:,.0f}"
    return f"{v:,.3g}" if abs(v) < 100 else f"{v:,.0f}"


def cell(ci, unit):
    if not ci:
        return "—"
    m, lo, hi = ci
    return fmt(m, unit) if lo is None or hi - lo <= 1e-12 * max(1.0, abs(m)) else f"{fmt(m, unit)} [{fmt(lo, unit)}, {fmt(hi, unit)}]"


def ratio_cell(rc):
    """The ratio in cowbench's own spelling (cb_ratio_text), the same text every report prints."""
    if not rc:
        return "—"
    return rc[3]


def main():
    if len(sys.argv) != 2:
        raise BadInput("usage: analysis/redis/redis-report.py OUTDIR")
    outdir = sys.argv[1]
    # every output checked before anything is read or written (a link or FIFO there: exit 2, nothing written)
    for out in ("redis.csv", "redis-saves.csv", "redis.md", "redis_save.png", "redis_save.svg",
                os.path.join("redis-data", "redis_save.dat")):
        check_output(os.path.join(outdir, out))
    groups = {}  # (kernel, label, pattern) -> list of per-save figure dicts
    order = []
    envs, benches, series = {}, {}, []
    for kernel in ("stock", "patched"):
        d = os.path.join(outdir, f"redis-{kernel}")
        if not os.path.exists(os.path.join(d, "saves.csv")):
            continue
        envs[kernel] = read_env(os.path.join(d, "env.txt"))
        reqs = load_requests(os.path.join(d, "requests.csv.gz"))
        saves = read_saves(os.path.join(d, "saves.csv"))
        for s in saves:
            run = reqs.get((s["label"], s["pattern"], s["round"]), [])
            fig = save_figures(s)
            key = (kernel, s["label"], s["pattern"])
            if key not in groups:
                order.append(key)
            groups.setdefault(key, []).append((s, fig))
            if s["round"] == "0" and s["pattern"] == "random" and run:
                series.append((kernel, s["label"], s, run))
        bpath = os.path.join(d, "bench.csv")
        if os.path.exists(bpath):
            for r in read_bench(bpath):
                benches[(kernel, r["label"])] = r
    if not groups:
        raise BadInput("no saves.csv under " + outdir)

    write_saves(outdir, groups, order)
    rows = write_summary(outdir, groups, order)
    plotted = write_plot(outdir, series)
    write_markdown(outdir, groups, order, rows, envs, benches, plotted)


def write_saves(outdir, groups, order):
    names = [m[0] for m in METRICS]

    def rows(f):
        w = csv.writer(f, lineterminator="\n")
        first = groups[order[0]][0][0]
        w.writerow(["kernel"] + list(first.keys()) + names)
        for key in order:
            for s, fig in groups[key]:
                w.writerow([key[0]] + [s.get(k, "") for k in first.keys()] +
                           ["" if fig[n] is None else f"{fig[n]:.6g}" for n in names])
    write_output(os.path.join(outdir, "redis-saves.csv"), writer=rows, newline="")


def write_summary(outdir, groups, order):
    """Every figure's centre and interval, and the patched kernel's ratios to "off", in one engine call."""
    data = {}
    for key in order:
        kernel, label, pattern = key
        for name, _, _ in METRICS:
            data[("|".join((kernel, pattern, name)), label)] = [fig[name] for _, fig in groups[key]]
    est = cbstats.estimate(data, baseline=BASELINE)
    rows = {}

    def table(f):
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["kernel", "mode", "pattern", "metric", "unit", "saves", "centre", "ci_lo", "ci_hi", "ci_level",
                    "ratio_vs_off", "ratio_ci_lo", "ratio_ci_hi", "ratio_text", "p_adj", "verdict", "meaning"])
        for key in order:
            kernel, label, pattern = key
            for name, unit, meaning in METRICS:
                vals = [fig[name] for _, fig in groups[key]]
                o = est.get(("|".join((kernel, pattern, name)), label))
                ci = cbstats.interval(o) if o else None
                rc = cbstats.interval(o, "ratio") + (o["ratio_text"],) if o and kernel == "patched" and "ratio" in o \
                    else None
                rows[key + (name,)] = (ci, rc)
                w.writerow([kernel, label, pattern, name, unit, sum(v is not None for v in vals)] +
                           (["" if x is None else "%.6g" % x for x in ci] + ["%.4g" % o["ci_level"]
                                                                            if o.get("ci_level") else ""]
                            if ci else ["", "", "", ""]) +
                           (["" if x is None else "%.4g" % x for x in rc[:3]] + [rc[3], "%.3g" % o["p_adj"],
                                                                              o["verdict"]]
                            if rc else ["", "", "", "", "", ""]) + [meaning])
    write_output(os.path.join(outdir, "redis.csv"), writer=table, newline="")
    return rows


def write_markdown(outdir, groups, order, rows, envs, benches, plotted):
    accel = sorted({e.get("accel", "?") or "?" for e in envs.values()})
    emulated = "tcg" in accel or "?" in accel  # kvm: the host CPU's time; none: bare metal
    tnote = " (TCG: emulated time)" if emulated else ""
    lines = ["## Redis BGSAVE under SET load", ""]
    env = next(iter(envs.values()))
    kernels = ", ".join(k + ": " + md(e.get("kernel", "?")) for k, e in envs.items())
    lines.append(
        f"Redis {md(env.get('redis', '?'))} in QEMU guests ({kernels}), "
        f"accelerator **{md(', '.join(accel))}**, {md(env.get('mem_total_kb', '?'))} kB guest memory, "
        f"{int(env.get('keys', 0)):,} keys of {md(env.get('value_size', '?'))} B (DEBUG POPULATE; "
        f"used_memory {int(env.get('used_memory', 0)) / 2**20:,.0f} MiB), {md(env.get('conns', '?'))} connections "
        "of `analysis/redis/redis_load` (hiredis, one SET in flight per connection, no pipelining), random keys or "
        "key order. Per mode and pattern one BGSAVE per round, the patched kernel's modes interleaved in one "
        "boot (`analysis/redis/redis-study.sh`, mode table `analysis/redis/redis-modes.txt`). Figures: Hodges-Lehmann "
        "centre over saves [its exact CI]; ratios to pre-copy off in the same boot, Hodges-Lehmann with "
        "its exact CI (`cowbench estimate`, docs/reference.md \"Statistics\"). Counts (COW faults, pre-copied and wasted pages, COW MiB) are exact; "
        + ("every time here is emulated by TCG: compare ratios inside one boot, never the ms with hardware."
           if emulated else "times are real (KVM or bare metal), the host CPU's."))
    lines.append("")
    for pattern in ("random", "seq"):
        keys = [k for k in order if k[2] == pattern]
        if not keys:
            continue
        lines.append(f"### {pattern} SETs")
        lines.append("")
        lines.append("| kernel, mode | saves | parent COW faults | pre-copied | wasted (never written) | COW MiB (kernel) "
                  "| rdb_last_cow_size MiB | fork ms" + tnote + " | fork ÷ off | BGSAVE s" + tnote +
                  " | in-window p50 / p99 / p99.9 / max ms" + tnote + " | outside p50 / p99 ms |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for key in keys:
            kernel, label, _ = key
            r = lambda n: rows[key + (n,)]  # noqa: E731
            u = {m[0]: m[1] for m in METRICS}
            c = lambda n: cell(r(n)[0], u[n])  # noqa: E731
            lat_in = " / ".join(fmt(r(n)[0][0] if r(n)[0] else None, "ms")
                                for n in ("in_p50_ms", "in_p99_ms", "in_p999_ms", "in_max_ms"))
            lat_out = " / ".join(fmt(r(n)[0][0] if r(n)[0] else None, "ms") for n in ("out_p50_ms", "out_p99_ms"))
            lines.append(f"| {kernel}, {md(label)} | {len(groups[key])} | {c('parent_cow_faults')} | {c('precopied_pages')} "
                      f"| {c('wasted_pages')} | {c('kernel_cow_mib')} | {c('rdb_last_cow_size_mib')} | {c('fork_ms')} "
                      f"| {ratio_cell(r('fork_ms')[1])} | {c('bgsave_s')} | {lat_in} | {lat_out} |")
        lines.append("")
        lines.append(f"Client latency inside the save window{tnote}, with CIs ({pattern}; ratios to off in the same boot):")
        lines.append("")
        lines.append("| kernel, mode | requests in window | p50 ms | p99 ms | p99.9 ms | max ms | p99.9 ÷ off |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|")
        for key in keys:
            r = lambda n: rows[key + (n,)]  # noqa: E731
            lines.append(f"| {key[0]}, {md(key[1])} | {cell(r('in_requests')[0], 'requests')} | "
                      + " | ".join(cell(r(n)[0], "ms") for n in ("in_p50_ms", "in_p99_ms", "in_p999_ms", "in_max_ms"))
                      + f" | {ratio_cell(r('in_p999_ms')[1])} |")
        lines.append("")
    few = [k for k in order if (rows[k + ("in_requests",)][0] or (0,))[0] < 1000]
    if few:
        lines.append("Fewer than 1,000 requests per save window in " + ", ".join(f"{k[0]} {md(k[1])} {k[2]}" for k in few)
                  + ": there p99.9 is the window's largest latency or next to it (nearest-rank quantiles).")
        lines.append("")
    if benches:
        lines.append("redis-benchmark cross-check (`redis-benchmark -t set`, same keys, value size and connections, "
                  "started together with a BGSAVE; SET requests/s" + tnote + "; `running` = the save was still "
                  "running when it ended, so the whole run was inside the window): "
                  + "; ".join(f"{k[0]} {md(k[1])} {num(b['set_rps']) or 0:,.0f}/s"
                              + (" (running)" if b.get("save_running_at_end") == "1" else "")
                              for k, b in benches.items()) + ".")
        lines.append("")
    walls = [f"{k} {md(e.get('wall_s', '?'))} s" for k, e in envs.items()]
    lines.append("Wasted (pre-copied, never written): 0 where nothing was pre-copied; otherwise `—`, because "
              "the series maps a page copied ahead dirty and writable, as `wp_page_copy()` maps its copy, so "
              "nothing in the server's memory tells it from a page the server wrote. The replay of the "
              "bundled Redis trace (`analysis/traces/redis-bgsave.trace`, the study's replay table) counts "
              "it exactly. "
              "Guest wall time: " + ", ".join(walls) + ". Per save: `redis-saves.csv`; per mode: `redis.csv`.")
    lines.append("")
    if plotted:
        lines.append("![client SET latency around the first save of each mode (random keys)](redis_save.png)")
        lines.append("")
    write_output(os.path.join(outdir, "redis.md"), "\n".join(lines) + "\n")


def write_plot(outdir, series):
    """One block per mode: time from BGSAVE (s), latency (ms), 1 inside the window / 2 outside.
    gnuplot runs in a private folder with only this run's data file; its plots are renamed into
    OUTDIR, the data into OUTDIR/redis-data (never through a link planted there)."""
    def blocks(f):
        for i, (kernel, label, s, run) in enumerate(series):
            if i:
                f.write("\n\n")
            w0, w1 = int(s["t_bgsave_ns"]), int(s["t_end_ns"])
            f.write(f"t_s {kernel}-{label}\n")
            for t, lat in sorted(run):
                inside = 1 if t <= w1 and t + lat >= w0 else 2
                f.write(f"{(t - w0) / 1e9:.6f} {lat / 1e6:.6f} {inside}\n")

    data = os.path.join(outdir, "redis-data")
    if os.path.islink(data) or (os.path.exists(data) and not os.path.isdir(data)):
        raise BadInput(f"{data}: not a folder (a link is not followed)")
    os.makedirs(data, exist_ok=True)
    write_output(os.path.join(data, "redis_save.dat"), writer=blocks)
    if not series:
        return False
    here = os.path.dirname(os.path.abspath(__file__))
    work = tempfile.mkdtemp(dir=outdir, prefix=".redis-plot.")
    try:
        shutil.copyfile(os.path.join(data, "redis_save.dat"), os.path.join(work, "redis_save.dat"))
        for term in ("png", "svg"):
            r = subprocess.run(["gnuplot", "-e", f"term='{term}'", os.path.join(here, "redis_save.gp")],
                               cwd=work, capture_output=True, text=True)
            if r.returncode != 0:
                print("redis-report: gnuplot failed: " + r.stderr.strip(), file=sys.stderr)
                return False
            install(os.path.join(work, f"redis_save.{term}"), os.path.join(outdir, f"redis_save.{term}"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return True


if __name__ == "__main__":
    run_main("redis-report", main)

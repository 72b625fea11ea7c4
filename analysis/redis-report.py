#!/usr/bin/env python3
"""The Redis section of the main job's report, from analysis/redis-study.sh's guest output.

usage: analysis/redis-report.py OUTDIR

Reads OUTDIR/redis-<kernel>/{saves.csv, requests.csv.gz, bench.csv, env.txt} and writes
OUTDIR/redis.csv (per kernel, mode, pattern and metric: centre over saves and its CI, ratio to the
patched kernel's "off" mode with its CI), OUTDIR/redis-saves.csv (one row per save, the derived
figures beside the raw ones), OUTDIR/redis.md (the report section) and, with gnuplot,
OUTDIR/redis_save.{png,svg} (client latency around the first save of each mode).

bench/redis_load classifies every request: inside a save's window when it overlaps [BGSAVE sent,
save reaped]; set apart when it overlaps the probe reads just before the fork and just after the
save (smaps_rollup, taskstats, /proc/cow_stats); "outside" otherwise. Per save it writes p50 / p99 /
p99.9 / max (nearest rank) of each class; requests.csv.gz (round 0) feeds only the plot. Per mode:
the centre of the per-save figures with its interval, and the ratio to "off" with its interval,
p and verdict, all from `cowbench estimate` (analysis/cbstats.py: the engine every cowbench
command uses, docs/reference.md "Statistics"). Nothing from the data reaches code: gnuplot gets a
fixed script and reads fixed file names.
"""
import csv
import gzip
import os
import subprocess
import sys

import cbstats

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


def read_env(path):
    env = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                for part in line.split():
                    if "=" in part:
                        k, v = part.split("=", 1)
                        env[k] = v
    return env


def load_requests(path):
    """(label, pattern, round) -> list of (t_ns, lat_ns)."""
    reqs = {}
    if not os.path.exists(path):
        return reqs
    with gzip.open(path, "rt", newline="") as f:
        for r in csv.DictReader(f):
            reqs.setdefault((r["label"], r["pattern"], r["round"]), []).append((int(r["t_ns"]), int(r["lat_ns"])))
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
    outdir = sys.argv[1]
    groups = {}  # (kernel, label, pattern) -> list of per-save figure dicts
    order = []
    envs, benches, series = {}, {}, []
    for kernel in ("stock", "patched"):
        d = os.path.join(outdir, f"redis-{kernel}")
        if not os.path.exists(os.path.join(d, "saves.csv")):
            continue
        envs[kernel] = read_env(os.path.join(d, "env.txt"))
        reqs = load_requests(os.path.join(d, "requests.csv.gz"))
        with open(os.path.join(d, "saves.csv"), newline="") as f:
            saves = list(csv.DictReader(f))
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
            with open(bpath, newline="") as f:
                for r in csv.DictReader(f):
                    benches[(kernel, r["label"])] = r
    if not groups:
        sys.exit("redis-report: no saves.csv under " + outdir)

    write_saves(outdir, groups, order)
    rows = write_summary(outdir, groups, order)
    plotted = write_plot(outdir, series)
    write_markdown(outdir, groups, order, rows, envs, benches, plotted)


def write_saves(outdir, groups, order):
    names = [m[0] for m in METRICS]
    with open(os.path.join(outdir, "redis-saves.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        first = groups[order[0]][0][0]
        w.writerow(["kernel"] + list(first.keys()) + names)
        for key in order:
            for s, fig in groups[key]:
                w.writerow([key[0]] + [s.get(k, "") for k in first.keys()] +
                           ["" if fig[n] is None else f"{fig[n]:.6g}" for n in names])


def write_summary(outdir, groups, order):
    """Every figure's centre and interval, and the patched kernel's ratios to "off", in one engine call."""
    data = {}
    for key in order:
        kernel, label, pattern = key
        for name, _, _ in METRICS:
            data[("|".join((kernel, pattern, name)), label)] = [fig[name] for _, fig in groups[key]]
    est = cbstats.estimate(data, baseline=BASELINE)
    rows = {}
    with open(os.path.join(outdir, "redis.csv"), "w", newline="") as f:
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
    return rows


def write_markdown(outdir, groups, order, rows, envs, benches, plotted):
    accel = sorted({e.get("accel", "?") or "?" for e in envs.values()})
    emulated = "tcg" in accel or "?" in accel  # kvm: the host CPU's time; none: bare metal
    tnote = " (TCG: emulated time)" if emulated else ""
    md = ["## Redis BGSAVE under SET load", ""]
    env = next(iter(envs.values()))
    kernels = ", ".join(k + ": " + e.get("kernel", "?") for k, e in envs.items())
    md.append(
        f"Redis {env.get('redis', '?')} in QEMU guests ({kernels}), "
        f"accelerator **{', '.join(accel)}**, {env.get('mem_total_kb', '?')} kB guest memory, "
        f"{int(env.get('keys', 0)):,} keys of {env.get('value_size', '?')} B (DEBUG POPULATE; "
        f"used_memory {int(env.get('used_memory', 0)) / 2**20:,.0f} MiB), {env.get('conns', '?')} connections "
        "of `bench/redis_load` (hiredis, one SET in flight per connection, no pipelining), random keys or "
        "key order. Per mode and pattern one BGSAVE per round, the patched kernel's modes interleaved in one "
        "boot (`analysis/redis-study.sh`, mode table `analysis/redis-modes.txt`). Figures: Hodges-Lehmann "
        "centre over saves [its exact CI]; ratios to pre-copy off in the same boot, Hodges-Lehmann with "
        "its exact CI (`cowbench estimate`, docs/reference.md \"Statistics\"). Counts (COW faults, pre-copied and wasted pages, COW MiB) are exact; "
        + ("every time here is emulated by TCG: compare ratios inside one boot, never the ms with hardware."
           if emulated else "times are real (KVM or bare metal), the host CPU's."))
    md.append("")
    for pattern in ("random", "seq"):
        keys = [k for k in order if k[2] == pattern]
        if not keys:
            continue
        md.append(f"### {pattern} SETs")
        md.append("")
        md.append("| kernel, mode | saves | parent COW faults | pre-copied | wasted (never written) | COW MiB (kernel) "
                  "| rdb_last_cow_size MiB | fork ms" + tnote + " | fork ÷ off | BGSAVE s" + tnote +
                  " | in-window p50 / p99 / p99.9 / max ms" + tnote + " | outside p50 / p99 ms |")
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for key in keys:
            kernel, label, _ = key
            r = lambda n: rows[key + (n,)]  # noqa: E731
            u = {m[0]: m[1] for m in METRICS}
            c = lambda n: cell(r(n)[0], u[n])  # noqa: E731
            lat_in = " / ".join(fmt(r(n)[0][0] if r(n)[0] else None, "ms")
                                for n in ("in_p50_ms", "in_p99_ms", "in_p999_ms", "in_max_ms"))
            lat_out = " / ".join(fmt(r(n)[0][0] if r(n)[0] else None, "ms") for n in ("out_p50_ms", "out_p99_ms"))
            md.append(f"| {kernel}, {label} | {len(groups[key])} | {c('parent_cow_faults')} | {c('precopied_pages')} "
                      f"| {c('wasted_pages')} | {c('kernel_cow_mib')} | {c('rdb_last_cow_size_mib')} | {c('fork_ms')} "
                      f"| {ratio_cell(r('fork_ms')[1])} | {c('bgsave_s')} | {lat_in} | {lat_out} |")
        md.append("")
        md.append(f"Client latency inside the save window{tnote}, with CIs ({pattern}; ratios to off in the same boot):")
        md.append("")
        md.append("| kernel, mode | requests in window | p50 ms | p99 ms | p99.9 ms | max ms | p99.9 ÷ off |")
        md.append("|---|---:|---:|---:|---:|---:|---:|")
        for key in keys:
            r = lambda n: rows[key + (n,)]  # noqa: E731
            md.append(f"| {key[0]}, {key[1]} | {cell(r('in_requests')[0], 'requests')} | "
                      + " | ".join(cell(r(n)[0], "ms") for n in ("in_p50_ms", "in_p99_ms", "in_p999_ms", "in_max_ms"))
                      + f" | {ratio_cell(r('in_p999_ms')[1])} |")
        md.append("")
    few = [k for k in order if (rows[k + ("in_requests",)][0] or (0,))[0] < 1000]
    if few:
        md.append("Fewer than 1,000 requests per save window in " + ", ".join(f"{k[0]} {k[1]} {k[2]}" for k in few)
                  + ": there p99.9 is the window's largest latency or next to it (nearest-rank quantiles).")
        md.append("")
    if benches:
        md.append("redis-benchmark cross-check (`redis-benchmark -t set`, same keys, value size and connections, "
                  "started together with a BGSAVE; SET requests/s" + tnote + "; `running` = the save was still "
                  "running when it ended, so the whole run was inside the window): "
                  + "; ".join(f"{k[0]} {k[1]} {num(b['set_rps']) or 0:,.0f}/s"
                              + (" (running)" if b.get("save_running_at_end") == "1" else "")
                              for k, b in benches.items()) + ".")
        md.append("")
    walls = [f"{k} {e.get('wall_s', '?')} s" for k, e in envs.items()]
    md.append("Wasted (pre-copied, never written): 0 where nothing was pre-copied; otherwise `—`, because "
              "the series maps a page copied ahead dirty and writable, as `wp_page_copy()` maps its copy, so "
              "nothing in the server's memory tells it from a page the server wrote. The replay of the "
              "bundled Redis trace (`analysis/traces/redis-bgsave.trace`, the study's replay table) counts "
              "it exactly. "
              "Guest wall time: " + ", ".join(walls) + ". Per save: `redis-saves.csv`; per mode: `redis.csv`.")
    md.append("")
    if plotted:
        md.append("![client SET latency around the first save of each mode (random keys)](redis_save.png)")
        md.append("")
    with open(os.path.join(outdir, "redis.md"), "w") as f:
        f.write("\n".join(md) + "\n")


def write_plot(outdir, series):
    """One block per mode: time from BGSAVE (s), latency (ms), 1 inside the window / 2 outside."""
    data = os.path.join(outdir, "redis-data")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(data, "redis_save.dat"), "w") as f:
        for i, (kernel, label, s, run) in enumerate(series):
            if i:
                f.write("\n\n")
            w0, w1 = int(s["t_bgsave_ns"]), int(s["t_end_ns"])
            f.write(f"t_s {kernel}-{label}\n")
            for t, lat in sorted(run):
                inside = 1 if t <= w1 and t + lat >= w0 else 2
                f.write(f"{(t - w0) / 1e9:.6f} {lat / 1e6:.6f} {inside}\n")
    if not series:
        return False
    here = os.path.dirname(os.path.abspath(__file__))
    for term in ("png", "svg"):
        r = subprocess.run(["gnuplot", "-e", f"term='{term}'", os.path.join(here, "redis_save.gp")],
                           cwd=data, capture_output=True, text=True)
        if r.returncode != 0:
            print("redis-report: gnuplot failed: " + r.stderr.strip(), file=sys.stderr)
            return False
        os.replace(os.path.join(data, f"redis_save.{term}"), os.path.join(outdir, f"redis_save.{term}"))
    return True


if __name__ == "__main__":
    main()

"""Report sections on what the emulated study means natively (issue 30), for analysis/study-report.py.

projection_section(): `cowbench project` on the study (with the host's unit costs when given) into
OUTDIR/projection.csv and OUTDIR/unit-costs.csv, and a markdown section: the unit costs, the model's
error per cell in its own boot, the projected native change with bounds beside the TCG change, and
the worst single stall per mode. order0_section(): the patched kernel with pre-copy off against stock
on order-0 faults and fork() of 1 GiB, from analysis/order0.ini's rows under QEMU's instruction
counter. Both return lists of markdown lines; neither turns data into code.
"""
import csv
import math
import subprocess

import cbstats
from report_io import write_output


def _num(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _run_csv(argv):
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return out, list(csv.DictReader(out.splitlines()))


def _pairs(key):
    return dict(p.split("=", 1) for p in key.split() if "=" in p)


def _mode(cell, depth=None):
    """The cell's pre-copy mode; a fixed-depth cell that names no depth ran at the boot's own (DEPTH)."""
    d = _pairs(cell)
    if d.get("kernel") == "stock" or "precopy" not in d:
        return "stock"
    p = d.get("precopy")
    if p == "1":
        return f"depth {d.get('precopy-depth') or depth or '?'}"
    return {"0": "off (0)", "2": "adaptive (2)"}.get(p, f"pre-copy {p}")


def _pct(v):
    return "—" if v is None else f"{v:+.1f} %"


def _ns(v):
    if v is None:
        return "—"
    return f"{v / 1e3:,.1f} µs" if v >= 1e4 else f"{v:,.0f} ns"


def first_by_mode(study_csv, cowbench=None):
    """The first write (first_ns) per boot and pre-copy mode, from the seq fork=1 fault rows.

    The model's fixed term is the pre-copy-off (or stock) first write of the boot; a mode whose own
    first fault costs more carries that difference outside the model. Per mode: the centre of first_ns
    over its timed seq rows, and its ratio to pre-copy off's in the same boot with its interval, both
    from `cowbench estimate` (the engine, docs/reference.md "Statistics"). Rows are read as data only."""
    groups = {}
    with open(study_csv, newline="") as f:
        for r in csv.DictReader(f):
            if (r.get("workload") != "seq" or r.get("fork") != "1" or r.get("break_mode", "") not in ("", "fault")
                    or r.get("status") != "ok" or r.get("rep_kind", "timed") != "timed"):
                continue
            v = _num(r.get("first_ns"))
            if v is None or v <= 0:
                continue
            pre, depth = r.get("precopy", ""), r.get("precopy_depth", "")
            group = "off" if pre == "0" else f"{pre}/{depth}"
            groups.setdefault((r.get("boot", ""), group), []).append(v)
    est = cbstats.estimate(groups, baseline="off", cowbench=cowbench) if groups else {}
    out = []
    for (boot, group), vals in sorted(groups.items()):
        o, off = est.get((boot, group)), est.get((boot, "off"))
        if group == "off" or group.startswith("/") or not o or not off or "ratio" not in o:
            continue
        if len(vals) < 2 or off["n"] < 2:
            continue
        pre, depth = group.split("/", 1)
        out.append({"boot": boot, "precopy": pre, "depth": depth, "first": o["centre"], "off": off["centre"],
                    "ratio": o["ratio"], "lo": o["ratio_ci_lo"], "hi": o["ratio_ci_hi"], "text": o["ratio_text"],
                    "n": len(vals), "n_off": off["n"]})
    return out


def projection_section(cowbench, study_csv, outdir, native_csv=None):
    args = [cowbench, "project", "--format=csv"] + ([f"--native={native_csv}"] if native_csv else [])
    cells_text, cells = _run_csv(args + [study_csv])
    units_text, units = _run_csv(args + ["--units", study_csv])
    write_output(f"{outdir}/projection.csv", cells_text)  # whole, never through a link (report_io.py)
    write_output(f"{outdir}/unit-costs.csv", units_text)
    md = ["## Native projection of the study", ""]
    md.append("Emulated (TCG) time is not the hardware's cost structure: a saved trap is worth a different share "
              "of a COW fault there. So each COW writer cell of the study is priced from its exact counts "
              "(`cowbench project`, `libcowbench/src/project.c`) as "
              "*first + (writes − 1) × write + (faults − 1) × (fault − write) + pre-copied × batch*, "
              "and the model is checked against the cell's measured runtime in its own boot (**model error**, "
              "target ≤ 10 %). **Measured** is the centre of `elapsed_ns` (the write loop's wall time) over the "
              "cell's timed reps in `study.csv` (Hodges-Lehmann, `cowbench project` through the engine of "
              "docs/reference.md \"Statistics\"); in brackets the model error against the ends of that centre's "
              "exact interval (≥ 95 %; with 5 reps the whole range, 93.75 %), i.e. how far the cell's own "
              "rep-to-rep noise lets the error be read. `projection.csv` also has the error against the mean "
              "(`model_error_pct`), which a ""single preempted rep moves by tens of % in a microsecond cell. Every unit is a median over the "
              "reps of the `seq` cells of "
              "`analysis/study.ini [units]` in the same boot: *write* a private write (fork=0), *fault* a COW "
              "write fault (fork=1, `--break=fault`), both per page after the run's first write, and *first* the "
              "run's fixed cost: its first write, timed from the start of the loop's window (`first_ns`: a fresh "
              "child's first trap after the fork on cold caches and TLB, with its first touch of the loop's "
              "code). *first* comes from the boot's `seq` pre-copy-off fault rows run with the priced cell's "
              "probes (a rep's probes run just before its window and change what its first write costs; "
              "in the `seq` cells it is under 0.1 % of the runtime), never from the single-page cells, which "
              "test it: one write, so *first* is their whole model. *pre-copied* is what the cell's rows "
              "counted, the child's faults outside its loop included: where that exceeds the loop's writes "
              "(one-write cells in a fixed-depth mode) the model prices copies the loop never waited for. "
              "*faults* counts the "
              "loop's own COW copies (taskstats counts the whole child: at most one per write is the loop's). "
              "Rows without `first_ns` (older files) get no fixed term: every cost per page. In the guest "
              "*batch* is the kernel's own time per pre-copied page (`/proc/cow_stats` precopy_ns / "
              "precopy_success). **Native**: the same counts priced at the host's units (stock kernel, "
              + ("`cowbench matrix -w seq -s 16M,64M --fork=1,0 --break=fault,populate`" if native_csv else
                 "not measured in this run") +
              "); the native batch cost is bounded between a hot 4 KiB memcpy (pure copy) and the populate "
              "path per page, and the central estimate applies the guest's own batch/populate ratio to the "
              "host's populate cost. The change is against pre-copy off in the same boot.")
    md.append("")
    if not cells:
        md.append("No cell to project (the study has no COW writer rows with counts).")
        md.append("")
    else:
        md.append("| cell | mode | writes | COW faults | pre-copied | TCG Δ runtime | model error (TCG) [noise] | "
                  "native Δ runtime [copy, populate] | worst fault: pages | path p99.9 / max (TCG) | native worst stall |")
        md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        errors, fixed = [], []
        for c in cells:
            d = _pairs(c["cell"])
            err = _num(c.get("model_error_centre_pct"))
            elo, ehi = _num(c.get("model_error_centre_lo_pct")), _num(c.get("model_error_centre_hi_pct"))
            if err is not None:
                errors.append((abs(err), c))
            err_text = _pct(err) + ("" if elo is None or ehi is None else f" [{elo:+.0f}, {ehi:+.0f}]")
            if _num(c.get("first_ns")) is not None:
                fixed.append(c)
            lo, mid, hi = (_num(c[k]) for k in ("native_change_lo_pct", "native_change_pct", "native_change_hi_pct"))
            native = "—" if mid is None else f"{mid:+.1f} % [{lo:+.1f}, {hi:+.1f}]"
            pages = _num(c["fault_pages_max"])
            p999, pmax = _num(c["fault_path_p999_ns"]), _num(c["fault_path_max_ns"])
            path = "—" if p999 is None else f"< {_ns(p999)} / < {_ns(pmax) if pmax is not None else '∞'}"
            stall, stall_hi = _num(c["native_stall_ns"]), _num(c["native_stall_hi_ns"])
            st = "—" if stall is None else f"{stall / 1e3:.1f} µs (≤ {stall_hi / 1e3:.1f})"
            md.append(f"| {d.get('workload', c['workload'])} {d.get('size', '')} | {_mode(c['cell'], c.get('precopy_depth'))} | "
                      f"{_num(c['writes']) or 0:,.0f} | {_num(c['faults']) or 0:,.0f} | {_num(c['precopied']) or 0:,.0f} | "
                      f"{_pct(_num(c['measured_change_pct']))} | {err_text} | {native} | "
                      f"{'—' if pages is None else f'≤ {pages:.0f}'} | {path} | {st} |")
        md.append("")
        if errors:
            within = sum(e <= 10 for e, _ in errors)
            worst, wc = max(errors, key=lambda x: x[0])
            single = [e for e, c in errors if (_num(c["writes"]) or 0) <= 1]
            noisy = [c for _, c in errors if _num(c.get("model_error_centre_lo_pct")) is not None and
                     (_num(c["model_error_centre_hi_pct"]) - _num(c["model_error_centre_lo_pct"])) > 20]
            wd = _pairs(wc["cell"])
            line = (f"Model error (against the centre): {within} of {len(errors)} cells within ±10 %; largest "
                    f"|error| {worst:.1f} % ({wd.get('workload', '?')} {wd.get('size', '')}, {_mode(wc['cell'], wc.get('precopy_depth'))})")
            if single:
                line += (f"; the {len(single)} single-write cells: |error| ≤ {max(single):.1f} %")
            line += (f". {len(noisy)} of {len(errors)} cells measured their runtime too noisily to read a 10 % "
                     "error either way (the bracket spans more than 20 points)")
            line += (". The fixed term *first* is " + ("in the model for every cell with `first_ns` in its boot's "
                     "unit rows" if fixed else "**absent** (no `first_ns` in the unit rows: a file from before "
                     "the column; the single-write cells' runtime is then mostly outside the model)") +
                     ". A cell whose error is large is one whose runtime the unit costs do not explain (TCG's "
                     "own noise, or costs the model leaves out: the scatter of random writes, the pre-copy "
                     "worker, the adaptive mode's bookkeeping); its native figure is no better than its error.")
            md.append(line)
            md.append("")
        modes = first_by_mode(study_csv, cowbench)
        if modes:
            md.append("Not in the model: a pre-copy mode's own cost on a fault that copies nothing ahead. The fixed "
                      "term is pre-copy off's first write; a mode's first fault (`first_ns` of its `seq` cells, "
                      "the same boot, before any stream could open its window) against off's: " +
                      "; ".join(f"{_mode('precopy=' + m['precopy'] + (' precopy-depth=' + m['depth'] if m['precopy'] == '1' else ''))} "
                                f"{_ns(m['first'])} against {_ns(m['off'])}, {m['text']} "
                                f"({m['n']} and {m['n_off']} reps)" for m in modes) +
                      ". Where that ratio is above 1, the mode's single-write cells run that much over the model "
                      "(their runtime is one such fault), and the native projection, which prices the counts "
                      "only, shows no change for them although the mode costs its lone faults this much in TCG. "
                      "It stays out of the model on purpose: the host runs a stock kernel, so a mode's own "
                      "fault cost has no native unit, and a TCG-only term would make the check pass for a "
                      "projection that still lacks it.")
            md.append("")
    if units:
        md.append("| unit costs | kernel | size | write | COW fault | first write (fixed) | populate (trap-free) "
                  "| 4 KiB copy | batch / pre-copied page | populate / (fault − write) |")
        md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for u in units:
            size = int(float(u["size_bytes"])) >> 20
            ratio = _num(u["populate_over_fault"])
            md.append(f"| {u['source']} | {u['kernel']} | {size} MiB | {_ns(_num(u['write_ns']))} | "
                      f"{_ns(_num(u['fault_ns']))} | {_ns(_num(u.get('first_ns')))} | {_ns(_num(u['populate_ns']))} | "
                      f"{_ns(_num(u['copy_ns']))} | {_ns(_num(u['batch_ns']))} | "
                      f"{'—' if ratio is None or ratio < 0 else f'{ratio:.2f}'} |")
        md.append("")
    md.append("Worst fault: pages copied by one fault, its own included (the top of the largest "
              "`precopy_fault_pages_<N>` bucket used; 1 without pre-copy) and its copy-path time under TCG "
              "(bucket tops of `precopy_fault_hist_<N>`); native worst stall: the host's COW fault plus the "
              "further pages at the central (and, in brackets, the populate-path) batch cost. Rows: "
              "`projection.csv`, units: `unit-costs.csv`.")
    md.append("")
    return md


def order0_section(cowbench, order0_csv):
    """Each loop's patched (pre-copy off) / stock ratio with its interval, from compare --by=kernel."""
    _, rows = _run_csv([cowbench, "compare", "--by=kernel=stock", "--metric=elapsed_ns,fork_ns", "--format=csv",
                        order0_csv])
    md = ["## Order-0 faults: pre-copy off against stock", ""]
    md.append("The patched kernel with pre-copy compiled in and off (`vm.cow_precopy=0`) against stock, on "
              "faults that never fork (`pagefault`: will-it-scale's page_fault loops, 64 MiB per pass) and "
              "on `fork()` of 1 GiB populated memory (`analysis/order0.ini`). Method: QEMU's instruction "
              "counter (`-icount shift=0`, `kernel/vm-run.sh --icount`): the guest clock advances one "
              "nanosecond per instruction executed, so each time below is an instruction count, "
              "deterministic and comparable across boots and kernels, where TCG wall time across two boots "
              "was not (×0.53 [0.28, 1.00]). Debian's QEMU 7.2 loads TCG plugins but ships none "
              "(no libinsn.so), and counting instructions through the guest clock needs none. Its limit: "
              "an instruction is not a cycle (cache misses and the cost of a TLB flush do not show), so "
              "this bounds the code added to the order-0 path, not its native time.")
    md.append("")
    md.append("| loop | metric | stock | patched, pre-copy off | change [CI] (`cowbench compare`) |")
    md.append("|---|---|---:|---:|---:|")
    for r in rows:
        cell = r.get("cell", "")
        d = _pairs(cell)
        loop = {"pagefault": f"pagefault {d.get('fault', '')}", "fork": "fork"}.get(d.get("workload"), cell)
        metric = r.get("metric", "")
        if (d.get("workload") == "fork") != (metric == "fork_ns"):
            continue
        md.append(f"| {loop} {d.get('size', '')} | {metric} (instructions) | {r.get('old_centre', '')} | "
                  f"{r.get('new_centre', '')} | {_pct(_num(r.get('change_pct')))} [{_pct(_num(r.get('change_ci_lo_pct')))}, "
                  f"{_pct(_num(r.get('change_ci_hi_pct')))}] |")
    md.append("")
    return md


if __name__ == "__main__":
    # analysis/projection_report.py order0 COWBENCH ORDER0.csv: the order-0 section on stdout.
    import sys
    if len(sys.argv) != 4 or sys.argv[1] != "order0":
        sys.exit("usage: analysis/projection_report.py order0 COWBENCH ORDER0.csv")
    print("\n".join(order0_section(sys.argv[2], sys.argv[3])))

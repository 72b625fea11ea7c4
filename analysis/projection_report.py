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


def _mode(cell):
    d = _pairs(cell)
    if d.get("kernel") == "stock" or "precopy" not in d:
        return "stock"
    p = d.get("precopy")
    if p == "1":
        return f"depth {d.get('precopy-depth', '?')}"
    return {"0": "off (0)", "2": "adaptive (2)"}.get(p, f"pre-copy {p}")


def _pct(v):
    return "—" if v is None else f"{v:+.1f} %"


def _ns(v):
    if v is None:
        return "—"
    return f"{v / 1e3:,.1f} µs" if v >= 1e4 else f"{v:,.0f} ns"


def projection_section(cowbench, study_csv, outdir, native_csv=None):
    args = [cowbench, "project", "--format=csv"] + ([f"--native={native_csv}"] if native_csv else [])
    cells_text, cells = _run_csv(args + [study_csv])
    units_text, units = _run_csv(args + ["--units", study_csv])
    with open(f"{outdir}/projection.csv", "w") as f:
        f.write(cells_text)
    with open(f"{outdir}/unit-costs.csv", "w") as f:
        f.write(units_text)
    md = ["## Native projection of the study", ""]
    md.append("Emulated (TCG) time is not the hardware's cost structure: a saved trap is worth a different share "
              "of a COW fault there. Each cell's runtime is modelled from its exact counts as "
              "*writes × write + faults × (fault − write) + pre-copied × batch* (`cowbench project`, "
              "`libcowbench/src/project.c`), with per-page unit costs from the `seq` cells of "
              "`analysis/study.ini [units]` in the same boot: a private write (fork=0), a COW write fault "
              "(fork=1, `--break=fault`) and a trap-free COW break (`--break=populate`: one "
              "`MADV_POPULATE_WRITE` over the just-forked region). In the guest *batch* is the kernel's own "
              "time per pre-copied page (`/proc/cow_stats` precopy_ns / precopy_success). **Model error**: the "
              "model's runtime against the measured one in that boot (target ≤ 10 %). **Native**: the same "
              "counts priced at the host's units (stock kernel, "
              + ("`cowbench matrix -w seq -s 16M,64M --fork=1,0 --break=fault,populate`" if native_csv else
                 "not measured in this run") +
              "); the native batch cost is bounded between a hot 4 KiB memcpy (pure copy) and the populate "
              "path per page, and the central estimate applies the guest's own batch/populate ratio to the "
              "host's populate cost. The change is against pre-copy off in the same boot.")
    md.append("")
    if units:
        md.append("| unit costs | kernel | size | write | COW fault | populate (trap-free) | 4 KiB copy "
                  "| batch / pre-copied page | populate / (fault − write) |")
        md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for u in units:
            size = int(float(u["size_bytes"])) >> 20
            ratio = _num(u["populate_over_fault"])
            md.append(f"| {u['source']} | {u['kernel']} | {size} MiB | {_ns(_num(u['write_ns']))} | "
                      f"{_ns(_num(u['fault_ns']))} | {_ns(_num(u['populate_ns']))} | {_ns(_num(u['copy_ns']))} | "
                      f"{_ns(_num(u['batch_ns']))} | {'—' if ratio is None else f'{ratio:.2f}'} |")
        md.append("")
    if not cells:
        md.append("No cell to project (the study has no COW writer rows with counts).")
        return md + [""]
    md.append("| cell | mode | COW faults | pre-copied | TCG Δ runtime | model error (TCG) | native Δ runtime "
              "[copy, populate] | worst fault: pages | path p99.9 / max (TCG) | native worst stall |")
    md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    errors = []
    for c in cells:
        d = _pairs(c["cell"])
        err = _num(c["model_error_pct"])
        if err is not None:
            errors.append(abs(err))
        lo, mid, hi = (_num(c[k]) for k in ("native_change_lo_pct", "native_change_pct", "native_change_hi_pct"))
        native = "—" if mid is None else f"{mid:+.1f} % [{lo:+.1f}, {hi:+.1f}]"
        pages = _num(c["fault_pages_max"])
        p999, pmax = _num(c["fault_path_p999_ns"]), _num(c["fault_path_max_ns"])
        path = "—" if p999 is None else f"< {_ns(p999)} / < {_ns(pmax) if pmax is not None else '∞'}"
        stall, stall_hi = _num(c["native_stall_ns"]), _num(c["native_stall_hi_ns"])
        st = "—" if stall is None else f"{stall / 1e3:.1f} µs (≤ {stall_hi / 1e3:.1f})"
        md.append(f"| {d.get('workload', c['workload'])} {d.get('size', '')} | {_mode(c['cell'])} | "
                  f"{_num(c['faults']) or 0:,.0f} | {_num(c['precopied']) or 0:,.0f} | "
                  f"{_pct(_num(c['measured_change_pct']))} | {_pct(err)} | {native} | "
                  f"{'—' if pages is None else f'≤ {pages:.0f}'} | {path} | {st} |")
    md.append("")
    if errors:
        within = sum(e <= 10 for e in errors)
        md.append(f"Model error: {within} of {len(errors)} cells within ±10 %; largest |error| "
                  f"{max(errors):.1f} %. A cell whose error is large is one whose runtime the unit costs "
                  "do not explain (TCG's own noise, or costs the model leaves out: the scatter of random "
                  "writes, the pre-copy worker); its native figure is no better than its error.")
        md.append("")
    md.append("Worst fault: pages copied by one fault, its own included (the top of the largest "
              "`precopy_fault_pages_<N>` bucket used; 1 without pre-copy) and its copy-path time under TCG "
              "(bucket tops of `precopy_fault_hist_<N>`); native worst stall: the host's COW fault plus the "
              "further pages at the central (and, in brackets, the populate-path) batch cost. Rows: "
              "`projection.csv`, units: `unit-costs.csv`.")
    md.append("")
    return md


def order0_section(cowbench, order0_csv):
    """Each loop's patched (pre-copy off) / stock ratio with its 95 % interval, from compare --by=kernel."""
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
    md.append("| loop | metric | stock | patched, pre-copy off | change [95 % CI] |")
    md.append("|---|---|---:|---:|---:|")
    for r in rows:
        cell = r.get("cell", "")
        d = _pairs(cell)
        loop = {"pagefault": f"pagefault {d.get('fault', '')}", "fork": "fork"}.get(d.get("workload"), cell)
        metric = r.get("metric", "")
        if (d.get("workload") == "fork") != (metric == "fork_ns"):
            continue
        md.append(f"| {loop} {d.get('size', '')} | {metric} (instructions) | {r.get('old_median', '')} | "
                  f"{r.get('new_median', '')} | {_pct(_num(r.get('change_pct')))} [{_pct(_num(r.get('change_ci95_lo_pct')))}, "
                  f"{_pct(_num(r.get('change_ci95_hi_pct')))}] |")
    md.append("")
    return md


if __name__ == "__main__":
    # analysis/projection_report.py order0 COWBENCH ORDER0.csv: the order-0 section on stdout.
    import sys
    if len(sys.argv) != 4 or sys.argv[1] != "order0":
        sys.exit("usage: analysis/projection_report.py order0 COWBENCH ORDER0.csv")
    print("\n".join(order0_section(sys.argv[2], sys.argv[3])))

#!/usr/bin/env python3
"""Tables of large-folio-cost.sh outputs.  usage: summarize.py FILE...

1. Per setting, mode and op: the instructions per page of each boot (Hodges-Lehmann centre of its
   repetitions [exact interval]) and the per-repetition counts (a single value when every
   repetition gave it, else their Hodges-Lehmann centre [exact interval]).
2. The same centres as a grid, one row per setting and op, one column per kernel and mode
   ("boot 1 / boot 2").
3. Each patched mode against stock and against patched off, boot by boot (patched-N against
   stock-N): the Hodges-Lehmann ratio of the instructions per page as a % change [exact interval].
Every number comes from `cowbench estimate` (kernel/tests/estimate.py); the levels are stated."""
import os, re, sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests"))
import estimate  # noqa: E402

KEYS = ["traps", "cow_fault", "cow_precopy", "precopy_skip_large", "cow_reuse_around",
        "cow_reuse_around_pages", "thp_fault_alloc", "thp_split_pmd", "mthp_64kB_anon_fault_alloc",
        "mthp_64kB_filled_folios", "mthp_64kB_split_deferred", "anon_huge_kb"]
SETTINGS, MODES = ["always", "mthp64", "order0"], ["off", "fixed16", "adaptive", "reuse16"]
OPS = ["cow-seq", "cow-rand", "reuse"]
per_op = defaultdict(dict)          # (setting, mode, op) -> {boot: [per_op...]}
counts = defaultdict(lambda: defaultdict(list))   # (kernel, setting, mode, op) -> key -> [v]
for path in sys.argv[1:]:
    boot = re.sub(r".*/|\.txt$", "", path)
    kern = boot.split("-")[0]
    setting = mode = None
    for line in open(path):
        m = re.match(r"=== (\S+) (\S+)", line)
        if m:
            setting, mode = m.groups()
            continue
        if not line.startswith("cowcost op="):
            continue
        kv = dict(re.findall(r"(\S+)=(\S+)", line))
        key = (setting, mode, kv["op"])
        per_op[key].setdefault(boot, []).append(float(kv["per_op"]))
        for k in KEYS:
            if int(kv.get(k, "-1")) >= 0:
                counts[(kern, setting, mode, kv["op"])][k].append(int(kv[k]))

boots = sorted({b for d in per_op.values() for b in d})
cells = estimate.estimate({(" ".join(k), b): v for k, d in per_op.items() for b, v in d.items()})
varying = estimate.estimate({(" ".join(k), key): v for k, c in counts.items() for key, v in c.items()
                             if len(set(v)) > 1})
levels = {(o["n"], o["ci_level"]) for o in list(cells.values()) + list(varying.values())}


def rng(k, key):
    v = counts[k][key]
    if not v:
        return "–"
    if len(set(v)) == 1:
        return str(v[0])
    o = varying[(" ".join(k), key)]
    return f"{o['centre']:,.1f} [{o['ci_lo']:,.0f}, {o['ci_hi']:,.0f}]"


def order(k):
    return SETTINGS.index(k[0]), MODES.index(k[1]), OPS.index(k[2])


print("Instructions per written page per boot and the per-repetition counts: Hodges–Lehmann centre "
      "[exact interval] (a count every repetition gave alike: that value); intervals at " +
      ", ".join(f"{estimate.pct(lv)} ({n} repetitions)" for n, lv in sorted(levels)) + " (`cowbench estimate`).")
print()
print("| setting | kernel, mode | op | " + " | ".join(f"{b} HL [interval]" for b in boots) + " | " + " | ".join(KEYS) + " |")
print("|" + "---|" * (3 + len(boots) + len(KEYS)))
for (setting, mode, op) in sorted(per_op, key=order):
    for kern in ("stock", "patched"):
        if not any(b.startswith(kern) for b in per_op[(setting, mode, op)]):
            continue
        row = []
        for b in boots:
            o = cells.get((f"{setting} {mode} {op}", b)) if b.startswith(kern) else None
            row.append(f"{o['centre']:,.1f} [{o['ci_lo']:,.0f}, {o['ci_hi']:,.0f}]" if o else "")
        print(f"| {setting} | {kern} {mode} | {op} | " + " | ".join(row) + " | " +
              " | ".join(rng((kern, setting, mode, op), k) for k in KEYS) + " |")

# 2. The grid: one row per setting and op, the centres of boot 1 / boot 2 per kernel and mode.
cols = [("stock", "off")] + [("patched", m) for m in MODES]
print()
print("Instructions per written page, Hodges–Lehmann centre of each boot's repetitions (boot 1 / boot 2):")
print()
print("| setting | op | stock | patched off | fixed16 | adaptive | reuse16 |")
print("|---|---|---|---|---|---|---|")
for setting, op in sorted({(s, o) for s, _, o in per_op}, key=lambda k: (SETTINGS.index(k[0]), OPS.index(k[1]))):
    row = []
    for kern, mode in cols:
        c = [cells.get((f"{setting} {mode} {op}", b)) for b in boots if b.startswith(kern)]
        row.append(" / ".join(f"{o['centre']:,.1f}" for o in c if o) or "–")
    print(f"| {setting} | {op} | " + " | ".join(row) + " |")

# 3. Changes, boot by boot: patched-N's modes against stock-N and against patched-N's off.
groups = {}
for (setting, mode, op), d in per_op.items():
    for b, v in d.items():
        kern, n = b.split("-", 1)
        groups[(f"{setting} {op} boot {n}", "stock" if kern == "stock" else mode)] = v
vs_stock = estimate.estimate(groups, baseline="stock")
vs_off = estimate.estimate({k: v for k, v in groups.items() if k[1] != "stock"}, baseline="off")
ns = sorted({s.rsplit(" ", 1)[1] for s, _ in groups})
lv = {o["change_ci_level"] for o in list(vs_stock.values()) + list(vs_off.values()) if "change_ci_level" in o}
print()
print("Instructions per written page, each patched mode against stock and against patched off of the same "
      "boot number: Hodges–Lehmann ratio as a % change [exact interval at " +
      ", ".join(estimate.pct(x) for x in sorted(lv)) + "]:")
print()
print("| setting | op | mode | " + " | ".join(f"vs stock, boot {n}" for n in ns) + " | " +
      " | ".join(f"vs off, boot {n}" for n in ns) + " |")
print("|" + "---|" * (3 + 2 * len(ns)))
for setting, op in sorted({(s, o) for s, _, o in per_op}, key=lambda k: (SETTINGS.index(k[0]), OPS.index(k[1]))):
    for mode in MODES:
        a = [estimate.change(vs_stock.get((f"{setting} {op} boot {n}", mode), {})) or "–" for n in ns]
        b = [estimate.change(vs_off.get((f"{setting} {op} boot {n}", mode), {})) or "–" for n in ns]
        print(f"| {setting} | {op} | {mode} | " + " | ".join(a + b) + " |")

# 4. Large folios against order-0 memory: each setting against order0 of the same kernel, mode, op and boot.
groups = {(f"{op} {b.split('-')[0]} {mode} boot {b.split('-', 1)[1]}", setting): v
          for (setting, mode, op), d in per_op.items() for b, v in d.items()}
vs_order0 = estimate.estimate(groups, baseline="order0")
lv = {o["change_ci_level"] for o in vs_order0.values() if "change_ci_level" in o}
print()
print("Instructions per written page, each large-folio setting against order0 of the same kernel, mode, op and "
      "boot: Hodges–Lehmann ratio as a % change [exact interval at " + ", ".join(estimate.pct(x) for x in sorted(lv)) + "]:")
print()
print("| setting | op | kernel, mode | " + " | ".join(f"vs order0, boot {n}" for n in ns) + " |")
print("|" + "---|" * (3 + len(ns)))
for setting in SETTINGS[:2]:
    for op in OPS:
        for kern, mode in cols:
            c = [estimate.change(vs_order0.get((f"{op} {kern} {mode} boot {n}", setting), {})) or "–" for n in ns]
            print(f"| {setting} | {op} | {kern} {mode} | " + " | ".join(c) + " |")

#!/usr/bin/env python3
"""Table of large-folio-cost.sh outputs: per setting, mode and op, the median instructions per
page of each boot and the per-repetition counts (a single value when every repetition gave it,
else min..max).  usage: summarize.py FILE..."""
import re, statistics, sys
from collections import defaultdict

KEYS = ["traps", "cow_fault", "cow_precopy", "precopy_skip_large", "cow_reuse_around",
        "cow_reuse_around_pages", "thp_fault_alloc", "thp_split_pmd", "mthp_64kB_anon_fault_alloc",
        "mthp_64kB_filled_folios", "mthp_64kB_split_deferred", "anon_huge_kb"]
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
            counts[(kern, setting, mode, kv["op"])][k].append(int(kv.get(k, "-1")))

def rng(v):
    v = [x for x in v if x >= 0]
    if not v:
        return "–"
    return str(v[0]) if min(v) == max(v) else f"{min(v)}..{max(v)}"

boots = sorted({b for d in per_op.values() for b in d})
print("| setting | kernel, mode | op | " + " | ".join(f"{b} median [min, max]" for b in boots if True) + " | " + " | ".join(KEYS) + " |")
print("|" + "---|" * (3 + len(boots) + len(KEYS)))
for (setting, mode, op) in sorted(per_op, key=lambda k: (["always", "mthp64", "order0"].index(k[0]),
                                   ["off", "fixed16", "adaptive", "reuse16"].index(k[1]), k[2])):
    for kern in ("stock", "patched"):
        bs = [b for b in boots if b.startswith(kern)]
        if not any(b in per_op[(setting, mode, op)] for b in bs):
            continue
        cells = []
        for b in boots:
            v = per_op[(setting, mode, op)].get(b) if b.startswith(kern) else None
            cells.append(f"{statistics.median(v):,.1f} [{min(v):,.0f}, {max(v):,.0f}]" if v else "")
        c = counts[(kern, setting, mode, op)]
        print(f"| {setting} | {kern} {mode} | {op} | " + " | ".join(cells) + " | " +
              " | ".join(rng(c[k]) for k in KEYS) + " |")

"""The statistics of the kernel evidence scripts, from cowbench itself (docs/reference.md, "Statistics").

No script under kernel/ computes a centre, spread, interval or change of its own: they hand their
numbers to `cowbench estimate` (Hodges-Lehmann centre and ratio with exact intervals, Mann-Whitney
p, Benjamini-Hochberg over the call) and read its JSON back.  The values travel as CSV on the
program's standard input, never on a command line or through a shell.
"""
import csv
import io
import json
import os
import shutil
import subprocess

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def cowbench():
    """$COWBENCH, the repository's build/cli/cowbench, or the PATH's cowbench."""
    for c in (os.environ.get("COWBENCH"), os.path.join(REPO, "build", "cli", "cowbench")):
        if c and os.access(c, os.X_OK):
            return c
    found = shutil.which("cowbench")
    if not found:
        raise SystemExit("estimate: no cowbench program (build it, or set COWBENCH)")
    return found


def estimate(groups, baseline=None):
    """groups: {(set, group): [values]} -> {(set, group): cowbench estimate's JSON object}
    (n, centre, ci_lo, ci_hi, ci_level; with `baseline`, the other groups of a set that has it
    also ratio or difference, *_ci_lo, *_ci_hi, change_ci_level, p, p_adj, verdict)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["set", "group", "value"])
    for (s, g), vals in groups.items():
        for v in vals:
            w.writerow([s, g, repr(float(v))])
    if buf.tell() == len("set,group,value\n"):
        return {}
    cmd = [cowbench(), "estimate", "--format=json"] + (["--baseline=" + baseline] if baseline else [])
    try:
        out = subprocess.run(cmd, input=buf.getvalue(), capture_output=True, text=True, check=True).stdout
    except subprocess.CalledProcessError as e:
        raise SystemExit("estimate: cowbench estimate failed: " + e.stderr.strip())
    return {(o["set"], o["group"]): o for o in map(json.loads, out.splitlines())}


def pct(level):
    """An interval's level as the engine reported it: 0.75 -> '75 %', 0.9375 -> '93.75 %'."""
    return f"{100 * level:.4g} %"


def change(o, digits=1):
    """A comparison as a % change with its interval ('-41.2 % [-42.0, -40.3]'), or a difference
    where the engine gave one (a value <= 0); None without a comparison."""
    if "ratio" in o:
        c, lo, hi = (100 * (o[k] - 1) for k in ("ratio", "ratio_ci_lo", "ratio_ci_hi"))
        return f"{c:+.{digits}f} % [{lo:+.{digits}f}, {hi:+.{digits}f}]"
    if "difference" in o:
        return f"{o['difference']:+,.0f} [{o['difference_ci_lo']:+,.0f}, {o['difference_ci_hi']:+,.0f}]"
    return None

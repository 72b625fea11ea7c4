"""The statistics of the analysis scripts, from cowbench itself (docs/reference.md, "Statistics").

No script under analysis/ computes an interval, a t quantile or a bootstrap: they hand
their numbers to `cowbench estimate` (the library's engine: Hodges-Lehmann centre and ratio with
exact intervals, Mann-Whitney p, Benjamini-Hochberg over the output) and read its JSON back.
The values travel as CSV data on a pipe, never on a command line or through a shell.
"""
import csv
import io
import json
import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def find_cowbench(given=None):
    """The cowbench program: `given`, $COWBENCH, the repository's build/cli/cowbench, or the PATH's."""
    for c in (given, os.environ.get("COWBENCH"), os.path.join(HERE, "..", "build", "cli", "cowbench")):
        if c and os.access(c, os.X_OK):
            return c
    found = shutil.which("cowbench")
    if not found:
        raise SystemExit("cbstats: no cowbench program (build it, or set COWBENCH)")
    return found


def estimate(groups, baseline=None, cowbench=None):
    """groups: {(set, group): [values]} -> {(set, group): cowbench estimate's JSON object}.

    Each object has n, centre, ci_lo, ci_hi, ci_level; with `baseline` (a group name), the other
    groups of a set also ratio (or difference), *_ci_lo, *_ci_hi, change_ci_level, p, p_adj,
    verdict and ratio_text, judged over every comparison of the call."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["set", "group", "value"])
    rows = 0
    for (s, g), vals in groups.items():
        for v in vals:
            if v is not None:
                w.writerow([s, g, repr(float(v))])
                rows += 1
    if rows == 0:
        return {}
    cmd = [find_cowbench(cowbench), "estimate", "--format=json"]
    if baseline is not None:
        cmd.append("--baseline=" + baseline)
    out = subprocess.run(cmd, input=buf.getvalue(), capture_output=True, text=True, check=True).stdout
    result = {}
    for line in out.splitlines():
        o = json.loads(line)
        result[(o["set"], o["group"])] = o
    return result


def interval(o, key="centre"):
    """(value, lo, hi) of an estimate's centre, ratio or difference; lo, hi None without an interval."""
    lo, hi = ("ci_lo", "ci_hi") if key == "centre" else (key + "_ci_lo", key + "_ci_hi")
    return o.get(key), o.get(lo), o.get(hi)


def centre(values, cowbench=None):
    """(centre, lo, hi) of one sample from cowbench estimate; lo, hi None with one value; None without any."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return interval(estimate({("", "x"): vals}, cowbench=cowbench)[("", "x")])

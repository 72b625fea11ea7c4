#!/usr/bin/env python3
"""The main job's report.md from its sections, in a fixed order, on stdout.

usage: analysis/compose-report.py OUTDIR

The report opens with what judges the kernel patch (issue 30): first the Redis result per mode
(redis.md, analysis/redis/redis-report.py; its figures in redis.csv), then the native projection of the
study (projection.md, analysis/projection_report.py; its rows in projection.csv). The TCG study
table (study.md), the host's headline ratios (ratios.md) and the host plots' report (report.md of
`cowbench plot`) follow. A section file that is missing is left out; the two opening sections are
required (the main job writes a "Not run here" section when it skips them), so a report can never
open with anything else. Files are read as text and copied; nothing in them is run.
"""
import os
import sys

OPENING = ["redis.md", "projection.md"]
REST = ["study.md", "ratios.md", "report.md"]


def compose(outdir):
    parts = []
    for name in OPENING:
        path = os.path.join(outdir, name)
        if not os.path.exists(path):
            raise SystemExit(f"compose-report: {path} is missing (the report opens with it)")
        parts.append(path)
    parts += [os.path.join(outdir, n) for n in REST if os.path.exists(os.path.join(outdir, n))]
    text = []
    for path in parts:
        with open(path, encoding="utf-8", errors="replace") as f:
            body = f.read()
        text.append(body if body.endswith("\n") else body + "\n")
    return "".join(text)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: analysis/compose-report.py OUTDIR")
    sys.stdout.write(compose(sys.argv[1]))

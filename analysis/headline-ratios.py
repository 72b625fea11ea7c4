#!/usr/bin/env python3
"""report.md's headline ratios (the main job's ratios.md), from summarize's JSON on stdin.

usage: cowbench summarize --quiet --metric=elapsed_ns --baseline fork=0 --format=json R.csv |
           analysis/headline-ratios.py

Every number and its text is summarize's own, read by field name; nothing is computed here. No
ratio in the input: no output. tests/docs-samples.py runs it on a fixture for README's sample.
A cell's key is data (a CSV's text): it reaches the Markdown escaped (report_io.md, the rule of
cowbench's own report.md), as plain text, never a code span its backquotes could end.
"""
import json
import sys

from report_io import md

rows = [json.loads(line) for line in sys.stdin if line.strip()]
rows = [r for r in rows if r.get("ratio_text")]
if rows:
    print("## What COW costs: the headline ratios\n")
    print("Each fork cell's `elapsed_ns` (the time its writes took) over its `fork=0` twin's: the")
    print("Hodges-Lehmann ratio with its exact interval, Mann-Whitney p adjusted over the ratios")
    print("(`cowbench summarize --metric=elapsed_ns --baseline fork=0`; docs/reference.md, Statistics);")
    print("`summary.txt` has the same for the per-write p50.\n")
    print("| cell | ratio [CI] | CI level | p (adj) | verdict |\n|---|---:|---:|---:|---|")
    for r in rows:
        print("| %s | %s | %.1f %% | %.3g | %s |" % (md(r["cell"]), r["ratio_text"], 100 * r["change_ci_level"],
                                                  r["p_adj"], r["verdict"]))

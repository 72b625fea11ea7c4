#!/usr/bin/env python3
"""check_rows.py FILE N_CELLS REPS: per (cell, rep) of the plan, exactly one ok row?
Prints: ok_pairs missing dup_ok err_rows total_rows bad_notes, one line."""
import csv, sys, collections
f, ncells, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    rows = list(csv.DictReader(open(f, newline='', errors='replace')))
except FileNotFoundError:
    rows = []
ok = collections.Counter((r['cell'], r['rep']) for r in rows if r['status'] == 'ok' and r.get('rep_kind', 'timed') != 'evidence')
ev = collections.Counter((r['cell'], r['rep']) for r in rows if r['status'] == 'ok' and r.get('rep_kind') == 'evidence')
cells = {r['cell'] for r in rows}
err = sum(1 for r in rows if r['status'] != 'ok')
dup = sum(v - 1 for v in ok.values() if v > 1) + sum(v - 1 for v in ev.values() if v > 1)
missing = ncells * reps - len(ok)
notes = sum(1 for r in rows if 'guest-stream:skipped' in (r.get('evidence_notes') or ''))
print(len(ok), missing, dup, err, len(rows), len(cells), notes)

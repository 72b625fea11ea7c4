#!/usr/bin/env bash
# Issue 29 item 6: duplicate rows (the same measurement twice) must never count as data in
# summarize or compare: refused (exit 2) or de-duplicated (n as without the copy).
ITEM=6; . "$(dirname "$0")/lib.sh"
cd "$W"
"$CB" run -w seq -s 256K -r 3 --warmup 0 -q -o r.csv
"$CB" matrix -w seq -s 256K --fork=1,0 -r 4 --warmup 0 -q -o pr.csv 2>/dev/null
"$CB" run -w seq -s 256K -r 3 --warmup 0 -q -o r2.csv   # another measurement of the same cell
# spellings of a copy of r.csv's rows (python: every field re-spelled, same values)
python3 - <<'PY'
import csv
rows = list(csv.reader(open('r.csv', newline='')))
hdr, data = rows[0], rows[1:]
def out(name, extra, lt='\n', quote=csv.QUOTE_MINIMAL):
    with open(name, 'w', newline='') as f:
        w = csv.writer(f, lineterminator=lt, quoting=quote); w.writerow(hdr); w.writerows(data + extra)
out('dup_rows.csv', data)                               # the file's rows twice
out('dup_one.csv', data[:1])                            # one row twice
out('dup_crlf.csv', data, '\r\n')                       # CRLF
out('dup_quoted.csv', data, quote=csv.QUOTE_ALL)        # every field quoted
def respell(r, f):
    r = list(r)
    for i, h in enumerate(hdr):
        v = r[i]
        if v and f == 'zeros' and v.isdigit() and h not in ('schema',): r[i] = '0' + v
        if v and f == 'plus' and v.isdigit() and h not in ('schema',): r[i] = '+' + v
        if v and f == 'float' and v.isdigit() and h in ('elapsed_ns', 'faults'): r[i] = v + '.0'
        if v and f == 'exp' and v.isdigit() and h == 'elapsed_ns': r[i] = f'{int(v):e}'
        if f == 'space' and h == 'workload': r[i] = ' ' + v
        if f == 'case' and h == 'status': r[i] = v.upper()
    return r
for f in ('zeros', 'plus', 'float', 'exp', 'space', 'case'):
    out(f'dup_{f}.csv', [respell(r, f) for r in data])
    with open(f'copy_{f}.csv', 'w', newline='') as o:
        w = csv.writer(o, lineterminator='\n'); w.writerow(hdr); w.writerows(respell(r, f) for r in data)
PY
cp r.csv copy.csv; ln -sf r.csv sym.csv; ln -f r.csv hard.csv
(cat r.csv; cat r.csv) > cat_hdr.csv; (cat r.csv; tail -n +2 r.csv) > cat_rows.csv
(cat pr.csv; tail -n +2 pr.csv) > pr_cat.csv
# n of elapsed_ns per cell in summarize -f csv; a duplicate must not raise it past the real count
nsum() { python3 -c "
import csv,sys,io
r=[x for x in csv.DictReader(io.StringIO(sys.stdin.read())) if x['metric']=='elapsed_ns']
print(max([int(x['n']) for x in r] or [0]))"; }
# summarize: (files, real n)
while read -r line; do
	realn=${line##* } files=${line% *}
	try "0 2" "summarize $files" "$CB" summarize -q -f csv $files
	if [ $RC = 0 ]; then
		n=$(echo "$OUT" | nsum)
		[ "$n" -le "$realn" ] || bump N_DUP DUP "summarize $files: n=$n, the measurements are $realn"
	fi
done <<'L'
r.csv r.csv 3
r.csv copy.csv 3
r.csv sym.csv 3
r.csv hard.csv 3
r.csv ./r.csv 3
r.csv r.csv r.csv 3
cat_hdr.csv 3
cat_rows.csv 3
dup_rows.csv 3
dup_one.csv 3
dup_crlf.csv 3
dup_quoted.csv 3
dup_zeros.csv 3
dup_plus.csv 3
dup_float.csv 3
dup_exp.csv 3
dup_space.csv 3
dup_case.csv 3
r.csv copy_zeros.csv 3
r.csv copy_plus.csv 3
r.csv copy_float.csv 3
r.csv copy_exp.csv 3
r.csv copy_quoted.csv 3
r.csv dup_crlf.csv 3
pr.csv pr.csv 4
pr_cat.csv 4
r.csv r2.csv 6
L
# compare --by: duplicate rows must not double n (pairs: 4 per side)
ncmp() { python3 -c "
import csv,sys,io
r=[x for x in csv.DictReader(io.StringIO(sys.stdin.read())) if x['metric']=='elapsed_ns']
print(max([max(int(x['n_old'] or 0),int(x['n_new'] or 0)) for x in r] or [0]))"; }
for files in "pr.csv pr.csv" "pr_cat.csv" "pr.csv pr_cat.csv" "pr.csv ./pr.csv"; do
	try "0 2" "compare --by=fork $files" "$CB" compare -q -f csv --by=fork $files
	if [ $RC = 0 ]; then n=$(echo "$OUT" | ncmp); [ "$n" -le 4 ] || bump N_DUP DUP "compare --by=fork $files: n=$n, the measurements are 4"; fi
done
# compare two files: a side with a duplicate
for pair in "cat_rows.csv r2.csv" "r2.csv dup_rows.csv" "dup_zeros.csv r2.csv" "dup_crlf.csv r2.csv" "r2.csv dup_quoted.csv" "dup_float.csv r2.csv" "r.csv copy.csv" "r.csv r.csv"; do
	try "0 2" "compare $pair" "$CB" compare -q -f csv $pair
	if [ $RC = 0 ]; then n=$(echo "$OUT" | ncmp); [ "$n" -le 3 ] || bump N_DUP DUP "compare $pair: n=$n, the measurements are 3 a side"; fi
done
report

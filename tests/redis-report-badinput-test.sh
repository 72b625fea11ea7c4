#!/usr/bin/env bash
# analysis/redis/redis-report.py validates like cowbench's readers (issue 39): each damaged input below is
# exit 2 with one line on stderr (no traceback) and no output written; a symbolic link where an
# output goes is refused, its target untouched; env.txt's values reach redis.md escaped.
# usage: tests/redis-report-badinput-test.sh REPO COWBENCH
set -uo pipefail
REPO=$1
COWBENCH=$2
export COWBENCH # analysis/cbstats.py: the report's statistics come from this cowbench
FIX=$REPO/tests/fixtures/report
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
W=$(mktemp -d /tmp/cbtest-redisreport.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
fresh() { rm -rf "$W/o"; mkdir -p "$W/o"; cp -r "$FIX/redis-stock" "$FIX/redis-patched" "$W/o/"; }
S=$W/o/redis-patched/saves.csv
# each case: a description, then shell that damages the copy in $W/o
while IFS='|' read -r what damage; do
	[[ -z $what ]] && continue
	fresh
	eval "$damage"
	python3 "$REPO/analysis/redis/redis-report.py" "$W/o" >"$W/out" 2>"$W/err"
	rc=$?
	made=$(find "$W/o" -maxdepth 2 -type f \( -name 'redis*.csv' -o -name 'redis.md' -o -name 'redis_save.*' \) | wc -l)
	if [[ $rc -ne 2 || $(wc -l <"$W/err") -ne 1 ]] || grep -q Traceback "$W/err" || [[ $made -ne 0 ]]; then
		echo "FAIL: $what: exit $rc, $made outputs, stderr: $(head -c 300 "$W/err")"
		fail=1
	else
		echo "ok: $what: $(cat "$W/err")"
	fi
done <<'TABLE'
an empty cell that must be a number|sed -i '2s/^\([^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*\),[0-9]*/\1,/' "$S"
a missing column|cut -d, -f1-11,13- "$S" >"$S.x" && mv "$S.x" "$S"
a UTF-8 byte-order mark|printf '\357\273\277' | cat - "$S" >"$S.x" && mv "$S.x" "$S"
a cut last row|head -c -40 "$S" >"$S.x" && mv "$S.x" "$S"
a row with a field more|sed -i '2s/$/,1/' "$S"
a byte that is not UTF-8|sed -i '2s/^off,/of\xff,/' "$S"
inf in a count|sed -i '2s/^\(\([^,]*,\)\{19\}\)[0-9]*/\1inf/' "$S"
1e308 in a count|sed -i '2s/^\(\([^,]*,\)\{19\}\)[0-9]*/\11e308/' "$S"
text in the last column|sed -i '2s/,[0-9]*$/,lots/' "$S"
a negative latency|sed -i '2s/^\(\([^,]*,\)\{27\}\)[0-9]*/\1-5/' "$S"
a label that is no name|sed -i '2s/^[^,]*,/a|<b>x,/' "$S"
an unknown pattern|sed -i '2s/^\([^,]*\),[^,]*,/\1,zigzag,/' "$S"
a header only with a column twice|printf 'label,label\n' >"$S"
an empty saves.csv|: >"$S"
a bad gzip file of requests|printf 'not gzip at all\n' >"$W/o/redis-patched/requests.csv.gz"
a cut gzip file of requests|printf 'label,pattern,round,t_ns,lat_ns\noff,random,0,1,2\n' | gzip | head -c 20 >"$W/o/redis-patched/requests.csv.gz"
nan requests/s in bench.csv|sed -i '2s/,[0-9.]*,/,nan,/' "$W/o/redis-patched/bench.csv"
a key count that is no number in env.txt|sed -i 's/^keys=[0-9]*/keys=lots/' "$W/o/redis-patched/env.txt"
env.txt a FIFO|rm "$W/o/redis-patched/env.txt" && mkfifo "$W/o/redis-patched/env.txt"
redis.md a link to a file|echo keep >"$W/victim" && ln -s "$W/victim" "$W/o/redis.md"
redis.csv a FIFO|mkfifo "$W/o/redis.csv"
TABLE
[[ $(cat "$W/victim") == keep ]] || { echo "FAIL: the link's target was written"; fail=1; }
# escaping: what env.txt says reaches redis.md as text
fresh
sed -i 's/^kernel=.*/kernel=<img\/src=x\/onerror=alert(1)>|`x`/' "$W/o/redis-patched/env.txt"
if python3 "$REPO/analysis/redis/redis-report.py" "$W/o" 2>"$W/err" && grep -qF '\<img/src=x/onerror=alert(1)\>\|\`x\`' "$W/o/redis.md" &&
	! grep -q '[^\\]<img' "$W/o/redis.md"; then
	echo "ok: env.txt's kernel escaped in redis.md"
else
	echo "FAIL: env.txt's kernel not escaped: $(grep -m1 img "$W/o/redis.md") $(head -3 "$W/err")"
	fail=1
fi
python3 "$REPO/analysis/redis/redis-report.py" >"$W/out" 2>"$W/err"
rc=$?
if [[ $rc -ne 2 || $(wc -l <"$W/err") -ne 1 ]]; then echo "FAIL: no OUTDIR: exit $rc"; fail=1; else echo "ok: no OUTDIR"; fi
exit $fail

#!/usr/bin/env bash
# Issue 39 item 6 and the readers: report.md and redis.md show text from data as text; summarize,
# compare and plot refuse negative counts and times as they refuse nan and inf; redis-report.py
# validates like them (exit 2, one line, no traceback) on every damaged input generated here:
# each numeric column of saves.csv emptied, set to inf, 1e308, -1 or text; cuts at many offsets;
# a BOM; bad gzip. Counts tracebacks, wrong exits and unescaped tags or table breaks.
ITEM=39.6; . "$(dirname "$0")/lib.sh"
cd "$W"
FIX=$ROOT/tests/fixtures/report
H=schema,workload,size_bytes,fork,rep,status
for col in elapsed_ns faults cow_copies ns_per_page lat_p50_ns wpcopy_count fork_ns copy_ns; do
	for v in -1 -5 -0.5 -9223372036854775807; do
		printf '%s,%s,cell\n1,seq,4096,1,1,ok,7,a\n1,seq,4096,1,2,ok,%s,a\n1,seq,4096,0,1,ok,5,a\n' "$H" "$col" "$v" > neg.csv
		try 2 "summarize $col=$v" "$CB" summarize neg.csv
		try 2 "compare $col=$v" "$CB" compare --by=fork neg.csv
		try 2 "plot $col=$v" "$CB" plot neg.csv --out p$RANDOM
	done
done
# report.md: cells, host and kernel with tags, table bars, backquotes and links
for text in '<img src=x onerror=alert(1)>' 'a|b|c' '`x`' '[l](javascript:alert(1))' '<script>alert(1)</script>' '&lt;b&gt;'; do
	q=${text//\"/\"\"}
	printf '%s,elapsed_ns,ns_per_page,host,kernel,cell\n1,seq,4096,1,1,ok,9,9.0,"%s","%s","%s"\n1,seq,4096,0,1,ok,8,8.0,"%s","%s","%s"\n' \
		"$H" "$q" "$q" "$q" "$q" "$q" "$q" > md.csv
	rm -rf pm
	try 0 "plot with '$text' in the rows" "$CB" plot md.csv --out pm
	[ -f pm/report.md ] || continue
	python3 - pm/report.md "$text" <<'PY' || bump N_OTHER ESCAPE "report.md shows '$text' as markup"
import sys
md, text = open(sys.argv[1]).read(), sys.argv[2]
esc = "".join("\\" + c if c in "\\`*_[]<>#|&~" else c for c in text)
sys.exit(0 if text not in md and esc in md else 1)  # never as written, always escaped
PY
done
# redis-report.py on damaged copies of the fixtures
n=0
fresh() { rm -rf o; mkdir o; cp -r "$FIX/redis-stock" "$FIX/redis-patched" o/; }
rr() { # DESC: run redis-report.py on o/, want exit 2 and one line, no traceback
	try 2 "$1" python3 "$ROOT/analysis/redis/redis-report.py" o
	grep -q Traceback <<<"$ERR" && bump N_CRASH TRACEBACK "$1: a traceback"
	[ "$RC" = 2 ] && [ "$(grep -c . <<<"$ERR")" -ne 1 ] && bump N_OTHER LINES "$1: not one line"
}
S=o/redis-patched/saves.csv
ncols=$(head -1 "$FIX/redis-patched/saves.csv" | tr ',' '\n' | wc -l)
for c in $(seq 1 "$ncols"); do
	name=$(head -1 "$FIX/redis-patched/saves.csv" | cut -d, -f$c)
	case $name in sysctls|save|conns|keys|value_size|server_pid|t_forked_ns|probe_*|cow_faults|precopy_judged*|private_clean*) continue ;; esac
	for v in "" inf 1e308 -1 abc; do
		[ -z "$v" ] && case $name in label|pattern|round|t_bgsave_ns|t_end_ns) ;; *) continue ;; esac
		[ "$name" = label ] && [ -n "$v" ] && continue # inf, 1e308, -1, abc: names all the same (below: what is not)
		fresh
		awk -F, -v OFS=, -v c="$c" -v v="$v" 'NR == 2 { $c = v } { print }' "$FIX/redis-patched/saves.csv" > "$S"
		rr "saves.csv $name='$v'"
	done
	fresh; cut -d, -f"$c" --complement "$FIX/redis-patched/saves.csv" > "$S"
	case $name in label|pattern|round|t_bgsave_ns|t_end_ns|latest_fork_usec|rdb_last_cow_size|current_cow_peak|parent_wpcopy|precopy_success|in_*|out_p*|out_max_ns)
		rr "saves.csv without $name" ;;
	esac
done
for v in 'a|b' '<b>' 'a b' "$(printf 'x%.0s' $(seq 80))"; do
	fresh; awk -F, -v OFS=, -v v="$v" 'NR == 2 { $1 = v } { print }' "$FIX/redis-patched/saves.csv" > "$S"
	rr "saves.csv label='${v:0:20}'"
done
size=$(wc -c < "$FIX/redis-patched/saves.csv")
for cut in 1 10 100 300 $((size / 2)) $((size - 2)); do
	fresh; head -c "$cut" "$FIX/redis-patched/saves.csv" > "$S"; rr "saves.csv cut at $cut bytes"
done
fresh; printf '\357\273\277' | cat - "$FIX/redis-patched/saves.csv" > "$S"; rr "saves.csv with a BOM"
fresh; printf 'garbage' > o/redis-patched/requests.csv.gz; rr "requests.csv.gz not gzip"
fresh; printf 'label,pattern,round,t_ns,lat_ns\noff,random,0,1,2\n' | gzip | head -c 25 > o/redis-patched/requests.csv.gz; rr "requests.csv.gz cut"
fresh; printf 'label,pattern,round,t_ns,lat_ns\noff,random,0,-1,2\n' | gzip > o/redis-patched/requests.csv.gz; rr "requests.csv.gz negative time"
fresh; printf 'label,set_rps\n' > o/redis-patched/bench.csv; rr "bench.csv without a column"
fresh; sed -i 's/^used_memory=.*/used_memory=-1/' o/redis-patched/env.txt; rr "env.txt used_memory=-1"
report

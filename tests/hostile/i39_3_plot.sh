#!/usr/bin/env bash
# Issue 39 item 3: plot --out DIR reads only what it wrote in this run. Gnuplot code planted in
# DIR/data under every plot name (and as cdf_/dist_/index_ names) must never run; an earlier run's
# plots are never re-rendered. Counts planted code that ran and plots not of this run.
ITEM=39.3; . "$(dirname "$0")/lib.sh"
cd "$W"
"$CB" matrix -w seq,random -s 64K,128K --fork=1,0 -r 2 --warmup 0 --probes=none -o rows.csv 2>/dev/null
names="cost fork precopy snapshot breakdown tradeoff cdf_seq cdf_planted dist_planted index_0 index_planted planted"
for variant in fresh earlier; do
	for n in $names; do
		rm -rf p ran; mkdir -p p/data
		[ $variant = earlier ] && { "$CB" plot rows.csv --out p >/dev/null 2>&1; cp p/cost.png p/old_plot.png; }
		printf 'system("touch %s/ran")\n' "$W" > "p/data/$n.gp"
		printf '"x"\n1 2\n' > "p/data/$n.dat"
		for f in png svg; do [ $variant = earlier ] && [ $n = planted ] && cp p/cost.$f "p/$n.$f"; done
		force=; [ $variant = earlier ] && force=--force # an earlier run's report is replaced only with --force
		try 0 "plot into $variant DIR with data/$n planted" "$CB" plot rows.csv --out p $force
		[ -e ran ] && bump N_OTHER RAN "$variant DIR, data/$n.gp: planted gnuplot code ran"
		grep -q planted <<<"$OUT" && bump N_OTHER REPLOT "$variant DIR: an earlier or planted plot was rendered again: $(grep planted <<<"$OUT" | head -1)"
		ls -a p | grep -q cowbench-plot && bump N_PARTIAL PARTIAL "$variant DIR, $n: private folder left"
	done
done
report

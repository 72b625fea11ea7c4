#!/usr/bin/env bash
# Issue 39 items 1 and 2 (outputs): record --output, stat --folded and plot --out against device
# nodes (a private mknod copy of /dev/null), FIFOs, links, directories, existing files without
# --force, the recorded program itself and 10,000-character names. Counts files replaced or
# written through, commands that ran although refused, and exit codes other than 2.
ITEM=39.1; . "$(dirname "$0")/lib.sh"
cd "$W"
mknod null c 1 3; mkfifo fifo; echo precious > victim; echo 'echo ran >> ran.log' > prog.sh; chmod +x prog.sh
ln -s victim link; ln -s nowhere/x dangling; mkdir dir
LONG=$(printf 'a%.0s' $(seq 10000))
snap() { { ls -l null fifo link dangling | awk '{print $1, $NF}'; md5sum victim prog.sh; } > "$W/.snap"; }
changed() { ! diff -q "$W/.snap" <({ ls -l null fifo link dangling | awk '{print $1, $NF}'; md5sum victim prog.sh; }) >/dev/null; }
snap
have_record=1
"$CB" record --output="$W/probe.trace" -- true >/dev/null 2>&1 || have_record=0
rm -f probe.trace
# never a real system path (a real /dev/null would be replaced by an unfixed build): the mknod copy
# `null` is the device node
for out in null fifo link victim dir dangling "$LONG" prog.sh "dir/" ""; do
	for force in "" --force; do
		[ "$out" = link ] && [ -n "$force" ] && continue # --force through a link writes its target: by design
		[ "$out" = victim ] && [ -n "$force" ] && continue
		rm -f ran.log
		try 2 "record --output=${out:0:20} $force" "$CB" record $force --output="$out" -- ./prog.sh
		[ -e ran.log ] && bump N_OTHER RAN "record --output=${out:0:20} $force: the command ran although refused"
		rm -f ran.log
		try 2 "stat --folded=${out:0:20} $force" "$CB" stat --where=code $force --folded="$out" -- ./prog.sh
		[ -e ran.log ] && bump N_OTHER RAN "stat --folded=${out:0:20} $force: the command ran although refused"
		changed && { bump N_WRITE_INPUT REPLACED "${out:0:20} $force: a node, link or file changed"; snap; }
	done
done
# the recorded program's own script, even with --force
try 2 "record --force --output=prog.sh -- ./prog.sh" "$CB" record --force --output=prog.sh -- ./prog.sh
changed && { bump N_WRITE_INPUT REPLACED "record over its own program"; snap; }
# a link to a file: its target is written (with --force), the link stays a link
if [ $have_record = 1 ]; then
	try 0 "record --force --output=link" "$CB" record --force --output=link -- true
	[ -L link ] || bump N_OTHER LINK "record replaced the link itself"
	head -1 victim | grep -q cowbench-trace || bump N_OTHER LINK "record did not write the link's target"
	echo precious > victim; snap
else
	echo "note: record cannot run here (tracepoint or root): its success paths not tried"
fi
# plot --out: links, FIFOs and devices where plot writes; an earlier report without --force
"$CB" run -w seq -s 64K -r 2 --warmup 0 -o rows.csv 2>/dev/null
"$CB" run -w seq -s 64K -r 2 --warmup 0 --no-fork -o rows0.csv 2>/dev/null
"$CB" merge rows.csv rows0.csv -o all.csv 2>/dev/null
for kind in link fifo null dir; do
	rm -rf p; mkdir -p p/data
	case $kind in
	link) ln -s ../victim p/cost.png ;;
	fifo) mkfifo p/data/cost.dat ;;
	null) mknod p/cost.svg c 1 3 ;;
	dir) mkdir p/report.md ;;
	esac
	try 2 "plot --out with a $kind planted" "$CB" plot all.csv --out p --force
	changed && { bump N_WRITE_INPUT REPLACED "plot with a $kind: victim changed"; snap; }
	ls -a p | grep -q cowbench-plot && bump N_PARTIAL PARTIAL "plot with a $kind left its private folder"
done
rm -rf p
try 0 "plot --out new" "$CB" plot all.csv --out p
try 2 "plot --out again without --force" "$CB" plot all.csv --out p
try 0 "plot --out again with --force" "$CB" plot all.csv --out p --force
report

#!/usr/bin/env bash
# Issue 29 item 1: no command may write to one of its inputs, whatever the spelling, order or link.
ITEM=1; . "$(dirname "$0")/lib.sh"
cd "$W"
"$CB" run -w seq -s 64K -r 3 --warmup 0 -o base.csv 2>/dev/null
"$CB" matrix -w seq -s 64K --fork=1,0 -r 2 --warmup 0 -o pr.csv 2>/dev/null
cp "$ROOT/analysis/traces/cpython-refcount.trace" t.trace
printf '[matrix]\nreps = 1\nwarmup = 0\n[g]\nworkload = seq\nsize = 64K\n' > m.ini
cp m.ini m.orig; cp pr.csv pr.orig
mkdir -p sub plotdir/data
victims="base.csv pr.csv t.trace m.ini"
snap() { for v in $victims old.csv new.csv; do [ -e "$v" ] && md5sum "$v"; done > "$W/.snap" 2>/dev/null; }
fresh() { cp base.csv old.csv; cp base.csv new.csv; cp "$ROOT/analysis/traces/cpython-refcount.trace" t.trace; cp m.orig m.ini; cp pr.orig pr.csv; rm -f prev.csv out.csv sub/*; snap; }
# chk DESC CMD...: the inputs must be byte-identical afterwards, whatever the exit status; rc 2 when refused
chk() {
	local desc=$1; shift
	fresh
	try "${WANT:-any}" "$desc" "$@"
	if ! md5sum -c --quiet "$W/.snap" >/dev/null 2>&1; then
		bump N_WRITE_INPUT WRITE_INPUT "$desc: an input changed (rc=$RC)"
	fi
}
# Spellings of old.csv as an output
spell=(old.csv ./old.csv "$W/old.csv" sub/../old.csv .//old.csv link.csv hard.csv "$W/sub/../old.csv")
lnk() { ln -sf old.csv link.csv; ln -f old.csv hard.csv 2>/dev/null; }
for s in "${spell[@]}"; do
	for force in "" --force; do
		for form in "-o S" "-oS" "--output S" "--output=S"; do
			f=${form//S/$s}
			lnk
			WANT=2 chk "compare old new $force $f" "$CB" compare old.csv new.csv $force $f
			lnk
			WANT=2 chk "compare --by=fork $force $f first" "$CB" compare --by=fork $f $force old.csv pr.csv
			lnk
			WANT=2 chk "summarize $force old $f" "$CB" summarize $force old.csv $f
			lnk
			WANT=2 chk "merge $force old new $f" "$CB" merge $force new.csv old.csv $f
		done
	done
done
# The orderings of the original report: the output is a new file, the inputs must stay and rc 0
WANT=0 chk "compare --by=fork old new -o prev" "$CB" compare --by=fork old.csv pr.csv -o prev.csv
[ -s prev.csv ] || bump N_OTHER OUTPUT "compare --by=fork old new -o prev: no prev.csv"
WANT=0 chk "summarize --force old -o prev" "$CB" summarize --force old.csv -o prev.csv
WANT=0 chk "compare -o prev old new" "$CB" compare -o prev.csv old.csv new.csv
WANT=0 chk "compare old -o prev new" "$CB" compare old.csv -o prev.csv new.csv
WANT=0 chk "summarize -q old -o prev -f csv" "$CB" summarize -q old.csv -o prev.csv -f csv
# --output=EXISTING without --force must be refused everywhere
for cmd in "compare old.csv new.csv" "summarize old.csv" "merge old.csv" "compare --by=fork pr.csv" "project pr.csv"; do
	fresh; echo keep > prev.csv; md5sum prev.csv >> "$W/.snap"
	try 2 "$cmd --output=EXISTING" "$CB" $cmd --output=prev.csv
	md5sum -c --quiet "$W/.snap" >/dev/null 2>&1 || bump N_WRITE_INPUT WRITE_INPUT "$cmd --output=EXISTING replaced it"
done
# project: the study and --native
for s in pr.csv ./pr.csv link2.csv; do ln -sf pr.csv link2.csv
	WANT=2 chk "project pr -o $s --force" "$CB" project pr.csv -o "$s" --force
	WANT=2 chk "project --native=pr base -o $s --force" "$CB" project base.csv --native=pr.csv -o "$s" --force
done
# matrix: its file, --resume, --plan, --trace
WANT=2 chk "matrix m.ini -o m.ini --force" "$CB" matrix m.ini -o m.ini --force
WANT=2 chk "matrix -o m.ini --force m.ini" "$CB" matrix -o m.ini --force m.ini
WANT=2 chk "matrix --resume=m.ini m.ini" "$CB" matrix --resume=m.ini m.ini
ln -sf m.ini mlink.ini
WANT=2 chk "matrix --resume=mlink m.ini" "$CB" matrix --resume=mlink.ini m.ini
WANT=2 chk "matrix --resume=pr -o ./pr" "$CB" matrix -w seq -s 64K --fork=1,0 -r 2 --warmup 0 --resume=pr.csv -o ./pr.csv
for s in t.trace ./t.trace tlink; do ln -sf t.trace tlink
	WANT=2 chk "matrix replay --trace=t -o $s --force" "$CB" matrix -w replay --trace=t.trace -r 1 --warmup 0 -o "$s" --force
	WANT=2 chk "matrix replay --trace=t --resume=$s" "$CB" matrix -w replay --trace=t.trace -r 1 --warmup 0 --resume="$s"
	WANT=2 chk "run replay --trace=t -o $s --force" "$CB" run -w replay --trace=t.trace -r 1 --warmup 0 -o "$s" --force
	WANT=2 chk "run replay -o $s --force --trace=t" "$CB" run -w replay -r 1 --warmup 0 -o "$s" --force --trace=t.trace
done
WANT=2 chk "run --samples=X -o X" "$CB" run -w seq -s 64K -r 1 --samples=out.csv -o out.csv
WANT=2 chk "run --samples=t.trace(other input) replay" "$CB" run -w replay --trace=t.trace -r 1 --samples=t.trace
WANT=2 chk "run seq --samples=base.csv" "$CB" run -w seq -s 64K -r 1 --samples=base.csv
WANT=2 chk "run seq --samples=out -o ./out" "$CB" run -w seq -s 64K -r 1 --samples=out.csv -o ./out.csv
# plot: inputs inside the output directory
cp base.csv plotdir/report.md 2>/dev/null; cp base.csv plotdir/data/cost.dat; cp base.csv plotdir/cost.png
victims="$victims plotdir/report.md plotdir/data/cost.dat plotdir/cost.png"
WANT=2 chk "plot report.md --out plotdir" "$CB" plot plotdir/report.md --out plotdir
WANT=2 chk "plot data/cost.dat --out plotdir" "$CB" plot plotdir/data/cost.dat --out plotdir
WANT=2 chk "plot cost.png -o plotdir/" "$CB" plot plotdir/cost.png -o plotdir/
WANT=2 chk "plot base --samples=plotdir/data/cost.dat" "$CB" plot base.csv --samples=plotdir/data/cost.dat --out plotdir
WANT=2 chk "plot base --samples=plotdir/report.md" "$CB" plot base.csv --samples=plotdir/report.md -o ./plotdir
# stat --folded at an input of the watched command is not cowbench's input; --folded at a named file
# System paths only through private links to them: a build that wrongly replaced its output would
# replace the link here, never the machine's /dev/stdout (a real /dev/null was lost that way once).
ln -sf /dev/stdout stdout.link; ln -sf /dev/fd/7 fd7.link; ln -sf /proc/self/fd/7 self-fd7.link
ln -sf "/proc/$$/fd/7" pid-fd7.link
WANT=2 chk "stat --folded=(link to /dev/stdout)" "$CB" stat --where=code --folded=stdout.link -- true
# /dev and /proc aliases of an input
exec 7<old.csv
WANT=2 chk "summarize -o (link to /dev/fd/7) --force" "$CB" summarize old.csv -o fd7.link --force
WANT=2 chk "merge -o (link to /proc/self/fd/7) --force" "$CB" merge old.csv -o self-fd7.link --force
WANT=2 chk "compare -o (link to /proc/$$/fd/7) --force" "$CB" compare old.csv new.csv -o pid-fd7.link --force
exec 7<&-
rm -f stdout.link fd7.link self-fd7.link pid-fd7.link
report

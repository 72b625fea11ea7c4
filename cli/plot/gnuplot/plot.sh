#!/bin/sh
# Render data files `cowbench plot` wrote under DIR/data/ into DIR/NAME.png and DIR/NAME.svg.
# usage: plot.sh DIR NAME...            the plots NAME (cowbench plot runs this with the names it made,
#                                       in a folder of its own: nothing else there is ever read)
#        plot.sh DIR                    every DIR/data/*.dat (by hand, on a folder you trust)
# Each DIR/data/NAME.dat comes with DIR/data/NAME.gp (titles, counts); NAME.gp here draws it
# (cdf_* share cdf.gp, dist_* dist.gp, index_* index.gp) after common.gp has set the terminal and the house style.
# Nothing but fixed file names and identifiers reaches gnuplot's command line: gnuplot runs in DIR
# (any name, quotes included) and NAME must be [A-Za-z0-9_]+, so no path or label is ever code.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 DIR [NAME...]" >&2; exit 2; }
dir=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
command -v gnuplot >/dev/null 2>&1 || { echo "plot.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }
cd -- "$dir"
found=0
[ $# -gt 0 ] || set -- $(for dat in data/*.dat; do [ -e "$dat" ] && basename "$dat" .dat; done)
for name in "$@"; do
	case $name in
	*[!A-Za-z0-9_]*) echo "plot.sh: skipping data/$name.dat: not a cowbench plot name" >&2; continue ;;
	cdf_*) script=cdf.gp ;;
	dist_*) script=dist.gp ;;
	index_*) script=index.gp ;;
	*) script=$name.gp ;;
	esac
	[ -f "data/$name.dat" ] || { echo "plot.sh: no data/$name.dat in $dir" >&2; exit 1; }
	[ -f "$here/$script" ] || { echo "plot.sh: no script for $name ($here/$script)" >&2; exit 1; }
	for term in png svg; do
		gnuplot -e "datafile='data/$name.dat'; metafile='data/$name.gp'; term='$term'; outfile='$name.$term'" \
			"$here/common.gp" "$here/$script"
		[ -s "$name.$term" ] || { echo "plot.sh: gnuplot wrote no $dir/$name.$term" >&2; exit 1; }
	done
	found=$((found + 1))
done
[ "$found" -gt 0 ] || { echo "plot.sh: nothing to plot in $dir/data" >&2; exit 1; }

# House style for every cowbench plot. Set by plot.sh: datafile, metafile, term (png|svg), outfile.
load metafile
if (term eq 'svg') {
	set terminal svg size 1100,650 dynamic noenhanced font 'Sans,12' background rgb 'white'
} else {
	set terminal pngcairo size 1100,650 noenhanced font 'Sans,11'
}
set output outfile
set datafile separator "\t"
set datafile missing "nan"
set border 3 lw 1.2
set tics nomirror
set grid ytics lc rgb '#dddddd' lw 1
set key opaque box lc rgb '#cccccc'
set linetype 1 lc rgb '#1f77b4' lw 2 pt 7
set linetype 2 lc rgb '#ff7f0e' lw 2 pt 5
set linetype 3 lc rgb '#2ca02c' lw 2 pt 9
set linetype 4 lc rgb '#d62728' lw 2 pt 11
set linetype 5 lc rgb '#9467bd' lw 2 pt 13
set linetype 6 lc rgb '#8c564b' lw 2 pt 3
set linetype 7 lc rgb '#e377c2' lw 2 pt 4
set linetype 8 lc rgb '#7f7f7f' lw 2 pt 6

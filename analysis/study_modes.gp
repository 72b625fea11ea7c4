# Runtime and COW faults by pre-copy mode, stock vs patched, 95 % CI whiskers (analysis/study-report.py).
# Run in the data folder: reads study_modes.dat, writes study_modes.TERM; term is set with -e.
if (term eq 'svg') { set terminal svg size 1200,650 dynamic noenhanced font 'Sans,12' background rgb 'white' } \
else { set terminal pngcairo size 1200,650 noenhanced font 'Sans,11' }
set output 'study_modes.'.term
set datafile separator "\t"
set datafile missing "nan"
set multiplot layout 1,2 title "The study, reproduced: runtime and COW faults by pre-copy mode (mean, 95 % CI)"
set style data histograms
set style histogram errorbars gap 1 lw 1.2
set style fill solid 0.8 border -1
set border 3
set tics nomirror
set grid ytics lc rgb '#dddddd'
set logscale y
set xtics rotate by -30 left
set bmargin 5
set key outside top center horizontal font ',9'
modes = "stock patched:off patched:depth-1 patched:depth-16 patched:adaptive"
set title "runtime of the write loop (each kernel in its own boot)"
set ylabel "ms (log)"
plot 'study_modes.dat' using 2:3:4:xtic(1) title 'stock' lc rgb '#7f7f7f', \
	for [m=0:3] '' using (column(8+6*m)):(column(9+6*m)):(column(10+6*m)) title word(modes, m+2)
set title "the writer's COW faults (taskstats wpcopy_count)"
set ylabel "faults per rep (log)"
set yrange [0.5:*] # a single-page writer's one fault stays visible
plot 'study_modes.dat' using 5:6:7:xtic(1) title 'stock' lc rgb '#7f7f7f', \
	for [m=0:3] '' using (column(11+6*m)):(column(12+6*m)):(column(13+6*m)) title word(modes, m+2)
unset multiplot

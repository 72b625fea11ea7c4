# Per-write latency by pre-copy mode: p50, p90, p99, p99.9 of the first writes (means over reps).
# Run in the data folder: reads study_latency.dat, writes study_latency.TERM; term is set with -e.
if (term eq 'svg') { set terminal svg size 1300,650 dynamic noenhanced font 'Sans,12' background rgb 'white' } \
else { set terminal pngcairo size 1300,650 noenhanced font 'Sans,11' }
set output 'study_latency.'.term
set datafile separator "\t"
set datafile missing "nan"
set title "The study, reproduced: per-write latency by pre-copy mode (the tail, not only the median)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set border 3
set tics nomirror
set grid ytics lc rgb '#dddddd'
set logscale y
set ylabel "latency of a first write, µs (log; emulated under TCG)"
set xtics rotate by -45 left font ',8'
set bmargin 8
set key top left
plot 'study_latency.dat' using 2:xtic(1) title 'p50', '' using 3 title 'p90', '' using 4 title 'p99', \
	'' using 5 title 'p99.9'

# What a write costs after fork: one row per cell. Left: time per write without fork and after fork
# (Hodges-Lehmann centre over reps, whiskers: its exact CI), log scale. Right: their ratio with its CI,
# written beside each point. Every label has its own row, so none can overlap.
h = 190 + 34 * N
if (h < 360) h = 360
if (term eq 'svg') {
	set terminal svg size 1100,h dynamic noenhanced font 'Sans,12' background rgb 'white'
} else {
	set terminal pngcairo size 1100,h noenhanced font 'Sans,11'
}
set output outfile
set multiplot title sprintf("What a write costs after fork (%d cells; Hodges-Lehmann centres, whiskers: exact CI)", N)
set yrange [N + 0.5 : 0.5]
set ytics 1 nomirror font ',10'
set grid ytics xtics lc rgb '#e5e5e5'
set logscale x
set tmargin at screen 1 - 70.0 / h
set bmargin at screen 95.0 / h
set lmargin at screen 0.2
set rmargin at screen 0.55
set format x "%.0s%c"
set xlabel "time per write (ns per page, log scale; k = 1000)"
set title "no fork vs after fork"
set key at screen 0.2, screen 8.0 / h left bottom horizontal maxrows 1 noopaque nobox
plot datafile using 2:($0 + 1):3:4:ytic(1) with xerrorbars pt 5 ps 1.2 lc rgb '#7f7f7f' title "no fork (private pages)", \
	'' using 5:($0 + 1):6:7 with xerrorbars pt 7 ps 1.2 lc rgb '#d62728' title "after fork (COW)"
set lmargin at screen 0.6
set rmargin at screen 0.97
set format y ""
set format x "%g"
set xlabel "after fork / no fork (log scale)"
set title "how many times slower"
unset key
set offsets graph 0, graph 0.6, 0, 0
plot datafile using 8:($0 + 1):9:10 with xerrorbars pt 7 ps 1.2 lc rgb '#1f77b4' notitle, \
	'' using 8:($0 + 1):11 with labels left offset 1.2, 0.55 font ',9' notitle
unset multiplot

# Pre-copy trade-off: one row per cell and pre-copy mode against the same cell with pre-copy off
# (colour and key: the mode). Four panels share the rows: faults saved, pages copied for nothing,
# extra private memory, and p99 (Hodges-Lehmann ratio, exact CI). Every label has its own row: none overlaps.
h = 170 + 26 * N
if (h < 400) h = 400
if (term eq 'svg') {
	set terminal svg size 1200,h dynamic noenhanced font 'Sans,12' background rgb 'white'
} else {
	set terminal pngcairo size 1200,h noenhanced font 'Sans,11'
}
set output outfile
colours = "blue orange green red purple brown pink grey"
modes = ""
do for [m = 1:M] { modes = modes . sprintf("%s%s: %s", m > 1 ? ", " : "", word(colours, m), value(sprintf("mode%d", m))) }
set multiplot title sprintf("Pre-copy trade-off against pre-copy off (%d cell-mode pairs; medians over reps, p99 a Hodges-Lehmann ratio with its exact CI)\npre-copy mode by colour: %s", N, modes)
set yrange [N + 0.5 : 0.5]
set ytics 1 nomirror font ',9'
set grid ytics xtics lc rgb '#e5e5e5'
set xtics font ',9'
set tmargin at screen 1 - 85.0 / h
set bmargin at screen 60.0 / h
set lmargin at screen 0.2
set rmargin at screen 0.38
set title "faults saved"
set xlabel "% of the faults when off"
unset key
plot datafile using 2:($0 + 1):9:ytic(1) with points pt 7 ps 1.3 lc variable notitle
set format y ""
set lmargin at screen 0.41
set rmargin at screen 0.59
set title "pages copied, never written"
set xlabel "% of the pages written"
plot datafile using 3:($0 + 1):9 with points pt 7 ps 1.3 lc variable notitle
set lmargin at screen 0.62
set rmargin at screen 0.79
set title "writer's extra memory"
set xlabel "MiB, on minus off"
plot datafile using 4:($0 + 1):9 with points pt 7 ps 1.3 lc variable notitle
set lmargin at screen 0.82
set rmargin at screen 0.98
set title "p99 first-write latency"
set xlabel "on / off (log scale)"
set logscale x
set arrow 1 from first 1, graph 0 to first 1, graph 1 nohead dt 2 lc rgb '#888888'
plot datafile using 5:($0 + 1):6:7:9 with xerrorbars pt 7 ps 1.3 lc variable notitle
unset multiplot

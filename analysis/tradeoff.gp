# Pre-copy trade-off: each point is one cell in one pre-copy mode against the same cell with
# pre-copy off (colour: the mode). x: faults saved; y: what it cost (copies wasted, memory) and
# p99 (ratio of means, 95 % CI).
set multiplot layout 1,3 title sprintf("Pre-copy trade-off against pre-copy off (%d cell-mode pairs; medians over reps, p99 as a ratio of means with 95 %% CI; colour: mode)", N)
set xlabel "faults saved (% of the faults with pre-copy off)"
set key off
set xtics font ',9'
set offsets graph 0.05, graph 0.25, graph 0.05, graph 0.05
set title "copies made for nothing"
set ylabel "pages copied ahead, never written (% of pages written)"
plot datafile using 2:3:8 with points pt 7 ps 1.2 lc variable, '' using 2:3:1 with labels font ',7' left offset 0.6,0.3
set title "extra memory"
set ylabel "writer's extra private memory (MiB, on minus off)"
plot datafile using 2:4:8 with points pt 7 ps 1.2 lc variable, '' using 2:4:1 with labels font ',7' left offset 0.6,0.3
set title "p99 first-write latency"
set ylabel "p99 with pre-copy / without (log scale)"
set logscale y
plot datafile using 2:5:6:7:8 with yerrorbars pt 7 ps 1.2 lc variable, '' using 2:5:1 with labels font ',7' left offset 0.6,0.3, \
	1 with lines dt 2 lc rgb '#888888'
unset multiplot

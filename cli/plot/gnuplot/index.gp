# Latency of every first write against its place in the write order (one --samples file),
# one colour per rep, one key entry per rep: does the cost change along the region, does
# pre-copy make periodic spikes?
set title "First-write latency along the write order (one colour per rep)"
set logscale y
set format y "%.0s%c"
set xlabel "write index (position in the workload's order, from 0)"
set ylabel "latency of the write (ns, log scale)"
set key right top
plot for [i = 0:N - 1] datafile index i using 1:2 with points pt 7 ps 0.25 lc (i % 8) + 1 title columnheader(1)

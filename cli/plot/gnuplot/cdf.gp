# First-write latency CDF of one workload, one line per cell (fork vs. no fork, sizes, ...).
# Points are the per-rep percentile columns (min, p50, p90, p99, p99.9, max), median over reps.
set title sprintf("First-write latency CDF: %s\n(from per-rep percentiles: min, p50, p90, p99, p99.9, max; median over reps)", context)
set logscale x
set format x "%.0s%c"
set xlabel "latency of one first write (ns, log scale)"
set ylabel "fraction of first writes at or below"
set yrange [0:1.04]
set ytics 0.1
set key left top
plot for [i=0:N-1] datafile index i using 1:2 with linespoints ps 0.9 title columnheader(1)

# Every first write of one workload, per cell (all reps pooled from the rows' lat_hist histograms):
# left the CDF, right the tail 1 - CDF on a log scale, where p99 and p99.9 differences show.
set multiplot layout 1,2 title "First-write latency of every write, per cell (all reps pooled, from lat_hist)"
set logscale x
set format x "%.0s%c"
set xlabel "latency of one first write (ns, log scale)"
set key right bottom font ',9'
set title "CDF"
set ylabel "fraction of writes at or below"
set yrange [0:1.02]
set ytics 0.1
plot for [i=0:N-1] datafile index i using 1:2 with steps title columnheader(1)
set title "tail: 1 - CDF"
set ylabel "fraction of writes slower (log scale)"
set logscale y
set yrange [tailmin:1]
set format y "%.0e"
set ytics auto
set key right top font ',9'
plot for [i=0:N-1] datafile index i using 1:3 with steps title columnheader(1)
unset multiplot

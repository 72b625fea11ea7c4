# fork() latency in the parent against the populated region size, one line per method (log-log).
set title "fork() latency vs. populated size\n(Hodges-Lehmann centre per size, whiskers: its exact CI; key: ms per GiB)"
set logscale xy
set xlabel "populated region (GiB, log scale)"
set ylabel "fork() call to return in the parent (ms, log scale)"
set key left top
set offsets graph 0.04, graph 0.04, 0, 0
plot for [i=0:N-1] datafile index i using 1:2:3:4 with yerrorlines ps 1 title columnheader(1)

# Runtime and writer page faults per cell, one bar per pre-copy mode, whiskers = the centre's exact CI.
set multiplot layout 1,2 title sprintf("Runtime and page faults by pre-copy mode%s%s%s", \
	stock ? " (stock kernel: pre-copy absent, one mode)" : "", context eq "" ? "" : "\n", context)
set style data histograms
set style histogram errorbars gap 1 lw 1.5
set style fill solid 0.75 border -1
set xtics rotate by -30 left font ',10'
set bmargin 7
set yrange [0:*]
set key top left
set title "runtime of the touch loop (Hodges-Lehmann centre, exact CI)"
set ylabel "runtime (ms)"
plot for [m=0:N-1] datafile using (column(2+6*m)):(column(3+6*m)):(column(4+6*m)):xtic(1) title word(modes, m+1)
set title "writer's page faults (Hodges-Lehmann centre, exact CI)"
set ylabel "page faults per rep"
plot for [m=0:N-1] datafile using (column(5+6*m)):(column(6+6*m)):(column(7+6*m)):xtic(1) title word(modes, m+1)
unset multiplot

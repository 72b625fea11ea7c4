# Writer slowdown while a snapshot is taken, one bar per method (and cell), whiskers = the centre's exact CI.
set title sprintf("Snapshot: writer slowdown by method (%s)\n(writer time with the snapshot / same writers without, same rep)", context)
set style data histograms
set style histogram errorbars gap 2 lw 1.5
set style fill solid 0.75 border -1
set yrange [0:*]
set ylabel "slowdown (x)"
set xlabel "snapshot method"
set key top right
plot datafile using 2:3:4:xtic(1) title "slowdown (Hodges-Lehmann centre, exact CI)", 1 with lines dt 2 lw 1.5 lc rgb 'black' title "no slowdown"

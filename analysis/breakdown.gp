# Where the time of one COW fault goes: page copy, rest of the kernel copy path, and the remainder.
set title sprintf("Time per COW fault, broken down (medians over reps; cells: %s)%s", context, \
	missing ? "\n* no kernel copy-path data in this cell (see its evidence_notes): its kernel share is inside the rest" : "")
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set yrange [0:*]
set xtics font ',10'
set bmargin 5
set ylabel "time per first write that faulted (ns)"
set key outside top center horizontal
if (kernel) {
	plot datafile using 2:xtic(1) title "page copy (memcpy of one page)", \
	     '' using 3 title "rest of the kernel copy path (taskstats)", \
	     '' using 4 title "fault entry/exit, page tables, TLB, rest"
} else {
	plot datafile using 2:xtic(1) title "page copy (memcpy of one page)", \
	     '' using 4 title "everything else: fault entry/exit, page tables, TLB, rest"
}

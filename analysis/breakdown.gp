# Where the time of one COW fault goes: page copy, rest of the kernel copy path, and the remainder.
set title sprintf("Time per COW fault, broken down (medians over reps)%s%s", context eq "" ? "" : "\n", context)
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set yrange [0:*]
set xtics font ',10'
set bmargin 5
set ylabel "time per first write that faulted (ns)"
set key top left
if (kernel) {
	plot datafile using 2:xtic(1) title "page copy (user-space memcpy of one page)", \
	     '' using 3 title "rest of the kernel copy path (taskstats wpcopy)", \
	     '' using 4 title "fault entry/exit, page tables, TLB, rest"
} else {
	plot datafile using 2:xtic(1) title "page copy (user-space memcpy of one page)", \
	     '' using 4 title "everything else: fault entry/exit, page tables, TLB (no kernel copy-path data)"
}

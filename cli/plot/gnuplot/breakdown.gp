# Where the time of one COW fault goes: the copy itself, the rest of the kernel copy path, the rest.
# Per cell: each rep's means (the kernel's copy-path clocks give sums), the median of those over reps.
notes = ""
if (inconsistent > 0) { notes = notes . "\n! the kernel copy path exceeds the write that contains it (clocks disagree, e.g. emulation): only the whole write is drawn" }
if (missing) { notes = notes . "\n* no kernel copy-path data in this cell (see its evidence_notes): its kernel share is inside the rest" }
if (skipped > 0) { notes = notes . sprintf("\n%d cell(s) left out: most writes did not fault (pre-copy or reuse)", skipped) }
set title sprintf("Time per COW fault (rep means, median over reps; cells: %s)%s", context, notes)
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set yrange [0:*]
set xtics font ',10'
set bmargin 5
set ylabel "mean time per first write that faulted (ns)"
set key outside top center horizontal
copy_title = own_copy ? "the copy itself (/proc/cow_stats)" : "the copy itself (est.: a user-space memcpy of one page)"
if (kernel) {
	plot datafile using 2:xtic(1) title copy_title, \
	     '' using 3 title "rest of the kernel copy path: allocate, charge, map", \
	     '' using 4 title "rest of the write: trap entry/exit, page tables, TLB, preemption"
} else {
	plot datafile using 2:xtic(1) title copy_title, \
	     '' using 4 title "everything else (kernel copy path not measured)"
}

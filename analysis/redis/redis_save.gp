# Client SET latency around one BGSAVE per mode (analysis/redis/redis-report.py): one panel per mode,
# time from the BGSAVE command (s), each request's latency (ms, log), inside the save window in red.
# Run in the data folder: reads redis_save.dat (one block per mode, its first line names it),
# writes redis_save.TERM; term is set with -e.
stats 'redis_save.dat' using 1 nooutput
n = STATS_blocks
if (term eq 'svg') { set terminal svg size 1100,220*n+60 dynamic noenhanced font 'Sans,11' background rgb 'white' } \
else { set terminal pngcairo size 1100,220*n+60 noenhanced font 'Sans,10' }
set output 'redis_save.'.term
set border 3
set tics nomirror
set grid ytics lc rgb '#dddddd'
set logscale y
set key top right opaque
set ylabel "SET latency, ms"
set multiplot layout n,1 title "Redis: client latency around a BGSAVE (x = s from the BGSAVE command; emulated time under TCG)"
do for [i=0:n-1] {
	if (i == n-1) { set xlabel "s from BGSAVE" } else { unset xlabel }
	plot 'redis_save.dat' index i using 1:($3 == 1 ? $2 : NaN) with points pt 7 ps 0.3 lc rgb '#d62728' \
		title columnheader(2), \
		'' index i using 1:($3 == 2 ? $2 : NaN) with points pt 7 ps 0.3 lc rgb '#1f77b4' notitle
}
unset multiplot

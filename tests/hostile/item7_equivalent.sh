#!/usr/bin/env bash
# Issue 29 item 7: one value spelled several ways is one cell in matrix, one rep set in --resume,
# and a duplicate in merge.
ITEM=7; . "$(dirname "$0")/lib.sh"
cd "$W"
cells() { "$CB" matrix --dry-run "$@" 2>/dev/null | grep -cE '^[0-9]+'$'\t'; }
# matrix: the number of cells must be the number of distinct values
while read -r want args; do
	# a spelling the option does not take is refused (exit 2, one line): also an answer
	try "0 2" "matrix --dry-run $args" "$CB" matrix --dry-run $args
	[ $RC = 2 ] && { echo "note: refused: $args: $(echo "$ERR" | head -1)"; continue; }
	n=$(echo "$OUT" | grep -cE '^[0-9]+'$'\t')
	[ "$n" = "$want" ] || bump N_DUP CELLS "matrix $args: $n cells, want $want"
done <<'L'
1 -w seq -s 4M,4096K,4194304
1 -w seq -s 4M,4m,4MiB
1 -w seq -s 4M,4M
1 -w seq -s 1G,1024M,1048576K
1 -w seq -s 64K,65536,0x10000
1 -w seq -s 64K,64k
1 -w seq -s 4M,4.0M
1 -w seq -s 64K,+65536
1 -w seq -s 64K,065536
1 -w burst -s 4M --burst=8,0008
1 -w burst -s 4M --burst=8,+8
1 -w burst -s 4M --burst=8,8.0
1 -w stride -s 4M --stride=2,02
1 -w hotset -s 4M --touch=10,010
1 -w hotset -s 4M --touch=10,10%
1 -w snapshot -s 4M --batch=2M,2048K,2097152
1 -w snapshot -s 4M --threads=2,02
1 -w fork -s 4M --dontfork=0,0K,0M
1 -w seq -s 4M --fork=1,01
1 -w seq -s 4M --writer=child,child
1 -w seq -s 4M --seed=1,01
1 -w random -s 4M --seed=1,01,+1
1 -w seq -s 4M --thp=madvise,madvise
1 -w seq -s 4M --cpu=0,00
2 -w seq -s 4M,8M,4096K,8192K
2 -w seq -s 4M --fork=1,0,01,00
L
# matrix files: a group per spelling
printf '[matrix]\nreps = 1\n[a]\nworkload = seq\nsize = 4M\n[b]\nworkload = seq\nsize = 4096K\n[c]\nworkload=seq\nsize=4194304\n' > m.ini
try 0 "matrix file: 3 groups of one size" "$CB" matrix --dry-run m.ini
n=$(echo "$OUT" | grep -cE '^[0-9]+'$'\t'); [ "$n" = 1 ] || bump N_DUP CELLS "matrix file 4M/4096K/4194304 in three groups: $n cells"
# --resume: a file of one spelling resumed with another runs nothing again
R=(-r 2 --warmup 0 -q)
for pair in "-s 256K|-s 262144" "-s 256K|-s 256k" "-s 256K|-s 0.25M" "-w burst -s 256K --burst=8|-w burst -s 256K --burst=0008" \
	"-w stride -s 256K --stride=2|-w stride -s 256K --stride=02" "-w random -s 256K --seed=1|-w random -s 256K --seed=01" \
	"-s 256K --fork=1,0|-s 262144 --fork=0,1" "-w hotset -s 256K --touch=10|-w hotset -s 256K --touch=010"; do
	a=${pair%|*} b=${pair#*|}
	rm -f res.csv
	try 0 "matrix $a" "$CB" matrix $a "${R[@]}" -o res.csv
	before=$(rows res.csv)
	try "0 2" "matrix $b --resume (of $a)" "$CB" matrix $b "${R[@]}" --resume=res.csv
	[ $RC = 2 ] && { echo "note: refused: $b: $(echo "$ERR" | head -1)"; continue; }
	after=$(rows res.csv)
	[ "$after" = "$before" ] || bump N_DUP RERUN "resume of '$a' with '$b': $before rows became $after ($(echo "$ERR" | grep -m1 -o 'rows belong.*\|[0-9]* to run'))"
	[ "$(dups res.csv)" = 0 ] || bump N_DUP DUP "resume of '$a' with '$b': duplicated (cell, rep)"
done
# merge: the same (config, rep) in two spellings is a duplicate
"$CB" matrix -s 256K -w seq "${R[@]}" -o m1.csv 2>/dev/null
"$CB" matrix -s 262144 -w seq "${R[@]}" -o m2.csv 2>/dev/null
"$CB" matrix -s 256k -w seq "${R[@]}" -o m3.csv 2>/dev/null
"$CB" matrix -w burst -s 256K --burst=8 "${R[@]}" -o b1.csv 2>/dev/null
"$CB" matrix -w burst -s 256K --burst=0008 "${R[@]}" -o b2.csv 2>/dev/null
"$CB" matrix -w seq -s 256K --fork=1,0 "${R[@]}" -o f1.csv 2>/dev/null
"$CB" matrix -w seq -s 262144 --fork=0,1 "${R[@]}" -o f2.csv 2>/dev/null
for pair in "m1.csv m2.csv" "m1.csv m3.csv" "m2.csv m3.csv" "b1.csv b2.csv" "f1.csv f2.csv"; do
	try 2 "merge $pair" "$CB" merge $pair
done
# a matrix without a fork axis and one with --fork=0,1: fork=1 is the default, but the cells differ
# (workload=seq size=256K against ... fork=1): merge keeps both, summarize shows two cells
try "0 2" "merge m1.csv f2.csv (an omitted default axis)" "$CB" merge m1.csv f2.csv
echo "note: merge of a no-fork-axis matrix and a --fork=0,1 matrix (rep 1 of fork=1 in both): exit $RC"
# summarize: spellings of one cell are one cell (n adds up)
try 0 "summarize m1 m2 (two measurements, one cell)" "$CB" summarize -q -f csv m1.csv m2.csv
c=$(echo "$OUT" | python3 -c "import csv,sys; print(len({r['cell'] for r in csv.DictReader(sys.stdin)}))")
[ "$c" = 1 ] || bump N_DUP CELLS "summarize of -s 256K and -s 262144 files: $c cells, want 1"
try 0 "compare m1 m2" "$CB" compare -q -f csv m1.csv m2.csv
echo "$OUT" | grep -q ',both,' || bump N_OTHER PAIR "compare -s 256K vs -s 262144 files: not paired"
report

#!/usr/bin/env bash
# Screen tests on a real terminal (tmux): what a person sees.
#   1. cowbench run --format=table: the progress line never runs into a row; the rows and the
#      closing summary (with its same-run references) are on screen; --quiet and a pipe have none.
#   2. bash completion, cowbench invoked by path: --probes=, --metric=, a workload option.
# usage: screen-test.sh COWBENCH SOURCE_DIR        (ctest runs it; exit 77 = skipped)
set -euo pipefail
bin=$(realpath "$1")
src=$(realpath "$2")
command -v tmux >/dev/null 2>&1 || { echo "tmux not installed (tests/install-deps.sh installs it)"; exit 77; }
sock=cowbench-screen-$$
session=t
tm() { tmux -L "$sock" "$@"; }
trap 'tm kill-server 2>/dev/null || true' EXIT
fail() { echo "FAIL: $*"; echo "--- screen ---"; tm capture-pane -p -t "$session" -S -200; exit 1; }

tm new-session -d -s "$session" -x 200 -y 60 -e LANG=C.UTF-8 -e PS1='$ ' "bash --norc --noprofile"
sleep 0.3
# Wait until the screen shows the marker line the command prints when it is done.
run_until() { # MARKER COMMAND
	tm send-keys -t "$session" "clear; $2; echo $1-\$?" Enter
	for _ in $(seq 240); do
		sleep 0.5
		tm capture-pane -p -t "$session" -S -200 | grep -q "^$1-[0-9]" && return 0
	done
	fail "timed out waiting for $1"
}

# 1. progress, rows and the closing summary
run_until DONE1 "$bin run --size=8M --reps=3 --format=table"
screen=$(tm capture-pane -p -t "$session" -S -200)
grep -q '^DONE1-0$' <<<"$screen" || fail "run did not exit 0"
[ "$(grep -c '^seq  *8 MiB  *child  *1  *[123]  *timed  *ok ' <<<"$screen")" -eq 3 ] || fail "not 3 clean table rows"
# the default probes (taskstats) run in one evidence rep after the timed ones
[ "$(grep -c '^seq  *8 MiB  *child  *1  *-  *evidence  *ok ' <<<"$screen")" -eq 1 ] || fail "not 1 evidence row (rep -)"
grep -q '\[rep [0-9]\|\[warm-up [0-9]\|  elapsed [0-9]' <<<"$screen" && fail "a progress line was left on screen"
grep -q '  elapsed  faults  write p50  write p99' <<<"$screen" || fail "no table header naming quantities"
grep -q 'elapsed_ns\|lat_p50_ns' <<<"$screen" && fail "the table header names CSV columns"
grep -q '^seq 8 MiB, child writes after fork: COW write p50 [0-9.]* [µm]*s (p99 ' <<<"$screen" || fail "no closing summary"
grep -q 'over 3 reps, CV [0-9.]* %, [0-9.]* % CI \[' <<<"$screen" || fail "no labelled spread in the summary"
grep -q '× the same write without COW ([0-9.]* [nµ]s' <<<"$screen" || fail "no no-fork reference"
grep -q 'a 4 KiB memcpy in user space takes' <<<"$screen" || fail "no memcpy reference"

# The progress line is on screen while a rep runs (a slow writer: 1 GiB would take long; 256M is enough).
tm send-keys -t "$session" "clear; $bin run --size=256M --reps=2 --format=table; echo DONE2-\$?" Enter
seen=0
for _ in $(seq 240); do
	sleep 0.2
	s=$(tm capture-pane -p -t "$session")
	grep -q '\[\(rep\|warm-up\) [0-9]/[0-9]\] seq 256 MiB  elapsed' <<<"$s" && seen=1
	grep -q '^DONE2-' <<<"$s" && break
done
[ "$seen" -eq 1 ] || fail "never saw the progress line"
grep -q '^DONE2-0$' <<<"$s" || fail "256M run did not finish"

run_until DONE3 "$bin run --size=8M --reps=2 --format=table --quiet"
screen=$(tm capture-pane -p -t "$session" -S -200)
grep -q 'COW write p50' <<<"$screen" && fail "--quiet printed a summary"
run_until DONE4 "$bin run --size=8M --reps=2 --format=table | cat"
screen=$(tm capture-pane -p -t "$session" -S -200)
grep -q 'COW write p50' <<<"$screen" && fail "a pipe got the summary"

# Without --format: a table on the terminal, CSV through a pipe (what scripts read).
run_until DONE6 "$bin run --workload=seq --size=16M --reps=3"
screen=$(tm capture-pane -p -t "$session" -S -200)
grep -q '^DONE6-0$' <<<"$screen" || fail "run without --format did not exit 0"
[ "$(grep -c '^seq  *16 MiB  *child  *1  *[123]  *timed  *ok ' <<<"$screen")" -eq 3 ] || fail "no table by default"
grep -q '^schema,' <<<"$screen" && fail "CSV on a terminal without --format"
# (the progress line is on the terminal's stderr meanwhile: only the pipe's text is checked)
run_until DONE7 "$bin run --workload=seq --size=16M --reps=3 --quiet | cut -c1-40"
screen=$(tm capture-pane -p -t "$session" -S -200)
grep -q '^schema,workload,size_bytes,pages,touche' <<<"$screen" || fail "a pipe did not get CSV"
[ "$(grep -c '^1,seq,16777216,4096,4096,child,1,' <<<"$screen")" -eq 4 ] || fail "not 4 CSV rows through the pipe"
grep -q '^seq  *16 MiB' <<<"$screen" && fail "a pipe got the table"

# matrix: rows and progress never share a line; the cell column shows the axes
run_until DONE5 "$bin matrix --workloads=seq --sizes=1M,2M --thp=never,madvise --reps=1 --warmup=0 --format=table"
screen=$(tm capture-pane -p -t "$session" -S -200)
grep -q '^DONE5-0$' <<<"$screen" || fail "matrix did not exit 0"
[ "$(grep -c '^seq  .* timed  *ok .*  workload=seq size=[12]M thp=\(never\|madvise\)$' <<<"$screen")" -eq 4 ] ||
	fail "not 4 clean matrix rows ending with their cell"
[ "$(grep -c '^seq  .* evidence  *ok .*  workload=seq size=[12]M thp=\(never\|madvise\)$' <<<"$screen")" -eq 4 ] ||
	fail "not 4 evidence rows, one per cell"
grep -q '\[cell [0-9]' <<<"$screen" && fail "a matrix progress line was left on screen"

# 2. completion, cowbench invoked by its path
tm send-keys -t "$session" "clear; cd $src && source docs/cowbench.bash-completion" Enter
sleep 0.5
complete_line() { # TEXT EXPECTED
	tm send-keys -t "$session" C-u "clear" Enter
	sleep 0.3
	tm send-keys -t "$session" "$1" Tab Tab
	sleep 1.5
	tm capture-pane -p -t "$session" | grep -q -- "$2" || fail "completing '$1' shows no '$2'"
	tm send-keys -t "$session" C-u
}
complete_line "$bin run --probes=pa" "--probes=pagemap"
complete_line "$bin summarize --metric=fork_" "--metric=fork_ns"
complete_line "$bin run --workload=fork --meth" "--method="
complete_line "$bin run --method=posix" "--method=posix_spawn"
complete_line "$bin run --wor" "--workload="
complete_line "$bin run -w fork --meth" "--method="
echo "screen tests passed"

#!/usr/bin/env bash
# Slurm for real (ctest label "slurm"): start munged, a single-node slurmctld and slurmd on
# this machine with a generated slurm.conf in a temporary directory, submit docs/guide.md's array
# job verbatim, wait for it, merge the parts and check that the merged cell set is exactly the
# unsharded --dry-run's, with every (cell, rep) once. Then resubmit one task, as a requeue
# would, and check that --resume adds nothing. Every daemon is stopped on every path.
#
# usage: slurm-test.sh SOURCE_DIR CLI_DIR     (exit 77: skipped, e.g. not root or no Slurm)
set -euo pipefail
src=$1
cli_dir=$2
SKIP=77

say() { echo "slurm-test: $*" >&2; }

[ "$(id -u)" -eq 0 ] || { say "skipped: needs root (slurmd runs jobs as their user)"; exit $SKIP; }
for c in munged slurmctld slurmd sbatch squeue scontrol scancel; do
	command -v "$c" >/dev/null || [ -x "/usr/sbin/$c" ] ||
		{ say "skipped: $c is missing (tests/install-deps.sh installs slurm-wlm and munge)"; exit $SKIP; }
done
export PATH="$cli_dir:$PATH:/usr/sbin"

tmp=$(mktemp -d /tmp/cowbench-slurm.XXXXXX)
pids=() # daemons we started, in start order
job=""

cleanup() {
	local rc=$? i
	trap - EXIT INT TERM HUP
	if [ -n "$job" ]; then
		scancel "$job" 2>/dev/null || true
		for _ in $(seq 50); do
			[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
			sleep 0.2
		done
	fi
	# Stop in reverse order: slurmd, slurmctld, then munged which they authenticate through.
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill "${pids[i]}" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "${pids[i]}" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "${pids[i]}" 2>/dev/null || true
		wait "${pids[i]}" 2>/dev/null || true
	done
	if [ "$rc" -ne 0 ] && [ "$rc" -ne $SKIP ]; then
		for f in "$tmp"/*.log "$tmp"/work/slurm-*.out "$tmp"/work/tasks.txt; do
			[ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; } >&2
		done
		for f in "$tmp/work/${outdir:-none}"/part-*.csv; do
			[ -f "$f" ] && echo "--- $f: $(wc -l <"$f") lines, statuses: $(cut -d, -f9 "$f" | sort | uniq -c | tr -s ' \n' ' ')" >&2
		done
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

fail() { say "FAIL: $*"; exit 1; }

# Wait up to $1 seconds for the command after it to succeed.
wait_for() {
	local limit=$1
	shift
	for _ in $(seq $((limit * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

# A TCP port nothing listens on.
free_port() {
	local p
	for p in $(shuf -i 20000-60000 -n 50); do
		ss -Hltn "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
	done
	fail "no free TCP port"
}

# --- munge: its own key, socket and files, nothing in /etc or /run ---
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/work"
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 0400 "$tmp/munge.key"
munged -F --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" --pid-file="$tmp/munged.pid" \
	--log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" 2>>"$tmp/munged.log" &
pids+=($!)
wait_for 10 test -S "$tmp/munge.sock" || fail "munged did not start"

# --- slurm.conf: one node (this machine, all its CPUs), one partition ---
host=$(uname -n | cut -d. -f1) # slurmctld checks SlurmctldHost against its short host name
cpus=$(nproc)
ctld_port=$(free_port)
slurmd_port=$(free_port)
[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))
cat >"$tmp/slurm.conf" <<EOF
ClusterName=cowbench-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
MinJobAge=600
NodeName=cbnode NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus State=UNKNOWN
PartitionName=cbtest Nodes=cbnode Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"

slurmctld -D -i -f "$SLURM_CONF" 2>>"$tmp/slurmctld.log" &
pids+=($!)
wait_for 20 scontrol ping || fail "slurmctld did not answer"
slurmd -D -N cbnode -f "$SLURM_CONF" 2>>"$tmp/slurmd.log" &
pids+=($!)
# slurmd registers on start and retries until slurmctld takes it; a busy machine can be slow.
node_idle() {
	kill -0 "${pids[-1]}" 2>/dev/null || return 0 # slurmd died: stop waiting, the check below says so
	sinfo -h -n cbnode -o %T | grep -qx idle
}
wait_for 60 node_idle || fail "node cbnode did not become idle: $(sinfo -h -n cbnode -o '%T %E' 2>&1)"
kill -0 "${pids[-1]}" 2>/dev/null || fail "slurmd exited"

# --- docs/guide.md's array job, verbatim ---
mapfile -t lines < <(grep -E '^sbatch --array=1-4 analysis/slurm-matrix\.sbatch ' "$src/docs/guide.md" | sed 's/ *#.*$//')
[ "${#lines[@]}" -eq 1 ] || fail "docs/guide.md should have exactly one 'sbatch --array=1-4 analysis/slurm-matrix.sbatch' line, has ${#lines[@]}"
line=${lines[0]}
read -ra words <<<"$line"
shards=${words[3]} outdir=${words[4]}
matrix_args=("${words[@]:5}")
[ "$shards" = 4 ] || fail "the guide's job should have 4 shards for --array=1-4, has '$shards'"
say "submitting: $line"
cd "$tmp/work"
ln -s "$src/analysis" analysis
submitted=$(bash -c "$line")
job=$(sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p' <<<"$submitted")
[ -n "$job" ] || fail "sbatch said: $submitted"
job_done() { [ -z "$(squeue -h -j "$job" 2>/dev/null)" ]; }
wait_for 90 job_done || fail "job $job still queued or running after 90 s: $(squeue -j "$job" 2>&1)"

# Each task ran to its end: exit 0, or 1 when a measurement failed (cowbench records that rep,
# its row says how; the cell set below still has to be whole). Anything else is a failure.
scontrol -o show job "$job" >tasks.txt
states=$(grep -o 'JobState=[A-Z_]* .*ExitCode=[0-9:]*' tasks.txt | sed 's/ .*ExitCode=/ exit /' | sort | uniq -c | tr -s ' ')
ran=$(grep -cE 'JobState=COMPLETED .*ExitCode=0:0|JobState=FAILED .*ExitCode=1:0' tasks.txt || true)
[ "$ran" -eq 4 ] || { cat tasks.txt >&2; fail "the 4 array tasks did not all run to their end: $states"; }
grep -q 'JobState=FAILED' tasks.txt && say "note: a rep failed in some task (recorded in its part): $states"
for i in 1 2 3 4; do
	[ -s "$outdir/part-$i.csv" ] || fail "task $i wrote no $outdir/part-$i.csv"
done

# --- the merged parts are the unsharded matrix: every cell, every rep, once ---
cowbench merge "$outdir"/part-*.csv >merged.csv || fail "cowbench merge rejected the parts"
cowbench matrix "${matrix_args[@]}" --dry-run >plan.txt
grep -v '^#' plan.txt | cut -f2 | sort >want-cells.txt
reps=$(sed -n 's/^# [0-9]* cells x \([0-9]*\) reps.*/\1/p' plan.txt)
evidence=$(sed -n 's/^#.* \([0-9]*\) evidence reps.*/\1/p' plan.txt)
[ -n "$reps" ] && [ -n "$evidence" ] || fail "cannot read the reps from: $(head -n1 plan.txt)"
col() { head -n1 merged.csv | tr -d '\r' | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
cell_col=$(col cell) rep_col=$(col rep) kind_col=$(col rep_kind)
# timed and evidence reps are numbered apart: a rep is (cell, rep_kind, rep)
tail -n +2 merged.csv | tr -d '\r' |
	awk -F, -v c="$cell_col" -v k="$kind_col" -v r="$rep_col" '{ print $c "\t" $k "\t" $r }' >pairs.txt
cut -f1 pairs.txt | sort -u >got-cells.txt
diff -u want-cells.txt got-cells.txt >&2 || fail "merged cells differ from the unsharded --dry-run"
dups=$(sort pairs.txt | uniq -d)
[ -z "$dups" ] || fail "(cell, rep) pairs present twice: $dups"
want_rows=$(($(wc -l <want-cells.txt) * reps + evidence))
[ "$(wc -l <pairs.txt)" -eq "$want_rows" ] || fail "merged $(wc -l <pairs.txt) rows, want $want_rows"

# --- a requeued task (here: resubmitted) finishes its part and adds nothing ---
before=$(wc -l <"$outdir/part-2.csv")
resubmit=${line/--array=1-4/--array=2}
job=$(bash -c "$resubmit" | sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p')
[ -n "$job" ] || fail "resubmitting task 2 failed"
wait_for 60 job_done || fail "resubmitted task still running after 60 s"
scontrol -o show job "$job" | grep -q 'JobState=COMPLETED' || fail "resubmitted task did not complete"
[ "$(wc -l <"$outdir/part-2.csv")" -eq "$before" ] || fail "--resume of a complete part added rows"
job=""
say "ok in ${SECONDS} s: $(wc -l <want-cells.txt) cells x $reps reps from 4 array tasks equal the unsharded plan; task states: $states"

#!/usr/bin/env bash
# Issue 39 items 4 and 5: no program or script of the project changes a setting outside the
# journal, and none is left changed after any exit. analysis/redis/redis_load --set with unknown keys, with
# no server, a stalling server and one that hangs up, killed by TERM and KILL; analysis/redis/redis-guest.sh
# failing at several steps and signalled. Counts settings left changed, wrong exits and hangs.
ITEM=39.4; . "$(dirname "$0")/lib.sh"
LOAD=${LOAD:-$ROOT/build/analysis/redis/redis_load}
[ -x "$LOAD" ] || { echo "note: no $LOAD (libhiredis-dev): nothing tried"; report; exit 0; }
cd "$W"
keys="kernel/task_delayacct vm/nr_hugepages vm/overcommit_memory kernel/perf_event_paranoid vm/swappiness"
snapk() { for k in $keys; do echo "$k $(cat /proc/sys/$k)"; done; }
before=$(snapk)
check() {
	local now
	now=$(snapk)
	if [ "$now" != "$before" ]; then
		bump N_SETTINGS SETTINGS "$1: $(diff <(echo "$before") <(echo "$now") | grep '^>' | tr '\n' ' ')"
		echo "$before" | while read -r k v; do echo "$v" > /proc/sys/$k; done
	fi
}
fake() { # SOCK MODE: stall (accept, never answer) or hangup (answer INFO, then close)
	python3 - "$1" "$2" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(100); held = []
info = b"# Server\r\nprocess_id:%d\r\n" % os.getpid()
while True:
    c, _ = s.accept(); held.append(c)
    if sys.argv[2] == "hangup":
        c.settimeout(2)
        try:
            if b"INFO" in c.recv(65536):
                c.sendall(b"$%d\r\n%s\r\n" % (len(info), info))
        except OSError:
            pass
        c.close()
PY
	FAKE=$!
	for _ in $(seq 100); do [ -S "$1" ] && break; sleep 0.05; done
}
for set in kernel.perf_event_paranoid=-1 vm.swappiness=1 kernel.task_delayacct=1,vm.swappiness=0 \
	vm/../kernel/perf_event_paranoid=0 kernel.perf_event_paranoid=0x1 vm.nr_hugepages=99999999999999999999; do
	try 2 "redis_load --set $set (no server)" "$LOAD" --socket "$W/none" --saves-out "$W/s.csv" --set "$set"
	check "--set $set"
done
for set in vm.overcommit_memory=1 kernel.task_delayacct=1 vm.nr_hugepages=1; do
	try 1 "redis_load --set $set, no server" "$LOAD" --socket "$W/none" --saves-out "$W/s.csv" --set "$set"
	check "--set $set, no server"
	for mode in stall hangup; do
		rm -f "$W/$mode.sock"; fake "$W/$mode.sock" $mode
		try 1 "redis_load --set $set, a server that does $mode" "$LOAD" --socket "$W/$mode.sock" --saves-out "$W/s.csv" \
			--timeout 1 --before 0.2 --after 0 --set "$set"
		[ "$RC" = 141 ] && bump N_CRASH SIGPIPE "$mode: died of SIGPIPE"
		for sig in TERM KILL; do
			N_INPUTS=$((N_INPUTS + 1))
			"$LOAD" --socket "$W/$mode.sock" --saves-out "$W/s.csv" --timeout 30 --before 5 --set "$set" 2>/dev/null & p=$!
			sleep 0.5; kill -$sig $p; wait $p 2>/dev/null
			[ $sig = KILL ] && "$ROOT/build/cli/cowbench" run -s 64K -r 1 --warmup 0 --probes=none >/dev/null 2>&1 # recovers
			check "--set $set, $mode server, SIG$sig"
		done
		kill $FAKE 2>/dev/null; wait $FAKE 2>/dev/null
	done
done
# redis-guest.sh on this machine: a refused mode, a failed write, SIGTERM and SIGINT mid-load
if command -v redis-server >/dev/null; then
	mkdir -p bin; ln -sf "$LOAD" bin/redis_load
	# guest N MODE...: redis-guest.sh in $W/gN, one tiny round (a script: try and kill reach it, not a subshell)
	printf '#!/bin/sh\nt=%s/g$1; shift\nPATH="%s/bin:$PATH" REDIS_OUT="$t/out" REDIS_TMP="$t" exec sh "%s/analysis/redis/redis-guest.sh" 1000 16 1 1 0.3 0 100 "$@"\n' \
		"$W" "$W" "$ROOT" > guest; chmod +x guest
	guest() { ./guest "$@"; }
	n=0
	for mode in "bad:kernel.perf_event_paranoid=1" "bad:vm.swappiness=0" "x:vm.cow_precopy=1"; do
		n=$((n + 1)); try any "redis-guest.sh $mode" ./guest $n "$mode"
		check "redis-guest.sh $mode"
	done
	n=$((n + 1)); mkdir -p "$W/g$n/out/saves.csv"; try any "redis-guest.sh, rows cannot be written" ./guest $n plain
	check "redis-guest.sh, rows cannot be written"
	for sig in TERM INT HUP; do
		n=$((n + 1)); N_INPUTS=$((N_INPUTS + 1))
		./guest $n plain >/dev/null 2>&1 & p=$!
		for _ in $(seq 100); do pgrep -f "redis_load.*g$n" >/dev/null && break; sleep 0.1; done
		kill -$sig $p; wait $p
		check "redis-guest.sh SIG$sig"
		pgrep -f "redis-server.*g$n" >/dev/null && { bump N_OTHER SERVER "redis-guest.sh SIG$sig left redis-server"; pkill -f "redis-server.*g$n"; }
	done
fi
report

#!/usr/bin/env bash
# ctest redis_load_badinput: every bad argument of analysis/redis/redis_load is refused before anything runs:
# exit 2, exactly one line on stderr, no sysctl written, no output file created.
# usage: tests/redis-load-badinput-test.sh PATH/TO/redis_load
set -uo pipefail
LOAD=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cowbench-redisload.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ok=(--socket "$WORK/none.sock" --requests "$WORK/req.csv" --saves-out "$WORK/saves.csv")
fail=0
while IFS='|' read -r what args; do
	[[ -z $what ]] && continue
	read -r -a extra <<<"$args"
	"$LOAD" "${ok[@]}" "${extra[@]}" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	lines=$(wc -l <"$WORK/err")
	if [[ $rc -ne 2 || $lines -ne 1 || -s $WORK/out || -e $WORK/req.csv || -e $WORK/saves.csv ]]; then
		echo "FAIL: $what: exit $rc, $lines stderr lines: $(head -3 "$WORK/err")"
		fail=1
	else
		echo "ok: $what: $(cat "$WORK/err")"
	fi
done <<'TABLE'
zero connections|--conns 0
too many connections|--conns 65
conns not a number|--conns 4x
negative keys|--keys -1
value size 0|--value-size 0
value size too big|--value-size 65537
saves too many|--saves 1001
before negative|--before -1
after not a number|--after soon
unknown pattern|--pattern zigzag
label with a comma|--label a,b
label with a quote|--label a"b
set without value|--set vm.cow_precopy
set empty value|--set vm.cow_precopy=
set value not a number|--set vm.cow_precopy=1x
set name with a slash|--set vm/../x=1
set name with dots in a row|--set vm..x=1
set empty name|--set =1
set empty item in a list|--set vm.a=1,,vm.b=2
set trailing comma|--set vm.a=1,
unknown option|--frobnicate
stray argument|extra
round negative|--round -3
set a sysctl cowbench does not change|--set kernel.perf_event_paranoid=-1
set one unknown among known|--set vm.cow_precopy=1,vm.swappiness=0
save timeout zero|--save-timeout 0
timeout negative|--timeout -1
command without --saves 0|-- true
gauss sigma zero|--pattern gauss --sigma 0
gauss sigma too wide|--pattern gauss --sigma 11
gauss sigma not a number|--pattern gauss --sigma wide
sigma without gauss|--sigma 0.2
cycle sets one count|--cycle-sets 5
cycle sets both zero|--cycle-sets 0,0
cycle sets negative|--cycle-sets -1,5
cycle sets with --saves-out|--cycle-sets 1,2 --cycles-out /nonexistent/c.csv
cycles-out without cycle sets|--cycles-out /nonexistent/c.csv
TABLE
# Missing required options: one line too.
"$LOAD" --saves 1 >"$WORK/out" 2>"$WORK/err"
rc=$?
if [[ $rc -ne 2 || $(wc -l <"$WORK/err") -ne 1 ]]; then echo "FAIL: missing --socket: exit $rc"; fail=1; else echo "ok: missing --socket"; fi

# A server that is not there, stalls, or hangs up (issue 39): exit 1 with its reason within the
# timeout, never a death by SIGPIPE (141), a hang, or a setting changed. --set names a setting the
# journal knows; the value asked for differs from the one now, so a write would show.
oc=/proc/sys/vm/overcommit_memory
before=$(cat $oc)
want=$(((before + 1) % 3))
check_unchanged() {
	local now
	now=$(cat $oc)
	if [[ $now != "$before" ]]; then
		echo "FAIL: $1: vm.overcommit_memory is $now (was $before)"
		echo "$before" >$oc 2>/dev/null
		fail=1
	fi
}
timeout 20 "$LOAD" "${ok[@]}" --set vm.overcommit_memory=$want >"$WORK/out" 2>"$WORK/err"
rc=$?
if [[ $rc -ne 1 ]]; then echo "FAIL: no server: exit $rc: $(head -2 "$WORK/err")"; fail=1; else echo "ok: no server: $(head -1 "$WORK/err")"; fi
check_unchanged "no server"
if command -v python3 >/dev/null; then
	# fake server: MODE stall accepts and never answers; MODE hangup answers INFO, then closes every connection
	fake() {
		python3 - "$1" "$2" <<'PY' &
import os, socket, sys, time
path, mode = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(100)
held = []
info = b"# Server\r\nprocess_id:%d\r\n" % os.getpid()
while True:
    c, _ = s.accept()
    held.append(c)
    if mode == "hangup":
        c.settimeout(2)
        try:
            if b"INFO" in c.recv(65536):
                c.sendall(b"$%d\r\n%s\r\n" % (len(info), info))
        except OSError:
            pass
        c.close()
PY
		FAKE=$!
		for _ in $(seq 100); do [[ -S $1 ]] && break; sleep 0.05; done
	}
	for mode in stall hangup; do
		sock=$WORK/$mode.sock
		fake "$sock" $mode
		start=$(date +%s)
		timeout 20 "$LOAD" --socket "$sock" --saves-out "$WORK/saves.csv" \
			--timeout 1 --before 0.2 --after 0 --set vm.overcommit_memory=$want >"$WORK/out" 2>"$WORK/err"
		rc=$?
		kill $FAKE 2>/dev/null; wait $FAKE 2>/dev/null
		if [[ $rc -ne 1 ]]; then
			echo "FAIL: server that does $mode: exit $rc after $(($(date +%s) - start)) s: $(head -2 "$WORK/err")"
			fail=1
		else
			echo "ok: server that does $mode: exit 1: $(head -1 "$WORK/err")"
		fi
		check_unchanged "server that does $mode"
	done
fi
exit $fail

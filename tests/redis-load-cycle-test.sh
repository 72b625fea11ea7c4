#!/usr/bin/env bash
# ctest redis_load_cycle: analysis/redis/redis_load against a real redis-server on this machine.
# --pattern gauss writes keys around the middle of the key space and none far out in the tails;
# --cycle-sets runs each save as a counted cycle and writes one row per cycle with the counts a
# kernel without the COW series has (the patched kernel's event columns then stay empty).
# usage: tests/redis-load-cycle-test.sh REDIS_LOAD
set -uo pipefail
LOAD=$1
command -v redis-server >/dev/null && command -v redis-cli >/dev/null || { echo "SKIP: no redis-server"; exit 77; }
W=$(mktemp -d /tmp/cbtest-redisload.XXXXXX)
sock=$W/r.sock
stop() { redis-cli -s "$sock" SHUTDOWN NOSAVE >/dev/null 2>&1; rm -rf "$W"; }
trap stop EXIT
redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$W" --daemonize yes \
	--enable-debug-command local --logfile "$W/log" --pidfile "$W/pid" >/dev/null
for _ in $(seq 100); do redis-cli -s "$sock" ping >/dev/null 2>&1 && break; sleep 0.05; done
fail=0
# 1,000 keys holding DEBUG POPULATE's "value:N"; 4,000 SETs with sigma 0.05 (50 keys): the
# middle 100 keys (within one sigma) are each drawn ~16 times, keys 0..99 and 900..999 (more
# than 8 sigma out) never. The streams are seeded (round 0), so this holds on every run.
redis-cli -s "$sock" DEBUG POPULATE 1000 key 16 >/dev/null
"$LOAD" --socket "$sock" --keys 1000 --value-size 16 --pattern gauss --sigma 0.05 --saves 1 \
	--cycle-sets 0,4000 --cycles-out "$W/c.csv" 2>"$W/err" || { echo "FAIL: gauss cycle: $(head -2 "$W/err")"; fail=1; }
untouched() { # FIRST LAST: how many of key:FIRST..key:LAST still hold their populated value
	# shellcheck disable=SC2046 # one key per word
	redis-cli -s "$sock" --raw MGET $(seq -f 'key:%.0f' "$1" "$2") | tr -d '\0' | grep -c '^value:'
}
mid=$(untouched 450 549) lo=$(untouched 0 99) hi=$(untouched 900 999)
if [[ $mid -ne 0 || $lo -ne 100 || $hi -ne 100 ]]; then
	echo "FAIL: gauss keys: untouched middle $mid of 100 (want 0), low tail $lo, high tail $hi (want 100)"
	fail=1
else
	echo "ok: gauss keys: the middle 100 all written, the 200 keys beyond 8 sigma none"
fi
[[ $(redis-cli -s "$sock" DBSIZE) -eq 1000 ]] || { echo "FAIL: keys outside the key space were written"; fail=1; }
# Two counted cycles with uniform keys: a header and two rows, each a whole cycle.
"$LOAD" --socket "$sock" --keys 1000 --value-size 16 --pattern random --saves 2 --label two \
	--cycle-sets 100,200 --cycles-out "$W/c.csv" 2>"$W/err" || { echo "FAIL: uniform cycles: $(head -2 "$W/err")"; fail=1; }
python3 - "$W/c.csv" <<'PY' || fail=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = []
if [r["pattern"] for r in rows] != ["gauss", "random", "random"]: bad.append("patterns %s" % [r["pattern"] for r in rows])
if rows and rows[0]["sigma"] != "0.05": bad.append("gauss sigma %r" % rows[0]["sigma"])
for r in rows[1:]:
    if r["sigma"] != "" or r["label"] != "two" or r["during_sets"] != "100" or r["after_sets"] != "200":
        bad.append("row %s" % r)
for r in rows:
    # every cycle forks, writes and saves: the server faults, Redis times the fork, the save is inside the cycle
    if not (int(r["parent_minflt"]) > 0 and int(r["latest_fork_usec"]) >= 0 and
            0 < int(r["save_ns"]) <= int(r["cycle_ns"]) and r["save_outlasted"] in ("0", "1")):
        bad.append("counts %s" % r)
print("FAIL: cycle rows: " + "; ".join(bad) if bad else "ok: 3 cycle rows with their counts")
sys.exit(1 if bad else 0)
PY
exit $fail

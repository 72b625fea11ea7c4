#!/usr/bin/env bash
# ctest redis_load_badinput: every bad argument of bench/redis_load is refused before anything runs:
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
TABLE
# Missing required options: one line too.
"$LOAD" --saves 1 >"$WORK/out" 2>"$WORK/err"
rc=$?
if [[ $rc -ne 2 || $(wc -l <"$WORK/err") -ne 1 ]]; then echo "FAIL: missing --socket: exit $rc"; fail=1; else echo "ok: missing --socket"; fi
exit $fail

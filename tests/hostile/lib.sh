# Shared helpers for the issue-29 hostile re-run (tests/hostile/*.sh). Source it.
# Every probe goes through `try`, which counts it; findings are counted by category.
# CB: the cowbench binary (default build/cli/cowbench; CB_ASAN=1 uses build-asan's).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
if [ "${CB_ASAN:-0}" = 1 ] && [ -x "$ROOT/build-asan/cli/cowbench" ]; then
	CB=$ROOT/build-asan/cli/cowbench
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
else
	CB=${CB:-$ROOT/build/cli/cowbench}
fi
ITEM=${ITEM:-?}
N_INPUTS=0 N_CRASH=0 N_EXIT=0 N_PARTIAL=0 N_LOST=0 N_DUP=0 N_SETTINGS=0 N_WRITE_INPUT=0 N_OTHER=0
FINDINGS=()
W=$(mktemp -d /tmp/h29-"$ITEM".XXXXXX)
trap 'rm -rf "$W"' EXIT
export LC_ALL=C

# try EXPECTED_RC|any  DESC  CMD...   -> runs CMD (timeout 120), sets RC, OUT, ERR; counts an input.
try() {
	local want=$1 desc=$2; shift 2
	N_INPUTS=$((N_INPUTS + 1))
	set +e
	timeout -k 5 "${TRY_TIMEOUT:-120}" "$@" >"$W/.out" 2>"$W/.err"
	RC=$?
	set -e 2>/dev/null; set +e
	OUT=$(head -c 20000 "$W/.out" | tr -d '\0'); ERR=$(head -c 20000 "$W/.err" | tr -d '\0')
	if { [ $RC -ge 124 ] && ! [[ " $want " == *" $RC "* ]]; } || grep -qE 'AddressSanitizer|runtime error:|LeakSanitizer|Segmentation|core dumped' "$W/.err"; then
		N_CRASH=$((N_CRASH + 1)); finding CRASH "$desc: rc=$RC $(grep -m1 -E 'Sanitizer|runtime error' "$W/.err")"
	elif [ "$want" != any ] && ! [[ " $want " == *" $RC "* ]]; then
		N_EXIT=$((N_EXIT + 1)); finding EXIT "$desc: rc=$RC want $want: $(head -c 300 "$W/.err")"
	fi
	[ -n "${VERBOSE:-}" ] && echo "[$RC] $desc :: $(head -c 200 "$W/.err")" >&2
	return 0
}
finding() { FINDINGS+=("$1: $2"); echo "FINDING $1: $2" >&2; }
bump() { local v=$1; eval "$v=\$(( $v + 1 ))"; shift; finding "$@"; }
# rows FILE: data rows of a cowbench CSV (lines after the header)
rows() { [ -f "$1" ] && tail -n +2 "$1" | grep -c . || echo 0; }
# (cell, rep) pairs repeated in FILE
dups() { python3 - "$1" <<'PY'
import csv,sys,collections
try:
    r=list(csv.DictReader(open(sys.argv[1],newline='',errors='replace')))
except Exception as e:
    print(0); sys.exit()
c=collections.Counter((x.get('cell') or x.get('options'),x.get('rep'),x.get('rep_kind')) for x in r)
print(sum(v-1 for v in c.values() if v>1))
PY
}
report() {
	echo "== item $ITEM: inputs=$N_INPUTS crashes=$N_CRASH wrong_exit=$N_EXIT partial=$N_PARTIAL lost=$N_LOST dup=$N_DUP settings=$N_SETTINGS wrote_input=$N_WRITE_INPUT other=$N_OTHER"
	for f in "${FINDINGS[@]+"${FINDINGS[@]}"}"; do echo "   - $f"; done
	echo "TOTALS $ITEM $N_INPUTS $N_CRASH $N_EXIT $N_PARTIAL $N_LOST $N_DUP $N_SETTINGS $N_WRITE_INPUT $N_OTHER" >> "${TOTALS_FILE:-/dev/null}"
}

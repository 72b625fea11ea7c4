#!/usr/bin/env bash
# kernel/tests/ktap.h and run-kernel-tests.sh's one parser (ktap_results), on the host: the
# harness's output and kselftest's exit codes (0 pass, 1 fail, 4 all skipped); the guest
# programs' KTAP where the host kernel lets them run (cow_isolation) or makes them skip
# (no /proc/cow_stats, no vm.cow_reuse_around: a stock kernel); the parser's results for
# the guest programs' lines and for ksft's.
#
#   tests/ktap-test.sh SOURCE-DIR
set -uo pipefail
src=$1/kernel/tests
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
no() { echo "FAIL: $*" >&2; bad=1; }
cc=${CC:-cc}

# --- the harness: every kind of result, and the exit status each mix gives --------------------
cat > "$tmp/t.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include "ktap.h"
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "ok"))
			ktap_ok("case-ok");
		else if (!strcmp(argv[i], "okf"))
			ktap_okf("case-okf", "%d pages", 64);
		else if (!strcmp(argv[i], "fail"))
			ktap_fail("case-fail", "want %d got %d", 1, 2);
		else if (!strcmp(argv[i], "skip"))
			ktap_skip("case-skip", "no %s", "thing");
		else if (!strcmp(argv[i], "msg"))
			ktap_print_msg("note %d", 7);
		else if (!strcmp(argv[i], "plan3"))
			ktap_plan(3);
	}
	return ktap_finish();
}
C
$cc -Wall -Wextra -Werror -I"$src" -o "$tmp/t" "$tmp/t.c" || { echo "FAIL: ktap.h does not build" >&2; exit 1; }
# expect RC ARGS...: the exit status of one mix.
expect() {
	local want=$1 rc
	shift
	"$tmp/t" "$@" > "$tmp/t.out"
	rc=$?
	[[ $rc -eq $want ]] || no "ktap $*: exit $rc, want $want"
}
expect 0 ok okf msg
expect 1 ok fail skip
expect 4 skip skip
expect 0 ok skip
expect 0
expect 1 plan3 ok ok	# two of three planned ran
expect 0 plan3 ok skip okf
"$tmp/t" ok fail skip okf msg > "$tmp/t.out"
printf '%s\n' 'TAP version 13' 'ok 1 case-ok' 'not ok 2 case-fail # want 1 got 2' 'ok 3 case-skip # SKIP no thing' \
	'ok 4 case-okf # 64 pages' '# note 7' '1..4' '# Totals: pass:2 fail:1 xfail:0 xpass:0 skip:1 error:0' > "$tmp/want"
diff "$tmp/want" "$tmp/t.out" >&2 || no "ktap output differs from the expected (above)"

# --- the one parser -------------------------------------------------------------------------
eval "$(sed -n '/^ktap_results() {/,/^}/p' "$src/run-kernel-tests.sh")"
declare -F ktap_results > /dev/null || { echo "FAIL: no ktap_results() in run-kernel-tests.sh" >&2; exit 1; }
ktap_results "$tmp/t.out" prog > "$tmp/r"
printf '%s\n' 'prog: fail: case-fail' 'prog: pass: case-ok' 'prog: pass: case-okf' 'prog: skip: case-skip' |
	sort > "$tmp/want"
diff "$tmp/want" "$tmp/r" >&2 || no "ktap_results on ktap.h's output"
# ksft's forms, sections and exit lines, uffd-unit-tests' lines (as the mm comparison reads them).
printf '%s\n' '=== cow' 'TAP version 13' '1..3' 'ok 1 # SKIP hugetlb 1048576 kB' 'ok 2 Basic COW 4 kB' \
	'not ok 3 R/O pin 8 kB' 'Bail out! no memory' '=== exit 1' '=== uffd' 'Testing wp-fork on anon... done' \
	'Testing events on shmem... skipped [no wp]' 'Testing minor on anon... failed' '=== exit 0' > "$tmp/k.out"
printf '%s\n' 'cow: skip: hugetlb N kB' 'cow: pass: Basic COW N kB' 'cow: fail: R/O pin N kB' 'cow: bail: no memory' \
	'cow: exit: 1' 'uffd: pass: wp-fork on anon' 'uffd: skip: events on shmem' 'uffd: fail: minor on anon' \
	'uffd: exit: 0' | sort > "$tmp/want"
ktap_results "$tmp/k.out" > "$tmp/r"
diff "$tmp/want" "$tmp/r" >&2 || no "ktap_results on ksft's output"

# --- the guest programs on this host ----------------------------------------------------------
for p in cow_isolation cow_stats_check cow_reuse_around cow_precopy_edges cow_populate; do
	$cc -O2 -pthread -Wall -Wextra -Werror -o "$tmp/$p" "$src/$p.c" || no "$p does not build"
done
"$tmp/cow_isolation" --threads 2 --rounds 2 --pages 256 > "$tmp/iso.out"
rc=$?
[[ $rc -eq 0 ]] || no "cow_isolation: exit $rc"
[[ $(head -1 "$tmp/iso.out") == "TAP version 13" ]] || no "cow_isolation: no TAP header"
[[ $(ktap_results "$tmp/iso.out" iso) == "iso: pass: isolation threads=N rounds=N pages=N thp=N phases=N" ]] ||
	no "cow_isolation: results $(ktap_results "$tmp/iso.out" iso)"
# skip: the patched kernel's interfaces are absent here (where they exist, the guest runs test them)
if [[ ! -e /proc/cow_stats ]]; then
	"$tmp/cow_stats_check" 10 > "$tmp/s.out"
	rc=$?
	[[ $rc -eq 4 ]] || no "cow_stats_check without /proc/cow_stats: exit $rc, want 4"
	[[ $(ktap_results "$tmp/s.out" s) == "s: skip: stats-present" ]] || no "cow_stats_check: $(cat "$tmp/s.out")"
else
	echo "skip: cow_stats_check's skip (this kernel has /proc/cow_stats)"
fi
if [[ ! -e /proc/sys/vm/cow_reuse_around ]]; then
	"$tmp/cow_reuse_around" --pages 64 > "$tmp/r.out"
	rc=$?
	[[ $rc -eq 4 ]] || no "cow_reuse_around without vm.cow_reuse_around: exit $rc, want 4"
	[[ $(ktap_results "$tmp/r.out" r) == "r: skip: reuse-around" ]] || no "cow_reuse_around: $(cat "$tmp/r.out")"
else
	echo "skip: cow_reuse_around's skip (this kernel has vm.cow_reuse_around)"
fi
if ! grep -q '^cow_populate_batch_pages ' /proc/vmstat; then
	"$tmp/cow_populate" --pages 128 > "$tmp/p.out"
	rc=$?
	[[ $rc -eq 4 ]] || no "cow_populate without cow_populate_batch_pages: exit $rc, want 4"
	[[ $(ktap_results "$tmp/p.out" p) == "p: skip: cow-populate" ]] || no "cow_populate: $(cat "$tmp/p.out")"
else
	echo "skip: cow_populate's skip (this kernel has cow_populate_batch_pages)"
fi
if [[ ! -e /proc/sys/vm/cow_precopy ]]; then
	"$tmp/cow_precopy_edges" remote > "$tmp/e.out"	# the one phase that only reads a sysctl here
	rc=$?
	[[ $rc -eq 4 ]] || no "cow_precopy_edges remote without vm.cow_precopy: exit $rc, want 4"
	[[ $(ktap_results "$tmp/e.out" e) == "e: skip: remote" ]] || no "cow_precopy_edges: $(cat "$tmp/e.out")"
else
	echo "skip: cow_precopy_edges' skip (this kernel has vm.cow_precopy)"
fi
"$tmp/cow_reuse_around" --pages 7 > /dev/null 2>&1
rc=$?
[[ $rc -eq 2 ]] || no "cow_reuse_around --pages 7: exit $rc, want 2 (usage)"
[[ $bad -eq 0 ]] && echo "ok: ktap.h and ktap_results"
exit $bad

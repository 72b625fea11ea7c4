#!/usr/bin/env bash
# Cost columns of cowbench on the patched kernel (ctest label "kernel"), by
# construction: `stride --stride=2` writes pages 0, 2, 4, ...; with fixed
# pre-copy of depth 1 each fault copies the next page, which is never written,
# so precopy_wasted must be about touched (within 2 %, the kernel may skip a
# page) and copied_pages = cow_copies + precopy_wasted; with pre-copy off
# precopy_wasted is exactly 0 and anon_growth_kb is touched x 4 KiB within 2 %.
# One boot, two small runs (2 vCPUs are shared: keep it short).
#
#   kernel/tests/run-cost-tests.sh [--keep DIR] [--size SIZE]
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KDIR=$(cd "$HERE/.." && pwd)
KEEP=""
SIZE=8M
while [[ $# -gt 0 ]]; do
	case "$1" in
	--keep) KEEP=$2; shift ;;
	--size) SIZE=$2; shift ;;
	*) echo "usage: $0 [--keep DIR] [--size SIZE]" >&2; exit 2 ;;
	esac
	shift
done
case $SIZE in *[!0-9KMG]* | "") echo "run-cost-tests: bad --size '$SIZE'" >&2; exit 2 ;; esac

OUT=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/cowbench-costs.XXXXXX")}
mkdir -p "$OUT"

if ! PATCHED=$("$KDIR/build.sh" | tail -1) || [[ ! -s $PATCHED ]]; then
	echo "FAIL: build-patched"
	exit 1
fi

RUN="cowbench run --workload=stride --stride=2 --size=$SIZE --reps=2 --warmup=0 --precopy-depth=1"
if ! "$KDIR/vm-run.sh" --kernel "$PATCHED" --quiet-boot --timeout 900 --out "$OUT" \
	--log "$OUT/console.log" -- sh -c "
	$RUN --precopy=1 --output=/out/precopy1.csv &&
	$RUN --precopy=0 --output=/out/precopy0.csv" > "$OUT/vm.out" 2>&1; then
	tail -20 "$OUT/vm.out"
	echo "FAIL: guest run (see $OUT)"
	exit 1
fi

# Columns by name (python's csv module: cpu_model may be quoted).
python3 - "$OUT/precopy1.csv" "$OUT/precopy0.csv" <<'PY'
import csv, sys

failed = 0

def check(name, ok, detail):
    global failed
    print(("PASS: " if ok else "FAIL: ") + name + " (" + detail + ")")
    failed += not ok

def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))

for r in rows(sys.argv[1]):
    t, w = int(r["touched"]), r["precopy_wasted"]
    ok = r["status"] == "ok" and r["precopy"] == "1" and w != "" and abs(int(w) - t) <= 0.02 * t
    check("precopy1-wasted-is-touched", ok, f"rep {r['rep']}: touched {t}, precopy_wasted {w or 'empty'}")
    ok = w != "" and int(r["copied_pages"]) == int(r["cow_copies"]) + int(w)
    check("precopy1-copied-adds-up", ok,
          f"copied_pages {r['copied_pages']} = cow_copies {r['cow_copies']} + precopy_wasted {w}")
for r in rows(sys.argv[2]):
    t, w, g = int(r["touched"]), r["precopy_wasted"], r["anon_growth_kb"]
    check("precopy0-nothing-wasted", r["status"] == "ok" and w == "0" and r["copied_pages"] == str(t),
          f"rep {r['rep']}: touched {t}, copied_pages {r['copied_pages']}, precopy_wasted {w or 'empty'}")
    want = t * 4
    check("precopy0-anon-growth", g != "" and abs(int(g) - want) <= 0.02 * want,
          f"anon_growth_kb {g or 'empty'}, touched x 4 KiB = {want}")
print("logs:", sys.argv[1].rsplit("/", 1)[0])
sys.exit(1 if failed else 0)
PY

#!/usr/bin/env bash
# ctest kernel_redis (label kernel): the Redis study's smoke, a few seconds of guest time.
# analysis/redis/redis-study.sh --smoke boots the patched kernel once: redis-server with 20,000 keys, the
# "off" mode only, one BGSAVE under random SETs and one under sequential SETs (analysis/redis/redis_load).
# Checks: redis.csv has its columns and a row per metric for both patterns; every save measured a
# fork and a window; the server's own COW copies (taskstats, exact) are > 0; Redis's own COW size
# (rdb_last_cow_size, the child's Private_Dirty at its end) is > 0 and agrees with the kernel's
# count: each page the parent copies leaves the child's original private to the child, so at
# least the parent's copies made before the child's last look (three quarters of them: the parent
# keeps writing until the save is reaped, up to 1/hz later) and at most every COW copy in the
# guest during the window (/proc/cow_stats faults) plus what the child itself allocated (16 MiB).
# usage: tests/redis-smoke-test.sh BUILD_DIR
set -uo pipefail
BUILD=$(realpath "$1")
HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cowbench-redis.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
if [[ ! -x $BUILD/analysis/redis/redis_load ]]; then
	echo "FAIL: $BUILD/analysis/redis/redis_load is not built (libhiredis-dev: tests/install-deps.sh)"
	exit 1
fi
if ! "$HERE/analysis/redis/redis-study.sh" --smoke --build "$BUILD" "$WORK/out"; then
	echo "FAIL: redis-study.sh --smoke"
	tail -30 "$WORK/out/redis-patched/stderr" 2>/dev/null
	exit 1
fi
python3 - "$WORK/out" <<'EOF'
import csv, os, sys
out = sys.argv[1]
with open(os.path.join(out, "redis.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
    header = rows and list(rows[0].keys())
want = ["kernel", "mode", "pattern", "metric", "unit", "saves", "centre", "ci_lo", "ci_hi", "ci_level",
        "ratio_vs_off", "ratio_ci_lo", "ratio_ci_hi", "ratio_text", "p_adj", "verdict", "meaning"]
assert header == want, f"redis.csv columns: {header}"
metrics = {"fork_ms", "bgsave_s", "rdb_last_cow_size_mib", "parent_cow_faults", "precopied_pages",
           "kernel_cow_mib", "wasted_pages", "in_p50_ms", "in_p99_ms", "in_p999_ms", "in_max_ms",
           "out_p50_ms", "out_p99_ms"}
for pattern in ("random", "seq"):
    got = {r["metric"] for r in rows if (r["kernel"], r["mode"], r["pattern"]) == ("patched", "off", pattern)}
    assert metrics <= got, f"{pattern}: metrics missing: {sorted(metrics - got)}"
with open(os.path.join(out, "redis-saves.csv"), newline="") as f:
    saves = list(csv.DictReader(f))
assert len(saves) == 2, f"{len(saves)} saves, want 2"
for s in saves:
    n = lambda k: float(s[k])  # noqa: E731
    assert n("t_end_ns") > n("t_forked_ns") >= n("t_bgsave_ns"), f"window marks out of order: {s}"
    assert n("latest_fork_usec") > 0, "no fork time"
    parent = n("parent_wpcopy") * 4096
    cow = n("rdb_last_cow_size")
    faults = n("cow_faults") * 4096
    assert parent > 0, f"{s['pattern']}: the server made no COW copy under SET load"
    assert cow > 0, f"{s['pattern']}: rdb_last_cow_size is 0"
    assert cow >= 0.75 * parent, f"{s['pattern']}: rdb_last_cow_size {cow:.0f} B < 0.75 x the parent's copies {parent:.0f} B"
    assert cow <= faults + (16 << 20), f"{s['pattern']}: rdb_last_cow_size {cow:.0f} B > all COW copies {faults:.0f} B + 16 MiB"
    assert n("precopy_success") == 0, "pre-copy off copied ahead"
    assert float(s["in_requests"]) > 0, "no request inside the save window"
    print(f"ok: {s['pattern']}: parent COW copies {parent / 2**20:.2f} MiB, rdb_last_cow_size {cow / 2**20:.2f} MiB, "
          f"all COW copies {faults / 2**20:.2f} MiB, {float(s['in_requests']):.0f} requests in the window")
env = open(os.path.join(out, "redis-patched", "env.txt")).read()
assert "accel=tcg" in env or "accel=kvm" in env, f"env.txt names no accelerator: {env}"
md = open(os.path.join(out, "redis.md")).read()
assert md.startswith("## Redis BGSAVE under SET load"), "redis.md does not open with its section"
print("ok: redis.csv, redis-saves.csv, redis.md")
EOF

#!/usr/bin/env bash
# Install, build and run the whole test suite: the README's second command and CI's.
#   1. a warning-free build (-Wall -Wextra -Werror) and every ctest test;
#   2. the same suite under AddressSanitizer + UndefinedBehaviorSanitizer
#      (the kernel tests are not repeated there: they test the guest kernel, not our memory safety).
# Set COWBENCH_SKIP_KERNEL=1 to leave out the QEMU kernel tests (label "kernel").
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

./tests/install-deps.sh

exclude=()
[ "${COWBENCH_SKIP_KERNEL:-0}" = 1 ] && exclude=(-LE kernel)

echo "== build (warnings are errors) and test =="
cmake -S . -B build-ci -DCOWBENCH_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-ci -j"$jobs"
(cd build-ci && ctest --output-on-failure "${exclude[@]}")

echo "== AddressSanitizer + UndefinedBehaviorSanitizer =="
cmake -S . -B build-asan -DCOWBENCH_WERROR=ON -DCOWBENCH_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	ctest --output-on-failure -LE kernel)

#!/usr/bin/env bash
# Install what cowbench needs to build, test and plot on Debian 12 (apt).
# Packages already present are not reinstalled, so reruns are quick and work offline.
set -euo pipefail

packages=(
	build-essential cmake pkg-config git
	check libsubunit-dev   # unit tests (Check links libsubunit on Debian)
	libnuma-dev            # NUMA nodes and placement
	libnl-genl-3-dev       # taskstats (COW copies counted by the kernel) over generic netlink
	libinih-dev            # matrix files (INI) for cowbench matrix
	libdw-dev              # stat --where=code: function names from ELF and debug files (elfutils libdwfl)
	python3 redis-server redis-tools # stat --where validation tests (CPython, Redis BGSAVE); skipped without
	libhiredis-dev         # analysis/redis/redis_load: the Redis BGSAVE load generator of the kernel study
	python3-dbg            # debug symbols for Debian's python3, so the CPython test's frames have names
	gnuplot-nox            # plots (cowbench plot, the study's reports)
	zlib1g-dev             # cowbench info: the kernel config, also gzip'd in /proc/config.gz
	strace                 # output_race: delays one writer's flock to open the race between two writers
	tmux                   # screen tests: progress, rows and the closing summary on a real terminal
	slurm-wlm munge        # the slurm test: docs/guide.md's array job on a single-node Slurm (tests/slurm-test.sh)
	clang libclang-rt-14-dev # libFuzzer targets of tests/fuzz (ctest -L fuzz; without them only the corpus replays)
)
# Callers may ask for more, e.g. the kernel scripts: install-deps.sh qemu-system-x86 busybox-static
# install-deps.sh --check PKG...: install nothing; print the missing ones among PKG and exit 1 if any.
if [ "${1:-}" = --check ]; then
	shift
	missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && exit 0
	echo "${missing[*]}"
	exit 1
fi
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "cowbench: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Build the mm selftests that touch copy-on-write, from tools/testing/selftests/mm of Debian's
# linux-source-6.12, as static binaries against that tree's own UAPI headers (make headers_install):
#
#   cow              -> guest-bin/cow-selftest (every guest has it in /bin)
#   soft-dirty mkdirty pagemap_ioctl gup_longterm uffd-unit-tests madv_populate
#   ksm_functional_tests
#                    -> mm-selftests/NAME (vm-run.sh --add them where a test needs them)
#
# (ksm_tests, the other KSM program, is left out: it runs one test per invocation with
# arguments and measures merge/unmerge speed; ksm_functional_tests is its pass/fail side.)
#
# under ${XDG_CACHE_HOME:-$HOME/.cache}/cowbench/. With liburing-dev installed, the io_uring
# fixed-buffer cases of cow.c and gup_longterm are included.
#
#   kernel/tests/build-mm-selftests.sh      -> prints each binary's path, cow-selftest last
set -euo pipefail

SRC_PKG=linux-source-6.12
SRC_TAR=/usr/src/linux-source-6.12.tar.xz
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/cowbench
COW_BIN="$CACHE/guest-bin/cow-selftest"
MM_DIR="$CACHE/mm-selftests"
# NAME:EXTRA-SOURCES (vm_util.c and thp_settings.c go with every one)
TESTS=(soft-dirty: mkdirty: pagemap_ioctl: gup_longterm: uffd-unit-tests:uffd-common.c madv_populate:
	ksm_functional_tests: cow:)

log() { echo "build-mm-selftests: $*" >&2; }
"$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/install-deps.sh" \
	"$SRC_PKG" build-essential rsync xz-utils >&2

# liburing is optional: without it cow.c and gup_longterm skip their io_uring tests.
if ! dpkg -s liburing-dev >/dev/null 2>&1; then
	sudo=""
	[[ $(id -u) -ne 0 ]] && sudo=sudo
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liburing-dev >&2 ||
		log "liburing-dev not installable; io_uring tests will be skipped"
fi

bin_of() { if [[ $1 == cow ]]; then echo "$COW_BIN"; else echo "$MM_DIR/$1"; fi; }

version=$(dpkg-query -W -f='${Version}' "$SRC_PKG")
uring=0
dpkg -s liburing-dev >/dev/null 2>&1 && uring=1
stamp="$version uring=$uring"
fresh=1
for t in "${TESTS[@]}"; do
	b=$(bin_of "${t%%:*}")
	[[ -x $b && -f $b.stamp && $(cat "$b.stamp") == "$stamp" ]] || fresh=0
done
if [[ $fresh -eq 1 ]]; then
	for t in "${TESTS[@]}"; do bin_of "${t%%:*}"; done
	exit 0
fi

mkdir -p "$CACHE/guest-bin" "$MM_DIR"
T=$(mktemp -d "${TMPDIR:-/tmp}/mm-selftests.XXXXXX")
trap 'rm -rf "$T"' EXIT
log "extracting $SRC_TAR"
tar -C "$T" -xf "$SRC_TAR"
S="$T/linux-source-6.12"
log "make headers_install"
make -s -C "$S" headers_install INSTALL_HDR_PATH="$T/hdr" >/dev/null
M="$S/tools/testing/selftests/mm"
if [[ $uring -eq 1 ]]; then
	echo "#define LOCAL_CONFIG_HAVE_LIBURING 1" > "$M/local_config.h"
	libs=(-luring)
else
	: > "$M/local_config.h"
	libs=()
fi
for t in "${TESTS[@]}"; do
	name=${t%%:*}
	extra=()
	[[ -n ${t#*:} ]] && extra=("${t#*:}")
	b=$(bin_of "$name")
	log "compiling $name.c (liburing: $uring)"
	(cd "$M" && gcc -static -O2 -Wall -U_FORTIFY_SOURCE -I "$T/hdr/include" -isystem "$S/tools/include/uapi" \
		-I "$S/tools/testing/selftests" -o "$b.tmp" "$name.c" "${extra[@]}" vm_util.c thp_settings.c \
		"${libs[@]}" -lpthread -lm 2> "$T/cc.log") || { cat "$T/cc.log" >&2; exit 1; }
	mv "$b.tmp" "$b"
	echo "$stamp" > "$b.stamp"
	echo "$b"
done

#!/usr/bin/env bash
# Build tools/testing/selftests/mm/cow.c of Debian's linux-source-6.12 as a
# static binary, against that tree's own UAPI headers (make headers_install).
# With liburing-dev installed, the io_uring fixed-buffer tests are included.
#
#   kernel/tests/build-cow-selftest.sh      -> prints the binary's path
#
# The binary is cached as ${XDG_CACHE_HOME:-$HOME/.cache}/cowbench/guest-bin/cow-selftest
# (vm-run.sh puts everything in that directory into the guest's /bin).
set -euo pipefail

SRC_PKG=linux-source-6.12
SRC_TAR=/usr/src/linux-source-6.12.tar.xz
OUTDIR=${XDG_CACHE_HOME:-$HOME/.cache}/cowbench/guest-bin
BIN="$OUTDIR/cow-selftest"

log() { echo "build-cow-selftest: $*" >&2; }
"$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/install-deps.sh" \
	"$SRC_PKG" build-essential rsync xz-utils >&2

# liburing is optional: without it cow.c skips its io_uring tests.
if ! dpkg -s liburing-dev >/dev/null 2>&1; then
	sudo=""
	[[ $(id -u) -ne 0 ]] && sudo=sudo
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liburing-dev >&2 ||
		log "liburing-dev not installable; io_uring tests will be skipped"
fi

version=$(dpkg-query -W -f='${Version}' "$SRC_PKG")
uring=0
dpkg -s liburing-dev >/dev/null 2>&1 && uring=1
stamp="$version uring=$uring"
if [[ -x $BIN && -f $BIN.stamp && $(cat "$BIN.stamp") == "$stamp" ]]; then
	echo "$BIN"
	exit 0
fi

mkdir -p "$OUTDIR"
T=$(mktemp -d "${TMPDIR:-/tmp}/cow-selftest.XXXXXX")
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
log "compiling cow.c (liburing: $uring)"
(cd "$M" && gcc -static -O2 -Wall -U_FORTIFY_SOURCE -I "$T/hdr/include" -isystem "$S/tools/include/uapi" \
	-I "$S/tools/testing/selftests" -o "$BIN.tmp" cow.c vm_util.c thp_settings.c "${libs[@]}" -lpthread -lm \
	2> "$T/cc.log") || { cat "$T/cc.log" >&2; exit 1; }
mv "$BIN.tmp" "$BIN"
echo "$stamp" > "$BIN.stamp"
echo "$BIN"

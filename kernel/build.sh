#!/usr/bin/env bash
# Build the cowbench guest kernel (Debian's linux-source-6.12 + kernel/patches).
#
#   kernel/build.sh [--stock] [--debug] [--jobs N] [--keep-tree] [--print-key]
#
#   --stock      build without kernel/patches (the baseline kernel)
#   --debug      also merge config/cowbench-debug.config (MEMCG, KSM, MMU
#                notifiers, NUMA balancing, soft-dirty, memory failure,
#                lockdep, KASAN, tracing): the maintainer's test kernel
#   --jobs N     parallel make jobs (default: nproc)
#   --keep-tree  keep the extracted, configured source tree after the build
#   --print-key  print the cache key and exit
#   --cached-only  print the cached image and exit 0, or exit 10 when it would have to
#                install packages or build (nothing is installed or built): how cowbench
#                asks before anything heavy (run/matrix --kernel without --build)
#
# The image is cached in
#   ${COWBENCH_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cowbench/kernel}/<key>/bzImage
# where <key> hashes the source package version and tarball, the patches (unless
# --stock), the config fragment and the compiler version, so an unchanged kernel
# is never rebuilt.  The last line printed is the image path.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ORIG_ARGS="$*"
STOCK=0
DEBUG=0
JOBS=$(nproc 2>/dev/null || echo 2)
KEEP_TREE=0
PRINT_KEY=0
CACHED_ONLY=0

usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [[ $# -gt 0 ]]; do
	case "$1" in
	--stock) STOCK=1 ;;
	--debug) DEBUG=1 ;;
	--jobs) JOBS=$2; shift ;;
	--jobs=*) JOBS=${1#*=} ;;
	--keep-tree) KEEP_TREE=1 ;;
	--print-key) PRINT_KEY=1 ;;
	--cached-only) CACHED_ONLY=1 ;;
	-h|--help) usage 0 ;;
	*) echo "build.sh: unknown argument: $1" >&2; usage 2 ;;
	esac
	shift
done

log() { echo "build.sh: $*" >&2; }

# ---- dependencies ---------------------------------------------------------
# tests/install-deps.sh is the one place that apt-installs (and skips what is there).
ensure_packages() {
	"$HERE/../tests/install-deps.sh" "$@" >&2
}

SRC_PKG=linux-source-6.12
SRC_TAR=/usr/src/linux-source-6.12.tar.xz
BUILD_PACKAGES=("$SRC_PKG" build-essential flex bison bc libelf-dev libssl-dev cpio xz-utils)
if [[ $CACHED_ONLY -eq 1 ]]; then
	if ! missing=$("$HERE/../tests/install-deps.sh" --check "${BUILD_PACKAGES[@]}"); then
		log "not built: building needs the packages $missing"
		exit 10
	fi
else
	ensure_packages "${BUILD_PACKAGES[@]}"
fi

FRAGMENT="$HERE/config/cowbench-guest.config"
FRAGMENTS=("$FRAGMENT")
[[ $DEBUG -eq 1 ]] && FRAGMENTS+=("$HERE/config/cowbench-debug.config")
PATCHES=()
if [[ $STOCK -eq 0 ]]; then
	for p in "$HERE"/patches/*.patch; do
		# The cover letter (0000-cover-letter.patch) carries no diff.
		[[ -e $p && $(basename "$p") != 0000-* ]] && PATCHES+=("$p")
	done
	[[ ${#PATCHES[@]} -gt 0 ]] || { log "no patches in $HERE/patches"; exit 1; }
fi

# ---- cache key ------------------------------------------------------------
src_version=$(dpkg-query -W -f='${Version}' "$SRC_PKG")
key=$( {
	echo "cowbench-kernel-v1"
	echo "source $SRC_PKG $src_version $(stat -c %s "$SRC_TAR")"
	echo "flavour $([[ $STOCK -eq 1 ]] && echo stock || echo patched)"
	gcc --version | head -1
	echo "fragment"; cat "$FRAGMENT"
	[[ $DEBUG -eq 1 ]] && { echo "debug fragment"; cat "${FRAGMENTS[1]}"; }
	for p in "${PATCHES[@]}"; do echo "patch $(basename "$p")"; cat "$p"; done
} | sha256sum | cut -c1-16)
flavour=$([[ $STOCK -eq 1 ]] && echo stock || echo patched)
[[ $DEBUG -eq 1 ]] && flavour+=-debug
key="6.12-$flavour-$key"
if [[ $PRINT_KEY -eq 1 ]]; then
	echo "$key"
	exit 0
fi

CACHE_ROOT=${COWBENCH_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cowbench/kernel}
CACHE_DIR="$CACHE_ROOT/$key"
IMAGE="$CACHE_DIR/bzImage"
mkdir -p "$CACHE_ROOT"

if [[ -s $IMAGE ]]; then
	log "cached: $key"
	echo "$IMAGE"
	exit 0
fi
if [[ $CACHED_ONLY -eq 1 ]]; then
	log "not built yet: $key"
	exit 10
fi

# One build at a time (the machine has few cores); waiters reuse the result, and are told whose
# build they wait for (the holder writes itself into .build.holder once it has the lock).
HOLDER="$CACHE_ROOT/.build.holder"
exec 9>>"$CACHE_ROOT/.build.lock"
if ! flock -n 9; then
	log "another kernel build is running ($(head -c 300 "$HOLDER" 2>/dev/null || echo "holder unknown")); waiting for it"
	flock 9
fi
printf 'pid %s: %s, since %s\n' "$$" "$(tr '\0' ' ' </proc/$PPID/cmdline 2>/dev/null | head -c 200) -> build.sh $ORIG_ARGS" \
	"$(date -u +%H:%M:%SZ)" >"$HOLDER.$$" && mv -f "$HOLDER.$$" "$HOLDER"
trap 'rm -f "$HOLDER"' EXIT

if [[ -s $IMAGE ]]; then
	log "cached: $key"
	echo "$IMAGE"
	exit 0
fi

# ---- extract, patch, configure, build -----------------------------------------
WORK_ROOT=${COWBENCH_KERNEL_WORK:-/var/tmp/cowbench-kernel-build}
WORK="$WORK_ROOT/$key"
rm -rf "$WORK"
mkdir -p "$WORK"
log "extracting $SRC_TAR into $WORK"
tar -C "$WORK" -xf "$SRC_TAR"
mv "$WORK/linux-source-6.12" "$WORK/src"
cd "$WORK/src"

for p in "${PATCHES[@]}"; do
	log "applying $(basename "$p")"
	patch -p1 --forward --quiet < "$p"
done

log "configuring: tinyconfig + ${FRAGMENTS[*]##*/}"
make -s O="$WORK/obj" tinyconfig >/dev/null
./scripts/kconfig/merge_config.sh -m -O "$WORK/obj" "$WORK/obj/.config" "${FRAGMENTS[@]}" >/dev/null
make -s O="$WORK/obj" olddefconfig >/dev/null

# Every option the fragment asks for must survive (a dependency may drop it).
bad=0
while IFS= read -r line; do
	[[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]] || continue
	opt=${BASH_REMATCH[1]}
	val=${BASH_REMATCH[2]}
	[[ $STOCK -eq 1 && $opt == CONFIG_COW_* ]] && continue
	if [[ $val == n ]]; then
		grep -qx "$opt=y" "$WORK/obj/.config" && { log "config: $opt is set"; bad=1; }
	elif ! grep -qx "$opt=$val" "$WORK/obj/.config"; then
		log "config: $opt=$val did not survive olddefconfig"
		bad=1
	fi
done < <(cat "${FRAGMENTS[@]}")
[[ $bad -eq 0 ]] || exit 1

log "building bzImage ($flavour, -j$JOBS); this takes a few minutes"
if ! make -s O="$WORK/obj" -j"$JOBS" bzImage > "$WORK/build.log" 2>&1; then
	tail -40 "$WORK/build.log" >&2
	log "build failed; full log: $WORK/build.log"
	exit 1
fi
grep -E "warning:" "$WORK/build.log" >&2 || true

mkdir -p "$CACHE_DIR.tmp"
cp "$WORK/obj/arch/x86/boot/bzImage" "$CACHE_DIR.tmp/bzImage"
cp "$WORK/obj/.config" "$CACHE_DIR.tmp/config"
cp "$WORK/obj/System.map" "$CACHE_DIR.tmp/System.map"
{
	echo "source=$SRC_PKG $src_version"
	echo "flavour=$flavour"
	for p in "${PATCHES[@]}"; do echo "patch=$(basename "$p")"; done
	echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$CACHE_DIR.tmp/info"
rm -rf "$CACHE_DIR"
mv "$CACHE_DIR.tmp" "$CACHE_DIR"

if [[ $KEEP_TREE -eq 0 ]]; then
	cd /
	rm -rf "$WORK"
else
	log "source tree kept in $WORK"
fi
echo "$IMAGE"

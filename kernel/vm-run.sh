#!/usr/bin/env bash
# Boot the cowbench guest kernel under QEMU and run one command in it.
#
#   kernel/vm-run.sh [--stock] [--smp N] [--mem SIZE] [--numa 2] [--out DIR]
#                    [--cowbench PATH|none] [--kernel BZIMAGE] [--timeout SEC]
#                    [--add FILE] [--data FILE] [--append ARGS] [--log FILE]
#                    [--quiet-boot] [--rows FILE] [--icount] [--kcount PREFIX,ADDR]
#                    -- COMMAND...
#
#   --stock        boot the stock 6.12 kernel instead of the patched one
#   --smp N        guest CPUs (default 2)
#   --mem SIZE     guest memory (default 1G)
#   --numa 2       split CPUs and memory over two emulated NUMA nodes
#   --out DIR      files the command writes under /out in the guest land in DIR
#   --cowbench P   static cowbench binary to put in the guest as /bin/cowbench;
#                  default: build it with cmake into build-static/ (a failed
#                  build only warns); "none" to leave it out
#   --kernel F     boot this bzImage instead of running kernel/build.sh
#   --timeout SEC  kill QEMU after SEC seconds (default 1800); exit status 124
#   --add FILE     also copy FILE into the guest's /bin (repeatable); a dynamically
#                  linked FILE brings its shared libraries (ldd-resolved, same paths)
#   --data FILE    copy the regular file FILE into the guest as /data/NAME, NAME
#                  being its base name ([A-Za-z0-9][A-Za-z0-9._+-]*, distinct;
#                  repeatable; read-only there): input files such as a replay
#                  trace. The name is data: it is never part of a shell line
#   --append ARGS  extra kernel command line arguments
#   --log FILE     keep the whole console log in FILE
#   --quiet-boot   do not echo the boot messages, only the command's output
#                  (kernel splats are always shown)
#   --rows FILE    a second serial port (the guest's /dev/ttyS1) whose bytes
#                  land in FILE as they come: cowbench matrix --kernel's rows
#   --icount       TCG with -icount shift=0,sleep=off: the guest's clock advances
#                  1 ns per instruction it executes, so every time measured inside
#                  is an instruction count (deterministic, comparable across boots
#                  and kernels); never KVM. Also COWBENCH_VM_ICOUNT=1, and
#                  COWBENCH_VM_MEM=SIZE sets --mem's default (cowbench matrix --kernel
#                  passes both through the environment)
#   --kcount PREFIX,ADDR  count the guest kernel's instructions per translated
#                  block with the TCG plugin lib/qemu-kcount.c (built here) and
#                  write every count to PREFIX.N each time the kernel runs the
#                  code at ADDR (hex, e.g. ksys_sync's address from System.map:
#                  the guest marks a window with sync()); kernel/tests/kcount-compare.sh
#
# The guest gets busybox, the test programs of kernel/tests/ (as /bin/<name>),
# the mm COW selftest when it has been built (/bin/cow-selftest), and
# cowbench.  COMMAND runs as root through /bin/sh in /.  Its stdout is our
# stdout and nothing else (vm-run.sh -- cowbench run ... > rows.csv is a CSV),
# delivered when it ends; its stderr, the boot and every kernel message stream
# to our stderr (and --log).  We exit with its status, or 1 when a kernel BUG/WARNING/Oops/
# panic appears on the console, or 124 on timeout.  A splat report that ends
# before the command starts and names no cow_* function boots the guest once
# more (see lib/qemu_supervise.py); a second one fails.  KVM is used only if a
# short probe boot with it succeeds (cached per host kernel), otherwise TCG;
# the guest's /proc/cmdline says which (cowbench.accel=kvm or tcg).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
STOCK=0
SMP=2
MEM=${COWBENCH_VM_MEM:-1G}
ICOUNT=${COWBENCH_VM_ICOUNT:-0}
NUMA=0
OUT=""
COWBENCH=""
KERNEL=""
TIMEOUT=1800
APPEND=""
LOG=""
QUIET=""
KCOUNT=""
ADD=()
DATA=()
ROWS=""

usage() { sed -n '2,48p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
log() { echo "vm-run: $*" >&2; }

while [[ $# -gt 0 ]]; do
	case "$1" in
	--stock) STOCK=1 ;;
	--smp) SMP=$2; shift ;;
	--smp=*) SMP=${1#*=} ;;
	--mem) MEM=$2; shift ;;
	--mem=*) MEM=${1#*=} ;;
	--numa) NUMA=$2; shift ;;
	--numa=*) NUMA=${1#*=} ;;
	--out) OUT=$2; shift ;;
	--out=*) OUT=${1#*=} ;;
	--cowbench) COWBENCH=$2; shift ;;
	--cowbench=*) COWBENCH=${1#*=} ;;
	--kernel) KERNEL=$2; shift ;;
	--kernel=*) KERNEL=${1#*=} ;;
	--timeout) TIMEOUT=$2; shift ;;
	--timeout=*) TIMEOUT=${1#*=} ;;
	--add) ADD+=("$2"); shift ;;
	--add=*) ADD+=("${1#*=}") ;;
	--data) DATA+=("$2"); shift ;;
	--data=*) DATA+=("${1#*=}") ;;
	--append) APPEND=$2; shift ;;
	--append=*) APPEND=${1#*=} ;;
	--log) LOG=$2; shift ;;
	--log=*) LOG=${1#*=} ;;
	--quiet-boot) QUIET=--quiet-boot ;;
	--icount) ICOUNT=1 ;;
	--kcount) KCOUNT=$2; shift ;;
	--kcount=*) KCOUNT=${1#*=} ;;
	--rows) ROWS=$2; shift ;;
	--rows=*) ROWS=${1#*=} ;;
	-h|--help) usage 0 ;;
	--) shift; break ;;
	*) log "unknown argument: $1"; usage 2 ;;
	esac
	shift
done
[[ $# -gt 0 ]] || { log "no COMMAND given"; usage 2; }
[[ $NUMA == 0 || $NUMA == 1 || $NUMA == 2 ]] || { log "--numa supports 2 nodes"; exit 2; }
# --kcount: an output prefix without commas (QEMU splits plugin options on them) and a hex address.
if [[ -n $KCOUNT ]]; then
	[[ $KCOUNT =~ ^([^,]+),(0x)?([0-9a-fA-F]{1,16})$ ]] || { log "--kcount wants PREFIX,HEXADDR"; exit 2; }
	KCOUNT_OUT=${BASH_REMATCH[1]}
	KCOUNT_MARK=${BASH_REMATCH[3]}
	[[ -d $(dirname "$KCOUNT_OUT") ]] || { log "--kcount: no directory for '$KCOUNT_OUT'"; exit 2; }
fi
# --data files: checked before anything is built or booted.
declare -A DATA_NAMES=()
for f in "${DATA[@]}"; do
	name=${f##*/}
	if [[ ! $name =~ ^[A-Za-z0-9][A-Za-z0-9._+-]*$ ]]; then
		log "--data: the base name of '$f' must be [A-Za-z0-9][A-Za-z0-9._+-]*"; exit 2
	fi
	[[ -f $f && ! -L $f ]] || { log "--data: '$f' is not a regular file"; exit 2; }
	[[ -r $f ]] || { log "--data: cannot read '$f'"; exit 2; }
	[[ -z ${DATA_NAMES[$name]:-} ]] || { log "--data: two files named '$name'"; exit 2; }
	DATA_NAMES[$name]=1
done

# tests/install-deps.sh is the one place that apt-installs (and skips what is there).
ensure_packages() {
	"$HERE/../tests/install-deps.sh" "$@" >&2
}
ensure_packages qemu-system-x86 busybox-static cpio gzip gcc libc6-dev python3

CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/cowbench
mkdir -p "$CACHE"

# ---- kernel ------------------------------------------------------------------
if [[ -z $KERNEL ]]; then
	bargs=()
	[[ $STOCK -eq 1 ]] && bargs+=(--stock)
	KERNEL=$("$HERE/build.sh" "${bargs[@]}" | tail -1)
fi
[[ -s $KERNEL ]] || { log "no kernel image: $KERNEL"; exit 2; }

# ---- guest programs -----------------------------------------------------------
GUEST_BIN="$CACHE/guest-bin"
mkdir -p "$GUEST_BIN"
# Rebuilt when the source differs (by content: several checkouts share this cache).
for src in "$HERE"/tests/*.c; do
	[[ -e $src ]] || continue
	bin="$GUEST_BIN/$(basename "$src" .c)"
	sum=$(cat "$src" "$HERE/tests/cowtest.h" "$HERE/tests/ktap.h" | sha256sum | cut -c1-16)
	if [[ ! -x $bin || ! -f $bin.src || $(cat "$bin.src") != "$sum" ]]; then
		gcc -static -O2 -pthread -Wall -o "$bin.tmp" "$src" && mv "$bin.tmp" "$bin" && echo "$sum" > "$bin.src"
	fi
done

if [[ -z $COWBENCH ]]; then
	COWBENCH="$REPO/build-static/cli/cowbench"
	if (cd "$REPO" && cmake -S . -B build-static -DCOWBENCH_STATIC_CLI=ON \
		-DCOWBENCH_BUILD_TESTS=OFF >/dev/null && cmake --build build-static >/dev/null) 2>"$CACHE/cowbench-build.err"; then
		[[ -x $COWBENCH ]] || COWBENCH=$(find "$REPO/build-static" -type f -name cowbench -perm -u+x | head -1)
	else
		log "warning: static cowbench did not build (see $CACHE/cowbench-build.err); guest has no cowbench"
		COWBENCH=""
	fi
elif [[ $COWBENCH == none ]]; then
	COWBENCH=""
fi
if [[ -n $COWBENCH ]] && [[ ! -x $COWBENCH ]]; then
	log "warning: cowbench binary $COWBENCH not found; guest has no cowbench"
	COWBENCH=""
fi
if [[ -n $COWBENCH ]] && ! file -L "$COWBENCH" 2>/dev/null | grep -q "statically linked"; then
	command -v file >/dev/null && log "warning: $COWBENCH is not statically linked; it may not run in the guest"
fi

# ---- initramfs -------------------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cowbench-vm.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ROOT="$WORK/root"
mkdir -p "$ROOT"/{bin,sbin,etc,proc,sys,dev,tmp,out,run,root}
cp /bin/busybox "$ROOT/bin/busybox"
cp "$HERE/lib/guest-init.sh" "$ROOT/init"
chmod 755 "$ROOT/init"
cp "$GUEST_BIN"/* "$ROOT/bin/" 2>/dev/null || true
[[ -n $COWBENCH ]] && cp "$COWBENCH" "$ROOT/bin/cowbench"
# A dynamic program (Debian's redis-server, analysis/redis/redis_load) runs with the host's own libraries,
# copied at the paths ldd resolves them to (the loader included).
add_program() {
	cp -L "$1" "$ROOT/bin/"
	local lib
	while read -r lib; do
		[[ -n $lib ]] || continue
		mkdir -p "$ROOT$(dirname "$lib")"
		cp -L "$lib" "$ROOT$lib"
	done < <(ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
}
for f in "${ADD[@]}"; do add_program "$f"; done
if [[ ${#DATA[@]} -gt 0 ]]; then
	mkdir -p "$ROOT/data"
	for f in "${DATA[@]}"; do
		cp -- "$f" "$ROOT/data/${f##*/}"
		chmod 444 "$ROOT/data/${f##*/}"
	done
fi
echo "root:x:0:0:root:/root:/bin/sh" > "$ROOT/etc/passwd"
echo "nobody:x:65534:65534:nobody:/:/bin/false" >> "$ROOT/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$ROOT/etc/group"
{
	echo "cd /"
	q=""
	for arg in "$@"; do
		q+="'${arg//\'/\'\\\'\'}' "
	done
	echo "$q"
} > "$ROOT/cmd"
(cd "$ROOT" && find . | cpio -o -H newc --quiet | gzip -1) > "$WORK/initramfs.cpio.gz"

# ---- QEMU ---------------------------------------------------------------------
mem_mb() {
	local m=$1
	case "$m" in
	*G|*g) echo $(( ${m%?} * 1024 )) ;;
	*M|*m) echo "${m%?}" ;;
	*) echo $(( m / 1048576 )) ;;
	esac
}
MEMMB=$(mem_mb "$MEM")
SMPARG=$SMP
# One socket per node: CPUs sharing a cache across nodes make the guest WARN.
if [[ $NUMA == 2 && $SMP -ge 2 ]]; then
	(( SMP % 2 == 0 )) || { log "--numa 2 needs an even --smp"; exit 2; }
	SMPARG="$SMP,sockets=2,cores=$(( SMP / 2 )),threads=1"
fi
QEMU=(qemu-system-x86_64 -nodefaults -no-user-config -display none -serial stdio
	-no-reboot -kernel "$KERNEL" -initrd "$WORK/initramfs.cpio.gz" -smp "$SMPARG")
if [[ $NUMA == 2 ]]; then
	half=$(( MEMMB / 2 ))
	QEMU+=(-m "${MEMMB}M"
		-object "memory-backend-ram,id=m0,size=${half}M"
		-object "memory-backend-ram,id=m1,size=$(( MEMMB - half ))M")
	if [[ $SMP -ge 2 ]]; then
		QEMU+=(-numa "node,nodeid=0,cpus=0-$(( SMP / 2 - 1 )),memdev=m0"
			-numa "node,nodeid=1,cpus=$(( SMP / 2 ))-$(( SMP - 1 )),memdev=m1")
	else
		QEMU+=(-numa "node,nodeid=0,cpus=0,memdev=m0" -numa "node,nodeid=1,memdev=m1")
	fi
else
	QEMU+=(-m "${MEMMB}M")
fi
if [[ -n $KCOUNT ]]; then
	cc -O2 -shared -fPIC -Wall -Wextra -Werror -o "$WORK/qemu-kcount.so" "$HERE/lib/qemu-kcount.c" ||
		{ log "--kcount: cannot build lib/qemu-kcount.c"; exit 1; }
	QEMU+=(-plugin "$WORK/qemu-kcount.so,marker=$KCOUNT_MARK,out=$KCOUNT_OUT")
fi
if [[ -n $ROWS ]]; then
	# QEMU option values escape a comma by doubling it.
	QEMU+=(-chardev "file,id=rows,path=${ROWS//,/,,}" -serial chardev:rows)
fi
CMDLINE="console=ttyS0,115200 loglevel=5 panic=-1 rdinit=/init $APPEND"

# KVM only when a probe boot works (here /dev/kvm opens but guests hang).
accel_args() {
	local probe="$CACHE/kvm-probe-$(uname -r)-$(qemu-system-x86_64 --version | head -1 | tr -cd '0-9.')"
	if [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then
		echo "-accel tcg -cpu max"
		return
	fi
	if [[ ! -f $probe ]]; then
		local pr="$WORK/probe"
		mkdir -p "$pr"
		cp -r "$ROOT/." "$pr/"
		echo 'true' > "$pr/cmd"
		(cd "$pr" && find . | cpio -o -H newc --quiet | gzip -1) > "$WORK/probe.cpio.gz"
		if python3 "$HERE/lib/qemu_supervise.py" --probe --timeout 30 -- \
			qemu-system-x86_64 -nodefaults -no-user-config -display none -serial stdio \
			-no-reboot -accel kvm -cpu host -m 256M -kernel "$KERNEL" \
			-initrd "$WORK/probe.cpio.gz" -append "console=ttyS0 panic=-1 rdinit=/init" \
			>/dev/null 2>&1; then
			echo kvm > "$probe"
		else
			echo tcg > "$probe"
		fi
	fi
	if [[ $(cat "$probe") == kvm ]]; then
		echo "-accel kvm -cpu host"
	else
		echo "-accel tcg -cpu max"
	fi
}
if [[ $ICOUNT == 1 ]]; then
	# Instructions, not emulated time: what an order-0 comparison between two kernels needs.
	ACCEL=(-accel tcg -icount shift=0,sleep=off,align=off -cpu max)
else
	read -r -a ACCEL <<< "$(accel_args)"
fi
# The guest can tell which accelerator ran it (a report says whether its times are emulated).
CMDLINE+=" cowbench.accel=${ACCEL[1]}"
log "booting $(basename "$(dirname "$KERNEL")") with ${ACCEL[1]}$([[ $ICOUNT == 1 ]] && echo ' (icount)'), smp=$SMP mem=$MEM numa=$NUMA"

sargs=(--timeout "$TIMEOUT")
[[ -n $OUT ]] && sargs+=(--out "$OUT")
[[ -n $LOG ]] && sargs+=(--log "$LOG")
[[ -n $QUIET ]] && sargs+=("$QUIET")
set +e
python3 "$HERE/lib/qemu_supervise.py" "${sargs[@]}" -- "${QEMU[@]}" "${ACCEL[@]}" -append "$CMDLINE"
rc=$?
set -e
exit $rc

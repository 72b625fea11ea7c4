#!/bin/sh
# kernel/vm-run.sh's stdout is the guest command's stdout and nothing else: console lines
# (boot, kernel messages, the command's stderr) go to stderr. A fake guest console drives
# kernel/lib/qemu_supervise.py (no QEMU needed).
set -eu
sup=$1/kernel/lib/qemu_supervise.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'schema,workload\r\n1,"a\nb"\r\n' > "$tmp/want"
b64=$(base64 < "$tmp/want")
rc=0
python3 "$sup" --timeout 30 -- sh -c "
echo '[    0.93] acpi PNP0A03: _OSC: OS supports [ExtendedConfig ASPM]'
echo '@@COWBENCH-CMD-START@@'
echo 'cowbench: note: progress on stderr'
echo '[    1.20] random: crng init done'
echo '@@COWBENCH-STDOUT-BEGIN@@'
echo '$b64'
echo '@@COWBENCH-STDOUT-END@@'
echo '@@COWBENCH-EXIT@@ 3'" > "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" -eq 3 ] || { echo "exit $rc, want the command's 3" >&2; exit 1; }
cmp "$tmp/want" "$tmp/out" || { echo "stdout is not the command's stdout:" >&2; cat "$tmp/out" >&2; exit 1; }
grep -q 'acpi PNP0A03' "$tmp/err" && grep -q 'crng init' "$tmp/err" && grep -q 'progress on stderr' "$tmp/err" ||
	{ echo "console lines missing from stderr" >&2; exit 1; }
echo "ok: stdout is the command's alone"

# A splat report that closes before the command starts and names no cowbench function is
# boot noise: the guest boots once more and the command runs once. Anything else fails.
cat > "$tmp/guest" <<'GUEST'
#!/bin/sh
# $1: counter file; $2: which boots splat (all|first|none); $3: where (boot|boot-ours|open|cmd)
n=$(( $(cat "$1" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$1"
splat=0
case "$2" in all) splat=1 ;; first) [ "$n" -eq 1 ] && splat=1 ;; esac
report() {
	echo '[    2.11] =================================================================='
	echo '[    2.11] BUG: KASAN: wild-memory-access in rcu_is_watching+0x20/0x35'
	echo '[    2.11]  irqentry_enter+0x43/0x45'
	[ "$1" = ours ] && echo '[    2.11]  cow_precopy_one+0x10/0x80'
	echo '[    2.11]  start_kernel+0x2e8/0x34c'
	[ "$1" = open ] || echo '[    2.11] =================================================================='
}
echo '[    0.10] Linux version 6.12'
[ "$splat" -eq 1 ] && [ "$3" = boot ] && report
[ "$splat" -eq 1 ] && [ "$3" = boot-ours ] && report ours
[ "$splat" -eq 1 ] && [ "$3" = open ] && report open
echo '@@COWBENCH-CMD-START@@'
[ "$splat" -eq 1 ] && [ "$3" = cmd ] && report
echo '@@COWBENCH-STDOUT-BEGIN@@'
echo 'b2sK'
echo '@@COWBENCH-STDOUT-END@@'
echo '@@COWBENCH-EXIT@@ 0'
GUEST
chmod +x "$tmp/guest"
boots() { # WHICH WHERE WANT_RC WANT_BOOTS
	rm -f "$tmp/n"
	rc=0
	python3 "$sup" --timeout 30 --quiet-boot --log "$tmp/log" -- "$tmp/guest" "$tmp/n" "$1" "$2" \
		> "$tmp/out" 2> "$tmp/err" || rc=$?
	[ "$rc" -eq "$3" ] && [ "$(cat "$tmp/n")" -eq "$4" ] ||
		{ echo "splat on $1 boot(s) at $2: exit $rc after $(cat "$tmp/n") boot(s), want $3 after $4" >&2
		  cat "$tmp/err" >&2; exit 1; }
}
boots first boot 0 2
grep -q 'booting once more' "$tmp/err" && [ "$(cat "$tmp/out")" = ok ] &&
	[ "$(grep -c 'Linux version' "$tmp/log")" -eq 2 ] ||
	{ echo "a retried boot must say so, keep both consoles and deliver the command's stdout once" >&2; exit 1; }
grep -q 'BUG: KASAN' "$tmp/err" || { echo "the retried splat must still show on stderr" >&2; exit 1; }
boots all boot 1 2
boots first boot-ours 1 1
boots first open 1 1
boots first cmd 1 1
boots none boot 0 1
echo "ok: a boot-noise splat boots once more; a repeat, our code or a splat after the start fails"

# A kernel message printed into the middle of a base64 line (the console is shared): the base64
# before it is kept, so stdout is whole; a splat there still fails the run.
seq 1 300 > "$tmp/want2"
b64=$(base64 -w 76 < "$tmp/want2")
first=$(printf '%s\n' "$b64" | head -1)
rest=$(printf '%s\n' "$b64" | tail -n +2)
for msg in 'clocksource: Long readout interval, skipping watchdog check' 'BUG: KASAN: use-after-free in x'; do
	rc=0
	python3 "$sup" --timeout 30 -- sh -c "
echo '@@COWBENCH-CMD-START@@'
echo '@@COWBENCH-STDOUT-BEGIN@@'
echo '$(printf '%s' "$first" | cut -c1-10)[   22.637876] $msg'
echo '$(printf '%s' "$first" | cut -c11-)'
echo '$rest'
echo '@@COWBENCH-STDOUT-END@@'
echo '@@COWBENCH-EXIT@@ 0'" > "$tmp/out" 2> "$tmp/err" || rc=$?
	cmp -s "$tmp/want2" "$tmp/out" || { echo "a message inside the base64 broke stdout ($msg)" >&2; exit 1; }
	grep -q "$msg" "$tmp/err" || { echo "the interleaved message is missing from stderr" >&2; exit 1; }
	case "$msg" in
	BUG*) [ "$rc" -eq 1 ] || { echo "a splat inside the base64 must fail the run (exit $rc)" >&2; exit 1; } ;;
	*) [ "$rc" -eq 0 ] || { echo "exit $rc after a harmless message inside the base64" >&2; exit 1; } ;;
	esac
done
echo "ok: a kernel message cut into the base64 loses no byte, and a splat there still fails"

# --data FILE: input files (replay traces) reach the guest as /data/NAME; a name that is not plain
# [A-Za-z0-9][A-Za-z0-9._+-]*, a directory, a symlink or two files of one name are refused (exit 2)
# before anything is built or booted.
vm=$1/kernel/vm-run.sh
mkdir -p "$tmp/d1" "$tmp/d2"
echo x > "$tmp/d1/t.trace"
echo y > "$tmp/d2/t.trace"
echo z > "$tmp/d1/a;b"
echo w > "$tmp/d1/.hidden"
ln -s "$tmp/d1/t.trace" "$tmp/d1/link.trace"
for bad in "$tmp/d1/a;b" "$tmp/d1/.hidden" "$tmp/d1" "$tmp/d1/link.trace" "$tmp/d1/missing.trace"; do
	rc=0
	"$vm" --data "$bad" -- true > /dev/null 2> "$tmp/err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q -- '--data' "$tmp/err" || { echo "--data $bad: exit $rc: $(cat "$tmp/err")" >&2; exit 1; }
done
rc=0
"$vm" --data "$tmp/d1/t.trace" --data="$tmp/d2/t.trace" -- true > /dev/null 2> "$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "two files named 't.trace'" "$tmp/err" || { echo "two t.trace: exit $rc" >&2; exit 1; }
echo "ok: vm-run.sh --data refuses names that are not plain, non-files and duplicates"

# --kcount: PREFIX,HEXADDR checked before anything is built or booted; the plugin builds warning-free.
for bad in "nocomma" "$tmp/p,xyz" "$tmp/p,ffff,1" "/no/such/dir/p,ffffffff81000000"; do
	rc=0
	"$vm" --kcount "$bad" -- true > /dev/null 2> "$tmp/err" || rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q -- "--kcount" "$tmp/err" ||
		{ echo "--kcount '$bad': exit $rc, stderr:" >&2; cat "$tmp/err" >&2; exit 1; }
done
cc -O2 -shared -fPIC -Wall -Wextra -Werror -o "$tmp/kcount.so" "$1/kernel/lib/qemu-kcount.c" ||
	{ echo "lib/qemu-kcount.c does not build warning-free" >&2; exit 1; }
nm -D "$tmp/kcount.so" | grep -q ' qemu_plugin_install$' && nm -D "$tmp/kcount.so" | grep -q ' qemu_plugin_version$' ||
	{ echo "qemu-kcount.so does not export the plugin entry points" >&2; exit 1; }
echo "ok: vm-run.sh --kcount refuses a bad PREFIX,HEXADDR; the kcount plugin builds"

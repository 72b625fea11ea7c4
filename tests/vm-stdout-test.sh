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

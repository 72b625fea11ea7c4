#!/bin/sh
# Hostile stand-in for kernel/vm-run.sh (COWBENCH_KERNEL_DIR=this folder): runs the plan it is given
# with $CB_H_COWBENCH here, then sends the rows, damaged as $CB_H_MODE etc. say (damage.py), where
# the guest's second serial port would write them, and exits as a guest would.
set -eu
plan="" rows=""
while [ $# -gt 0 ]; do
	case $1 in
	--add) plan=$2; shift ;;
	--rows) rows=$2; shift ;;
	--kernel|--smp|--timeout|--cowbench|--append|--data|--log) shift ;;
	--) break ;;
	esac
	shift
done
[ -n "$plan" ] && [ -n "$rows" ] || { echo "hostile vm-run: no --add or --rows" >&2; exit 2; }
echo "hostile vm-run: console line"
[ -n "${CB_H_PLANLOG:-}" ] && { cat "$plan"; echo "--"; } >> "$CB_H_PLANLOG"
all=$(mktemp)
"$CB_H_COWBENCH" matrix --plan "$plan" --warmup 0 --output "$all" 2>/dev/null || true
rc=0
python3 "$(dirname "$0")/damage.py" "$all" "$rows" || rc=$?
rm -f "$all"
case ${CB_H_END:-exit} in
exit) exit "${CB_H_EXIT:-0}" ;;
sig) kill -"${CB_H_SIG:-SEGV}" $$ ;;
esac

#!/usr/bin/env bash
# Issue 29 item 8: stat --where=code across exec: no copy credited to an impossible offset; samples of
# code an exec replaced are named (a warning) or resolved, never silently misattributed.
ITEM=8; . "$(dirname "$0")/lib.sh"
cd "$W"
"$CB" stat --where=code -- true >/dev/null 2>"$W/probe.err" || { echo "note: stat --where=code does not run here: $(head -1 "$W/probe.err")"; report; exit 0; }
for n in 10 150; do
	for mode in exec childexec exectrue none; do
		for fmt in text csv; do
			try 0 "stat --where=code -f $fmt forkexec $n $mode" "$CB" stat --where=code -f $fmt --folded="$W/f.txt" -- python3 "$HERE/forkexec.py" $n $mode
			# an offset past 4 GiB into a module is no code of it
			bad=$( { echo "$OUT"; cat "$W/f.txt" 2>/dev/null; } | grep -oE '\+0x[0-9a-f]{9,}' | head -1)
			[ -z "$bad" ] || bump N_OTHER OFFSET "forkexec $n $mode ($fmt): impossible offset $bad"
			if [ $mode != none ] && [ $mode != childexec ]; then
				echo "$ERR" | grep -q 'an exec replaced' || echo "note: forkexec $n $mode: no exec warning (every sample resolved)"
			fi
		done
	done
done
report

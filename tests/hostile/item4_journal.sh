#!/usr/bin/env bash
# Issue 29 item 4: a crafted settings journal, or COWBENCH_RUN_DIR pointed at one, must never make
# cowbench write a file outside the known sysctls. Victims are files under a temp dir only; no journal
# line here names a real /proc/sys file.
ITEM=4; . "$(dirname "$0")/lib.sh"
cd "$W"; D=$W/j; V=$W/victims; mkdir -p "$V"
delay0=$(cat /proc/sys/kernel/task_delayacct)
victims=()
mkvictim() { echo "precious $1" > "$V/$1"; victims+=("$V/$1"); }
for v in a b c d e f g h i k l m n o; do mkvictim $v; done
ln -sf "$V/k" "$V/klink"
L=$(printf '/%.0s' {1..60})   # a long run of slashes
lines=(
	"$V/a 31337 999999:1"
	"$V/b 31337"
	"victims/c 31337 999999:1"
	"/proc/sys/../../$V/d 31337 999999:1"
	"/proc/sys/kernel/task_delayacct/../../../..$V/e 31337 999999:1"
	"/proc/sys/kernel/task_delayacct	$V/f 31337 999999:1"
	"$V/g 31337 999999:1 1:0 $$:0"
	"$V/klink 31337 999999:1"
	"${L}$V/h 31337 999999:1"
	"/proc/sys/kernel/../../..$V/i 31337 999999:1"
	"$V/l 99999999999999999999999 999999:1"
	"$V/m -9223372036854775808 999999:1"
	"/proc/self/root$V/n 31337 999999:1"
	"/proc/sys/vm/../../self/root$V/o 31337 999999:1"
)
snap() { md5sum "${victims[@]}" > "$W/.vsnap"; }
check() {
	md5sum -c --quiet "$W/.vsnap" >/dev/null 2>&1 || bump N_WRITE_INPUT WROTE "$1: a victim file changed: $(md5sum -c --quiet "$W/.vsnap" 2>&1 | head -2 | tr '\n' ' ')"
	[ "$(cat /proc/sys/kernel/task_delayacct)" = "$delay0" ] || bump N_SETTINGS SETTINGS "$1: task_delayacct left at $(cat /proc/sys/kernel/task_delayacct)"
}
cmds=("run -w seq -s 64K -r 1 --warmup 0 -f csv" "info" "run -w seq -s 64K -r 1 --warmup 0 --probes=none -f csv" "matrix -w seq -s 64K -r 1 --warmup 0 -f csv")
setup_dir() { # mode of the run dir
	rm -rf "$D" "$W/jl" "$W/jo"; mkdir -p "$D"; chmod 0755 "$D"
	case $1 in
	safe) ;;
	g+w) chmod 0775 "$D" ;;
	o+w) chmod 0777 "$D" ;;
	sticky) chmod 1777 "$D" ;;
	nobody) chown 65534:65534 "$D" ;;
	esac
}
rundirs=("safe:$D" "symlink:$W/jl" "dotdot:$D/../j" "dot:$D/./" "g+w:$D" "o+w:$D" "sticky:$D" "nobody:$D" "relative:j" "trailing:$D/" "double:$W//j")
for rd in "${rundirs[@]}"; do
	mode=${rd%%:*} dir=${rd#*:}
	for line in "${lines[@]}" "ALL"; do
		for cmd in "${cmds[@]}"; do
			setup_dir "$mode"; [ "$mode" = symlink ] && ln -s "$D" "$W/jl"
			if [ "$line" = ALL ]; then printf '%s\n' "${lines[@]}" > "$D/overrides"; else printf '%s\n' "$line" > "$D/overrides"; fi
			[ "$mode" = nobody ] && chown 65534 "$D/overrides"
			snap
			COWBENCH_RUN_DIR=$dir try any "journal [$mode] '${line:0:40}' $cmd" "$CB" $cmd
			check "journal [$mode] '${line:0:50}' / $cmd"
			[ "$line" = ALL ] || break   # every command only for the whole journal
		done
	done
done
# The journal's own files planted as links by whoever owns the directory (root): defence in depth
for plant in "overrides:symlink" "overrides.new:symlink" "lock:symlink" "overrides.new:hardlink" "lock:hardlink" "overrides:hardlink"; do
	f=${plant%%:*} how=${plant#*:}
	setup_dir safe; mkvictim "p-$f-$how"
	if [ $how = symlink ]; then ln -s "$V/p-$f-$how" "$D/$f"; else ln "$V/p-$f-$how" "$D/$f"; fi
	snap
	for cmd in "${cmds[@]}"; do
		COWBENCH_RUN_DIR=$D try any "planted $f as $how / $cmd" "$CB" $cmd
	done
	check "planted $D/$f as a $how to a victim"
done
# A run dir that does not exist yet: cowbench creates it (as root) — where?
for nd in "$W/new/deeper" "$W/newdir" "$V/a/inside-a-file"; do
	COWBENCH_RUN_DIR=$nd try any "new run dir $nd" "$CB" run -w seq -s 64K -r 1 --warmup 0 -f csv
	[ -e "$nd" ] && echo "note: COWBENCH_RUN_DIR=$nd was created ($(stat -c %A "$nd"))"
	check "new run dir $nd"
done
report

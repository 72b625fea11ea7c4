#!/usr/bin/env bash
# Install the build tree into a scratch prefix, then build and run a program against it
# with find_package(cowbench) (shared and static) and with pkg-config.
set -euo pipefail
build=$1 src=$2
# A sanitizer build's library needs its runtime in the consumer too.
cflags=${3:-}
prefix=$(mktemp -d) work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S "$src/tests/consumer" -B "$work/b" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_FLAGS="$cflags" -DCMAKE_EXE_LINKER_FLAGS="$cflags" >/dev/null
cmake --build "$work/b" >/dev/null
LD_LIBRARY_PATH="$prefix/lib:$prefix/lib/x86_64-linux-gnu" "$work/b/consumer"
"$work/b/consumer_static"
pcdir=$(dirname "$(find "$prefix" -name cowbench.pc | head -n1)")
PKG_CONFIG_PATH=$pcdir pkg-config --exists cowbench
cc $cflags $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags cowbench) "$src/tests/consumer/consumer.c" \
	-o "$work/pc" $(PKG_CONFIG_PATH=$pcdir pkg-config --libs --static cowbench) -Wl,-rpath,"$pcdir/.."
"$work/pc"
test -f "$prefix/include/cowbench/version.h"
# The tool apart from the study: nothing cowbench runs (its C code, kernel/'s scripts) names analysis/,
# the research campaign's folder, so an install works without it (docs/develop.md).
study_refs=$(grep -rn '"[^"]*analysis/' --include='*.c' --include='*.h' "$src/cli" "$src/libcowbench" "$src/workloads"
	grep -n 'analysis/' "$src"/kernel/*.sh "$src"/kernel/lib/* | grep -vE '^[^:]+:[0-9]+:[[:space:]]*#') || true
[ -z "$study_refs" ] || { echo "FAIL: the tool names the study's folder:"; echo "$study_refs"; exit 1; }
# cowbench plot's gnuplot scripts as installed: every file of cli/plot/gnuplot/ is in share/cowbench/plot,
# and the installed cowbench renders a fixture with them (COWBENCH_PLOT_DIR names the installed folder:
# a binary built here would find the source tree's first).
plotdir=$prefix/share/cowbench/plot
for f in "$src"/cli/plot/gnuplot/*; do
	test -f "$plotdir/${f##*/}" || { echo "FAIL: the install lacks share/cowbench/plot/${f##*/}"; exit 1; }
done
test -x "$plotdir/plot.sh" || { echo "FAIL: share/cowbench/plot/plot.sh is not executable"; exit 1; }
if command -v gnuplot >/dev/null 2>&1; then
	mkdir "$work/plots"
	COWBENCH_PLOT_DIR=$plotdir "$prefix/bin/cowbench" plot "$src/tests/fixtures/results_plot.csv" --out "$work/plots" \
		>"$work/plots.txt" 2>/dev/null
	test -s "$work/plots/cost.png" && test -s "$work/plots/report.md" ||
		{ echo "FAIL: the installed cowbench plot wrote no cost.png / report.md"; exit 1; }
	echo "package: the installed cowbench plot rendered $(grep -c '\.png$' "$work/plots.txt") plots"
else
	echo "package: gnuplot absent, the installed plot scripts are checked by name only"
fi
echo "package: find_package, static and pkg-config consumers all ran"

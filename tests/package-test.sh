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
echo "package: find_package, static and pkg-config consumers all ran"

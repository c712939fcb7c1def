#!/bin/sh
# Installs a built cnc tree into a temporary prefix, builds the consumer program against it once
# through pkg-config and once through CMake's find_package(cnc), runs both, and checks that
# libcnc.so exports only cnc* symbols and has SONAME libcnc.so.0.
# Usage: run_consumer.sh <build-dir> <consumer-source-dir> <c-compiler> <cmake> [sanitizers]
set -eu
build=$1 src=$2 cc=$3 cmake=$4 sanitize=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$cmake" --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
lib=$(find "$tmp/prefix" -name 'libcnc.so.0' | head -n 1)
[ -n "$lib" ] || fail "libcnc.so.0 not installed"
libdir=$(dirname "$lib")
pcdir=$(dirname "$(find "$tmp/prefix" -name cnc.pc | head -n 1)")
[ -f "$pcdir/cnc.pc" ] || fail "cnc.pc not installed"

# A sanitized library needs the sanitizer runtime in the consumer too.
san_flags=""
[ -n "$sanitize" ] && san_flags="-fsanitize=$sanitize"

# 1. pkg-config
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs cnc) || fail "pkg-config cnc"
echo "pkg-config --cflags --libs cnc: $flags"
# shellcheck disable=SC2086
"$cc" -std=c99 -Wall -Wextra -Werror $san_flags "$src/consumer.c" -o "$tmp/consumer_pc" $flags -lm ||
  fail "building the consumer with pkg-config flags"
LD_LIBRARY_PATH="$libdir" "$tmp/consumer_pc" || fail "consumer (pkg-config) did not solve"
# The pkg-config flags must point into the install prefix, not at some other copy of cnc.
case "$flags" in *"$tmp/prefix"*) ;; *) fail "pkg-config flags do not point into the prefix: $flags" ;; esac

# 2. CMake find_package
"$cmake" -S "$src" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$san_flags" > "$tmp/cfg.log" 2>&1 ||
  { cat "$tmp/cfg.log"; fail "configuring the consumer with find_package(cnc)"; }
"$cmake" --build "$tmp/cmake-build" > "$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; fail "building the consumer with find_package(cnc)"; }
LD_LIBRARY_PATH="$libdir" "$tmp/cmake-build/consumer" || fail "consumer (find_package) did not solve"

# 3. Exported symbols: only cnc* (the version node CNC_0 is an absolute symbol, not a function).
bad=$(nm -D --defined-only "$lib" | awk '$2 != "A" && $3 !~ /^cnc/ {print $3}')
[ -z "$bad" ] || fail "libcnc.so exports non-cnc symbols: $(echo "$bad" | head -n 20 | tr '\n' ' ')"
count=$(nm -D --defined-only "$lib" | awk '$3 ~ /^cnc/' | wc -l)
[ "$count" -gt 40 ] || fail "only $count cnc* symbols exported"
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libcnc.so.0" ] || fail "SONAME is '$soname', expected libcnc.so.0"
echo "OK: $count cnc* symbols exported, SONAME $soname"

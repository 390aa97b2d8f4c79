#!/bin/sh
# Install the built library into a scratch prefix and build two consumers of
# it: one with `cc ... $(pkg-config --cflags --libs amq)`, one with CMake's
# find_package(amq). Both must run. The tool comes with its man page and
# its bash completion, and the example programs come as amq-crawl and
# amq-codesearch.
#   run.sh BUILD_DIR SCRATCH_DIR SOURCE_DIR CC
set -eu
build=$1 scratch=$2 source=$3 cc=$4
rm -rf "$scratch"
mkdir -p "$scratch"
prefix="$scratch/prefix"

cmake --install "$build" --prefix "$prefix" >"$scratch/install.log"
for f in include/amq/amq.h include/amq/calc.h bin/amq share/man/man1/amq.1 \
    share/bash-completion/completions/amq bin/amq-crawl bin/amq-codesearch; do
    [ -f "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
for program in amq-crawl amq-codesearch; do
    "$prefix/bin/$program" --help >"$scratch/help" ||
        { echo "the installed $program --help exited $?"; exit 1; }
    grep -q "^Usage: $program " "$scratch/help" ||
        { echo "the installed $program --help: $(head -n 1 "$scratch/help")"; exit 1; }
done
"$prefix/bin/amq" --version >"$scratch/version" || { echo "the installed amq does not run"; exit 1; }
grep -q "^\.TH AMQ 1 .*$(sed 's/^amq //' "$scratch/version")" "$prefix/share/man/man1/amq.1" ||
    { echo "the installed man page is not amq $(cat "$scratch/version")'s"; exit 1; }
bash -c '. "$1" && complete -p amq' completion "$prefix/share/bash-completion/completions/amq" \
    >/dev/null || { echo "the installed completion does not register for amq"; exit 1; }
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -n 1 | xargs dirname)
[ -f "$libdir/libamq.a" ] || { echo "not installed: libamq.a"; exit 1; }
soname=$(objdump -p "$libdir/libamq.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libamq.so.0" ] || { echo "SONAME is '$soname', expected libamq.so.0"; exit 1; }

# pkg-config consumer
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror -o "$scratch/consumer" "$source/consumer.c" \
    $(pkg-config --cflags --libs amq)
LD_LIBRARY_PATH="$libdir" "$scratch/consumer"

# find_package consumer
cmake -S "$source/cmake_consumer" -B "$scratch/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" >"$scratch/cmake.log"
cmake --build "$scratch/cmake" >>"$scratch/cmake.log"
LD_LIBRARY_PATH="$libdir" "$scratch/cmake/consumer_shared"
"$scratch/cmake/consumer_static"
echo "install test: ok"

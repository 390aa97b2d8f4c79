#!/bin/sh
# Every public header compiles on its own, as C11 with -pedantic and as
# C++11, with gcc and with clang where they are installed.
#   check.sh INCLUDE_DIR SCRATCH_DIR
set -eu
include=$1 scratch=$2
mkdir -p "$scratch"
failed=0 checked=0
for header in "$include"/amq/*.h; do
    name=$(basename "$header")
    printf '#include <amq/%s>\n#include <amq/%s>\nint main(void) { return 0; }\n' "$name" "$name" \
        >"$scratch/use.c"
    for cc in gcc clang; do
        command -v $cc >/dev/null 2>&1 || continue
        if ! $cc -std=c11 -pedantic -Wall -Wextra -Werror -I"$include" -c "$scratch/use.c" \
            -o "$scratch/use.o"; then
            echo "FAIL: $name as C11 with $cc"; failed=1
        fi
        checked=$((checked + 1))
    done
    for cxx in g++ clang++; do
        command -v $cxx >/dev/null 2>&1 || continue
        if ! $cxx -std=c++11 -pedantic -Wall -Wextra -Werror -I"$include" -x c++ \
            -c "$scratch/use.c" -o "$scratch/use.o"; then
            echo "FAIL: $name as C++11 with $cxx"; failed=1
        fi
        checked=$((checked + 1))
    done
done
[ "$checked" -gt 0 ] || { echo "no compiler found"; exit 1; }
[ "$failed" -eq 0 ] && echo "headers: $checked compilations ok"
exit $failed

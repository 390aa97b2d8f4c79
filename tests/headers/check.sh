#!/bin/sh
# Every public header compiles on its own, with gcc and with clang where they
# are installed: as C99 and C11 with -pedantic, as C11 for a 32-bit target
# (gcc -m32, when a 32-bit toolchain is installed: Debian's gcc-multilib),
# as C11 for Windows with the MSVC ABI (clang, freestanding), and as C++11,
# and with the experimental tier declared (AMQ_EXPERIMENTAL) as well.
# A user may build against the headers with any of these, so none may use
# unsigned __int128 or another extension, nor name an internal (amq__,
# AMQ__) helper.
#   check.sh INCLUDE_DIR SCRATCH_DIR
set -eu
include=$1 scratch=$2
mkdir -p "$scratch"
failed=0 checked=0

# -pedantic is silent about what __extension__ marks, so it is defined away:
# an extension behind it (unsigned __int128) is then an error, as it is on a
# 32-bit target or with MSVC. The one guarded use, inline.h's multiply-high
# where the compiler has 128-bit integers, is turned off by its macro there,
# and compiled as a user would (with __extension__) in a run of its own.
c_flags="-pedantic -Wall -Wextra -Werror -D__extension__= -DAMQ_INLINE_NO_INT128"

m32=""
if command -v gcc >/dev/null 2>&1; then
    printf '#include <stdint.h>\nint main(void) { return 0; }\n' >"$scratch/probe.c"
    if gcc -m32 -std=c11 -c "$scratch/probe.c" -o "$scratch/probe.o" 2>/dev/null; then
        m32=yes
    else
        echo "note: gcc -m32 cannot compile (no 32-bit toolchain: install gcc-multilib);" \
            "the 32-bit check is skipped"
    fi
fi

compile() { # what compiler-and-flags...
    what=$1
    shift
    # shellcheck disable=SC2086
    if ! "$@" $tier -I"$include" -c "$scratch/use.c" -o "$scratch/use.o"; then
        echo "FAIL: $name $what"
        failed=1
    fi
    checked=$((checked + 1))
}

for header in "$include"/amq/*.h; do
    name=$(basename "$header")
    if grep -n 'amq__\|AMQ__' "$header"; then
        echo "FAIL: $name names an internal amq__ / AMQ__ helper (above)"
        failed=1
    fi
    printf '#include <amq/%s>\n#include <amq/%s>\nint main(void) { return 0; }\n' "$name" "$name" \
        >"$scratch/use.c"
    # A header that is all experimental tier refuses to compile without
    # AMQ_EXPERIMENTAL, and is checked with it.
    tier=""
    if grep -q '^#error .* experimental tier' "$header"; then
        if gcc -std=c11 -I"$include" -c "$scratch/use.c" -o "$scratch/use.o" 2>/dev/null; then
            echo "FAIL: $name compiles without AMQ_EXPERIMENTAL"
            failed=1
        fi
        tier=-DAMQ_EXPERIMENTAL
    fi
    for cc in gcc clang; do
        command -v $cc >/dev/null 2>&1 || continue
        for std in c99 c11; do
            # shellcheck disable=SC2086
            compile "as $std with $cc" $cc -std=$std $c_flags
        done
        compile "as C11 with $cc and its 128-bit integers" $cc -std=c11 -pedantic -Wall \
            -Wextra -Werror
    done
    if [ -n "$m32" ]; then
        # shellcheck disable=SC2086
        compile "as C11 with gcc -m32" gcc -m32 -std=c11 $c_flags
    fi
    if command -v clang >/dev/null 2>&1; then
        # shellcheck disable=SC2086
        compile "as C11 with clang for x86_64-pc-windows-msvc" \
            clang --target=x86_64-pc-windows-msvc -ffreestanding -std=c11 $c_flags
        # shellcheck disable=SC2086
        compile "as C11 for x86_64-pc-windows-msvc importing the DLL" \
            clang --target=x86_64-pc-windows-msvc -ffreestanding -std=c11 -DAMQ_DLL $c_flags
    fi
    for cxx in g++ clang++; do
        command -v $cxx >/dev/null 2>&1 || continue
        compile "as C++11 with $cxx" $cxx -std=c++11 -pedantic -Wall -Wextra -Werror -x c++
    done
    # The experimental tier too (AMQ_EXPERIMENTAL), under the strictest
    # of the same: C99, the MSVC ABI, C++.
    if command -v gcc >/dev/null 2>&1; then
        # shellcheck disable=SC2086
        compile "as C99 with gcc and AMQ_EXPERIMENTAL" gcc -std=c99 -DAMQ_EXPERIMENTAL $c_flags
    fi
    if command -v clang >/dev/null 2>&1; then
        # shellcheck disable=SC2086
        compile "as C11 for x86_64-pc-windows-msvc with AMQ_EXPERIMENTAL" \
            clang --target=x86_64-pc-windows-msvc -ffreestanding -std=c11 -DAMQ_EXPERIMENTAL $c_flags
    fi
    if command -v g++ >/dev/null 2>&1; then
        compile "as C++11 with g++ and AMQ_EXPERIMENTAL" g++ -std=c++11 -pedantic -Wall -Wextra \
            -Werror -DAMQ_EXPERIMENTAL -x c++
    fi
done
[ "$checked" -gt 0 ] || { echo "no compiler found"; exit 1; }
[ "$failed" -eq 0 ] && echo "headers: $checked compilations ok"
exit $failed

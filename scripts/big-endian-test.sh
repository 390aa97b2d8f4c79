#!/bin/sh
# The file format is little-endian whatever the host: build the library, the
# unit tests that pin the byte order, and tests/endian/endian.c for s390x
# (big-endian) with clang and Debian's s390x cross binutils, libc and libgcc,
# run them under qemu-user, and cross-check the files each byte order saves
# against the other.
#
#   scripts/big-endian-test.sh [OUT]      (OUT: build-be by default)
#
# Needs clang, binutils-s390x-linux-gnu, libc6-dev-s390x-cross,
# libgcc-12-dev-s390x-cross and qemu-user (scripts/install-deps.sh); not
# gcc-s390x-linux-gnu, which Debian will not install beside gcc-multilib
# (tests/headers/check.sh needs that). And libcrypto and cmocka for s390x: their
# Debian packages are downloaded with apt-get into OUT/apt (a private package
# list for s390x; the host's dpkg and its architectures are left alone) and
# unpacked into OUT/sysroot, once.
#
# Checks, in order (each one's failure fails the script):
#   1. the unit tests in AMQ_BE_TESTS under qemu; by default test_byteorder
#      (the load/store helpers' byte order), test_bits (bit vectors, Golomb
#      and Rice streams), test_format (the container's fields and the
#      golden container tests/golden/container-v1.bin) and test_allocator
#      (a save allocates nothing, where every family's words are converted
#      as they are written); "all" runs every tests/test_*.c, which takes
#      over 20 minutes on 2 cores;
#   2. `amq_endian golden tests/data` under qemu: the filter files saved on
#      x86-64 load, read and mapped, answer every recorded key as recorded,
#      and save back the same bytes;
#   3. `amq_endian save` under qemu, then `amq_endian check` natively: the
#      filters of every family built on s390x are byte-identical to those
#      built here from the same keys and seeds, and load and answer here as
#      they did there;
#   4. the same the other way: saved natively, checked under qemu.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build-be}
case "$out" in /*) ;; *) out=$(pwd)/$out ;; esac
triplet=s390x-linux-gnu
cc=clang
qemu=qemu-s390x
sysroot=$out/sysroot
jobs=$(nproc 2>/dev/null || echo 2)
tests=${AMQ_BE_TESTS:-test_byteorder test_bits test_format test_allocator}
start=$(date +%s)

say() { echo "big-endian-test: $*"; }
die() {
    echo "big-endian-test: $*" >&2
    exit 1
}

for tool in $cc $triplet-ld $qemu cmake apt-get dpkg-deb; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "$tool not found: run scripts/install-deps.sh"
done
mkdir -p "$out"

# ---- libcrypto and cmocka for s390x, once -------------------------------------
packages="libssl3 libssl-dev libcmocka0 libcmocka-dev"
if [ "$(cat "$sysroot/.packages" 2>/dev/null || true)" != "$packages" ]; then
    say "downloading $packages for s390x into $out/apt"
    apt="$out/apt"
    rm -rf "$apt" "$sysroot"
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" "$sysroot"
    : >"$apt/status"
    set -- -o "Dir::State=$apt" -o "Dir::State::Lists=$apt/lists" \
        -o "Dir::State::status=$apt/status" -o "Dir::Cache=$apt/cache" \
        -o APT::Architecture=s390x -o APT::Architectures=s390x -o Debug::NoLocking=1 \
        -o "APT::Sandbox::User=$(id -un)"
    # A source without s390x packages (a vendor's amd64-only repository)
    # fails its part of the update; the Debian archive's part is what counts.
    apt-get "$@" -qq update || say "apt-get update reported errors; trying the lists it got"
    # shellcheck disable=SC2086
    (cd "$apt/debs" && apt-get "$@" -qq download $packages) ||
        die "cannot download $packages for s390x (apt-get download)"
    for deb in "$apt"/debs/*.deb; do
        dpkg-deb -x "$deb" "$sysroot"
    done
    echo "$packages" >"$sysroot/.packages"
fi

# ---- qemu runs s390x programs here --------------------------------------------
emulator="$qemu -L /usr/$triplet"
probe=$out/probe
printf 'int main(void) { return 0; }\n' >"$probe.c"
$cc --target=$triplet -o "$probe" "$probe.c" ||
    die "$cc --target=$triplet cannot link a program (libc6-dev-s390x-cross, libgcc-12-dev-s390x-cross?)"
$emulator "$probe" || die "$emulator cannot run an s390x program on this machine"

# ---- build: s390x (under qemu) and native ---------------------------------------
if [ "$tests" = all ]; then
    list=""
else
    list=$(echo $tests | tr ' ' ';')
fi
say "building for s390x in $out/s390x"
cmake -S "$root/tests/endian" -B "$out/s390x" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=s390x -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_COMPILER_TARGET=$triplet \
    "-DCMAKE_CROSSCOMPILING_EMULATOR=$qemu;-L;/usr/$triplet" \
    -DAMQ_ENDIAN_SYSROOT="$sysroot" -DAMQ_ENDIAN_TRIPLET=$triplet \
    "-DAMQ_ENDIAN_TESTS=$list" >"$out/s390x.cmake.log" ||
    die "cmake for s390x failed: $out/s390x.cmake.log"
cmake --build "$out/s390x" -j "$jobs"
say "building natively in $out/native"
cmake -S "$root/tests/endian" -B "$out/native" -DCMAKE_BUILD_TYPE=Release \
    -DAMQ_ENDIAN_UNIT_TESTS=OFF >"$out/native.cmake.log" ||
    die "cmake (native) failed: $out/native.cmake.log"
cmake --build "$out/native" -j "$jobs"
built=$(date +%s)

# ---- 1. the unit tests, big-endian ----------------------------------------------
say "unit tests under $qemu: $tests"
ctest --test-dir "$out/s390x" --output-on-failure -j "$jobs"

be="$emulator $out/s390x/amq_endian"
native=$out/native/amq_endian
work=$out/work
rm -rf "$work"
mkdir -p "$work/be" "$work/native"

# Run one check; the s390x program must say it runs big-endian.
run() {
    expect=$1
    shift
    "$@" >"$work/last.log" 2>&1 || {
        cat "$work/last.log"
        die "failed: $*"
    }
    cat "$work/last.log"
    grep -q "on a $expect-endian host" "$work/last.log" || die "$* did not run $expect-endian"
}

# ---- 2. golden files saved on x86-64, read big-endian ---------------------------
run big $be golden "$root/tests/data"
# ---- 3. saved big-endian, checked here --------------------------------------------
run big $be save "$work/be"
run little "$native" check "$work/be"
# ---- 4. saved here, checked big-endian --------------------------------------------
run little "$native" save "$work/native"
run big $be check "$work/native"

for f in "$work"/be/*.amq; do
    cmp -s "$f" "$work/native/$(basename "$f")" || die "$f differs from its native twin"
done
end=$(date +%s)
say "passed: $(ls "$work"/be/*.amq | wc -l) files identical both ways;" \
    "build $((built - start)) s, tests $((end - built)) s"

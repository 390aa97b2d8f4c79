#!/bin/sh
# Install the Debian packages amq needs to build, test and benchmark, but only
# those that are missing. Runs apt-get (as root, or through sudo when it is
# available); does nothing when everything is already present.
#
#   scripts/install-deps.sh            build + test dependencies
#   scripts/install-deps.sh --bench    also the benchmark peers and tools
#   scripts/install-deps.sh --demo     also what `make demo` reads and plots
#                                      with: the word list, gnuplot
#
# zlib1g-dev and libzstd-dev let the tool read gzip and zstd input, and the
# gzip, pigz and zstd commands (zstd brings pzstd) make that input for its
# tests (tests/cli/input.sh, tests/cli/compressed.sh);
# groff-base renders the man page for its test (tests/cli/manpage.sh);
# time is GNU time, whose /usr/bin/time reports the peak memory that
# bench/dedup.sh compares; codesearch (cindex, csearch) and ripgrep are
# what bench/codesearch.sh sets amq-codesearch beside; gcc-multilib (on amd64, where Debian has it)
# lets tests/headers/check.sh compile the public headers for a 32-bit target;
# redis-server, redis-tools and python3-redis (Debian's python3 imports it)
# run the Redis module's tests (tests/redis/), python3-hypothesis its
# property-based test (test_cf_properties.py); binutils-s390x-linux-gnu,
# libc6-dev-s390x-cross, libgcc-12-dev-s390x-cross and qemu-user let clang
# build and qemu run the big-endian check (scripts/big-endian-test.sh, which
# fetches its s390x libraries itself; gcc-s390x-linux-gnu would remove
# gcc-multilib).
set -eu

packages="gcc clang make cmake pkg-config libxxhash-dev libssl-dev libcmocka-dev libclang-rt-14-dev clang-format groff-base zlib1g-dev libzstd-dev gzip pigz zstd python3 redis-server redis-tools python3-redis python3-hypothesis binutils-s390x-linux-gnu libc6-dev-s390x-cross libgcc-12-dev-s390x-cross qemu-user abigail-tools"
if [ "$(dpkg --print-architecture 2>/dev/null || true)" = amd64 ]; then
    packages="$packages gcc-multilib"
fi
case "${1:-}" in
--bench) packages="$packages libbloom-dev time codesearch ripgrep" ;;
--demo) packages="$packages wamerican-insane gnuplot-nox fonts-dejavu-core" ;;
"") ;;
*)
    echo "install-deps: unknown option $1 (--bench or --demo)" >&2
    exit 2
    ;;
esac

missing=""
for p in $packages; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
    *"install ok installed"*) ;;
    *) missing="$missing $p" ;;
    esac
done

if [ -z "$missing" ]; then
    exit 0
fi

echo "install-deps: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
    run=""
elif command -v sudo >/dev/null 2>&1; then
    run="sudo"
else
    echo "install-deps: missing packages:$missing; run as root or install them" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
$run apt-get update -qq || echo "install-deps: apt-get update failed; trying the cached package lists" >&2
# shellcheck disable=SC2086
$run apt-get install -y -qq --no-install-recommends $missing

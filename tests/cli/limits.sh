#!/bin/sh
# Sizes at the edges of what the types hold, and memory that runs out:
#  - a capacity of 0 is refused naming the option; 10^15 keys are refused
#    by every dynamic type with the memory they would need or the limit
#    they pass, before anything is allocated;
#  - an error rate of 1e-300 builds, with a note of what the filter can
#    deliver;
#  - what is not a regular file (a device, a pipe) is judged by its first
#    bytes and read at most to the size its header gives;
#  - a filter truncated or overwritten in place while a query runs
#    changes none of its answers (the query read it whole);
#  - under `ulimit -v`, a filter larger than the limit fails cleanly with
#    a message naming the allocation and exit status 2, and nothing is
#    written (skipped, saying so, where the binary cannot start under a
#    small ulimit -v: AddressSanitizer reserves terabytes of address
#    space).
#   limits.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

awk 'BEGIN { for (i = 0; i < 2000; i++) printf "key-%d\n", i }' >"$dir/keys.txt"

run 2 build -t bloom -n 0 -o "$dir/zero.amq" "$dir/keys.txt" &&
    expect err "option '--capacity' (-n): '0' is below the minimum, 1"
[ ! -e "$dir/zero.amq" ] || fail "a refused build wrote zero.amq"

run 2 build -t bloom -n 1e15 -o "$dir/huge.amq" "$dir/keys.txt" &&
    expect err "9585058377367438 bits is outside [64, 2^48]"
run 2 build -t counting-bloom -n 1e15 -o "$dir/huge.amq" "$dir/keys.txt" &&
    expect err "bits is outside [64, 2^48]"
run 2 build -t blocked-bloom -n 1e15 -o "$dir/huge.amq" "$dir/keys.txt" &&
    expect err "need more than 2^32 blocks"
run 2 build -t cuckoo -n 1e15 -o "$dir/huge.amq" "$dir/keys.txt" &&
    expect err "cuckoo capacity 1000000000000000 would need about 1.32e+15 bytes"
run 2 build -t scalable-bloom -n 1e15 -o "$dir/huge.amq" "$dir/keys.txt" &&
    expect err "would need about 1.8e+15 bytes, more than 2^48 bits"
[ ! -e "$dir/huge.amq" ] || fail "a refused build wrote huge.amq"

# A scalable filter whose next stage would pass a limit says which, and
# what to change.
run 2 build -t scalable-bloom -n 1 -p 0.5 --growth 1 --tightening 0.95 -o "$dir/deep.amq" \
    "$dir/keys.txt" &&
    expect err "keys.txt:66: the scalable-bloom filter cannot grow any further" &&
    expect err "it holds 64 keys in 64 stages"
[ ! -e "$dir/deep.amq" ] || fail "a build that failed wrote deep.amq"

run 0 build -t bloom -n 2000 -p 1e-300 -o "$dir/tiny-p.amq" "$dir/keys.txt" &&
    expect err "p = 1e-300 is below what a bloom filter of 2000 keys can deliver"
run 0 query "$dir/tiny-p.amq" "$dir/keys.txt" && lines out 2000

# 300 MB of address space: a filter of 10^9 keys (about 1.2 GB) cannot be
# allocated, and says so.
if (ulimit -v 300000 && "$amq" --version) >/dev/null 2>&1; then
    for type in bloom cuckoo counting-bloom; do
        last="amq build -t $type -n 1e9 (ulimit -v 300000)"
        (ulimit -v 300000 && exec "$amq" build -t "$type" -n 1e9 -o "$dir/big.amq" \
            "$dir/keys.txt") >"$dir/out" 2>"$dir/err"
        code=$?
        [ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
        expect err "cannot allocate"
        [ ! -e "$dir/big.amq" ] || fail "$last wrote big.amq"
    done
    last="amq dedup -n 1e9 (ulimit -v 300000)"
    (ulimit -v 300000 && exec "$amq" dedup -n 1e9 "$dir/keys.txt") >"$dir/out" 2>"$dir/err"
    code=$?
    [ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
    expect err "cannot allocate"
    empty out
else
    echo "limits: the ulimit -v checks are skipped: this amq cannot start under ulimit -v 300000" \
        "(a sanitizer's reserved address space); the plain build runs them"
fi

# What is not a regular file is judged by its first bytes: /dev/zero and an
# endless pipe are refused at once, not read until memory runs out; a
# filter through a pipe is read up to the size its header gives.
last="amq info /dev/zero"
timeout 20 "$amq" info /dev/zero >"$dir/out" 2>"$dir/err"
code=$?
[ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
expect err "not an amq file"
last="yes | amq info /dev/stdin"
yes | timeout 20 "$amq" info /dev/stdin >"$dir/out" 2>"$dir/err"
code=$?
[ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
expect err "not an amq file"
run 0 build -t fuse8 -o "$dir/f.amq" "$dir/keys.txt"
last="cat f.amq | amq query /dev/stdin"
cat "$dir/f.amq" | "$amq" info /dev/stdin >"$dir/out" 2>"$dir/err" ||
    fail "$last exited $?"
expect out "fuse8"
last="f.amq and more bytes through a pipe"
{ cat "$dir/f.amq"; echo more; } | "$amq" info /dev/stdin >"$dir/out" 2>"$dir/err"
code=$?
[ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
expect err "extra bytes at the end"
last="a directory given as a filter"
mkdir -p "$dir/a-directory"
run 2 query "$dir/a-directory" "$dir/keys.txt" &&
    expect err "a-directory' is a directory, not an amq file"

# A filter changed under a running query: the query has read it whole, so
# a truncation raises no SIGBUS and an overwrite in place changes no answer
# (amq query --mmap would map it; docs/amq.1 says what that asks of the
# file). The query holds its filter once it has opened its input, the FIFO.
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "k-%d\n", i }' >"$dir/many.txt"
run 0 build -t fuse8 -o "$dir/victim.amq" "$dir/many.txt"
run 0 build -t fuse8 -o "$dir/other.amq" "$dir/keys.txt"
for change in truncate overwrite; do
    cp "$dir/victim.amq" "$dir/changing.amq"
    rm -f "$dir/fifo"
    mkfifo "$dir/fifo"
    "$amq" query -c "$dir/changing.amq" "$dir/fifo" >"$dir/out" 2>"$dir/err" &
    pid=$!
    exec 3>"$dir/fifo"
    case $change in
    truncate) : >"$dir/changing.amq" ;;
    overwrite) cat "$dir/other.amq" 1<>"$dir/changing.amq" ;;
    esac
    cat "$dir/many.txt" >&3
    exec 3>&-
    wait "$pid"
    code=$?
    last="amq query with the file changed under it ($change)"
    [ "$code" -eq 0 ] || fail "$last exited $code, expected 0"
    [ "$(cat "$dir/out")" = 200000 ] || fail "$last counted $(cat "$dir/out"), not 200000"
done

finish "cli limits"

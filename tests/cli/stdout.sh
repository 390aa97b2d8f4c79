#!/bin/sh
# Every command that prints checks that its standard output was written:
# into /dev/full (every write fails with ENOSPC) each exits 2 and says so
# on stderr; with standard output closed, a command that prints fails and
# one that prints nothing succeeds.   stdout.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

seq 1 1000 >"$dir/keys.txt"
"$amq" build -t bloom -o "$dir/f.amq" "$dir/keys.txt" || fail "build failed"
"$amq" build -t gcs -o "$dir/g.amq" "$dir/keys.txt" || fail "build -t gcs failed"

# full ARGS...: amq ARGS >/dev/full exits 2 and says why on stderr.
full() {
    last="amq $* >/dev/full"
    "$amq" "$@" >/dev/full 2>"$dir/err" <"$dir/keys.txt"
    code=$?
    [ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
    expect err "standard output"
}

# The reason is known where the output is flushed at the end.
for args in "--help" "-h" "help" "--version" "version" "calc -n 1000 -p 0.01" \
    "info $dir/f.amq" "info --json $dir/f.amq" "info $dir/g.amq"; do
    # shellcheck disable=SC2086 # the words of args are the arguments
    full $args && expect err "writing standard output: No space left on device"
done
full info "$dir/f.amq" && expect err "amq info: writing standard output: No space left on device"
full --version && expect err "amq: writing standard output: No space left on device"
# bench runs amq_bench, which a build without it lacks (bench.sh tests that).
for command in build add remove query info merge export dedup calc${AMQ_TEST_BENCH:+ bench}; do
    full "$command" --help && expect err "amq $command: writing standard output: No space left on device"
done

# Commands that print much check as they go, stop, and say why.
for args in "query $dir/f.amq $dir/keys.txt" "query -c $dir/f.amq $dir/keys.txt" "query $dir/f.amq" \
    "dedup $dir/keys.txt" "dedup -t cuckoo $dir/keys.txt" \
    "dedup"; do
    # shellcheck disable=SC2086 # the words of args are the arguments
    full $args && expect err "amq ${args%% *}: writing standard output: No space left on device" &&
        lines err 1
done
seq 1 300000 >"$dir/many.txt"
"$amq" build -t bloom -n 300000 -o "$dir/many.amq" "$dir/many.txt" || fail "build of many.txt failed"
full query "$dir/many.amq" "$dir/many.txt" && lines err 1
full dedup "$dir/many.txt" && lines err 1
full export --format raw "$dir/g.amq"
full export --format raw --hex "$dir/g.amq"

# Standard output closed: printing fails, printing nothing does not.
last="amq --version >&-"
"$amq" --version >&- 2>"$dir/err"
code=$?
[ "$code" -eq 2 ] || fail "amq --version >&- exited $code, expected 2"
expect err "writing standard output: Bad file descriptor"
for command in query dedup; do
    case $command in query) args="$dir/f.amq" ;; dedup) args= ;; esac
    last="amq $command >&-"
    # shellcheck disable=SC2086
    "$amq" $command $args <"$dir/keys.txt" >&- 2>"$dir/err"
    code=$?
    [ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
    expect err "amq $command: writing standard output: Bad file descriptor"
done
"$amq" build -t bloom -o "$dir/h.amq" "$dir/keys.txt" >&- 2>"$dir/err" ||
    fail "build with standard output closed failed: $(cat "$dir/err")"
empty err

# Standard output written: no message, the usual status.
run 0 --version && empty err
run 0 calc -n 1000 -p 0.01 && empty err
run 0 info --json "$dir/f.amq" && empty err

finish stdout

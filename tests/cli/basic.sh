#!/bin/sh
# The amq tool's dispatch, help, version and error paths: stdout, stderr and
# exit codes.   basic.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

run 0 --version && expect out "amq 0." && empty err
run 0 --help && expect out "Usage: amq COMMAND" && expect out "build" && expect out "calc"
run 2 && expect err "Usage: amq COMMAND"
run 2 frobnicate && expect err "'frobnicate' is not a command"

# bench runs amq_bench, which a build without it lacks (bench.sh tests that).
commands="build add remove query info merge export dedup calc${AMQ_TEST_BENCH:+ bench}"
for command in $commands; do
    run 0 "$command" --help && expect out "Usage: amq $command" && empty err
    run 2 "$command" --no-such-option && expect err "amq $command: unknown option '--no-such-option'" &&
        expect err "Try 'amq $command --help'"
done

# build: usage errors name what is missing or wrong.
run 2 build -o "$dir/f.amq" && expect err "give the filter type with -t TYPE"
run 2 build -t bloom && expect err "give the output file with -o FILE"
run 2 build -t no-such-type -o "$dir/f.amq" && expect err "unknown filter type 'no-such-type'"
run 2 build -t bloom -n && expect err "needs a value"
[ -e "$dir/f.amq" ] && fail "a failed build wrote a file"

# Files that are not filters: the message names the file and the problem.
printf 'hello\n' >"$dir/text.txt"
run 2 query "$dir/text.txt" && expect err "$dir/text.txt" && expect err "not an amq file"
head -c 200 /dev/urandom >"$dir/random.bin"
printf '\211AMQ\r\n\032\n' >"$dir/magic-only.amq"
run 2 info "$dir/random.bin" && expect err "$dir/random.bin" && expect err "not an amq file"
run 2 info "$dir/magic-only.amq" && expect err "corrupt"
: >"$dir/empty.amq"
run 2 info "$dir/empty.amq" && expect err "$dir/empty.amq"
run 2 query "$dir/missing.amq" && expect err "$dir/missing.amq"
run 2 add "$dir/missing.amq" && expect err "$dir/missing.amq"
run 2 remove "$dir/missing.amq" && expect err "$dir/missing.amq"
run 2 info && expect err "give exactly one filter FILE"
run 2 query && expect err "give the filter FILE"
run 2 merge -o "$dir/m.amq" "$dir/a.amq" && expect err "at least two"
run 2 merge "$dir/a.amq" "$dir/b.amq" && expect err "give the output file"
cp "$dir/text.txt" "$dir/exists.amq"
run 2 merge -o "$dir/exists.amq" "$dir/a.amq" "$dir/b.amq" && expect err "already exists"
cmp -s "$dir/text.txt" "$dir/exists.amq" || fail "merge touched an existing file"
run 2 build -t bloom -n 10 -o "$dir/exists.amq" "$dir/text.txt" && expect err "already exists"
cmp -s "$dir/text.txt" "$dir/exists.amq" || fail "build touched an existing file"
run 2 dedup -t bloom -p 2 && expect err "fpr"

finish "cli basic"

#!/bin/sh
# The amq tool's dispatch, help, version and error paths: stdout, stderr and
# exit codes.   basic.sh PATH_TO_AMQ SCRATCH_DIR
set -u
amq=$1 dir=$2
rm -rf "$dir"; mkdir -p "$dir"
failures=0

# run EXPECTED_EXIT ARGS...: runs amq, keeps stdout/stderr in $dir/out, $dir/err.
run() {
    expected=$1; shift
    "$amq" "$@" >"$dir/out" 2>"$dir/err" </dev/null
    code=$?
    if [ "$code" -ne "$expected" ]; then
        echo "FAIL: amq $* exited $code, expected $expected"; sed 's/^/  stderr: /' "$dir/err"
        failures=$((failures + 1))
        return 1
    fi
    return 0
}
# expect FILE TEXT: the file (out or err) contains TEXT.
expect() {
    if ! grep -qF -- "$2" "$dir/$1"; then
        echo "FAIL: $1 of the last command lacks '$2':"; sed 's/^/  | /' "$dir/$1"
        failures=$((failures + 1))
    fi
}
empty() {
    if [ -s "$dir/$1" ]; then
        echo "FAIL: $1 of the last command should be empty:"; sed 's/^/  | /' "$dir/$1"
        failures=$((failures + 1))
    fi
}

run 0 --version && expect out "amq 0." && empty err
run 0 --help && expect out "Usage: amq COMMAND" && expect out "build" && expect out "calc"
run 2 && expect err "Usage: amq COMMAND"
run 2 frobnicate && expect err "'frobnicate' is not a command"

for command in build add remove query info merge dedup calc; do
    run 0 "$command" --help && expect out "Usage: amq $command" && empty err
    run 2 "$command" --no-such-option && expect err "amq $command: unknown option '--no-such-option'" &&
        expect err "Try 'amq $command --help'"
done

# build: usage errors name what is missing or wrong.
run 2 build -o "$dir/f.amq" && expect err "give the filter type with -t TYPE"
run 2 build -t bloom && expect err "give the output file with -o FILE"
run 2 build -t no-such-type -o "$dir/f.amq" && expect err "unknown filter type 'no-such-type'"
run 2 build -t bloom -n && expect err "needs a value"
[ -e "$dir/f.amq" ] && { echo "FAIL: a failed build wrote a file"; failures=$((failures + 1)); }

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
cmp -s "$dir/text.txt" "$dir/exists.amq" || { echo "FAIL: merge touched an existing file"; failures=$((failures + 1)); }
run 2 build -t bloom -n 10 -o "$dir/exists.amq" "$dir/text.txt" && expect err "already exists"
cmp -s "$dir/text.txt" "$dir/exists.amq" || { echo "FAIL: build touched an existing file"; failures=$((failures + 1)); }
run 2 dedup -t bloom -p 2 && expect err "fpr"

if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "cli basic: ok"

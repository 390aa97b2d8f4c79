# What the command-line tests share; sourced by tests/cli/*.sh, which ctest
# runs as `sh SCRIPT PATH_TO_AMQ SCRATCH_DIR`.
#
#   run EXPECTED_EXIT ARGS...   run amq ARGS, stdout/stderr to $dir/out, $dir/err
#   expect out|err TEXT         that output of the last command contains TEXT
#   empty out|err               that output of the last command is empty
#   lines out|err COUNT         that output has exactly COUNT lines
#   fail MESSAGE                count a failure
#   finish NAME                 report and exit: 0 if nothing failed
set -u
amq=$1 dir=$2
rm -rf "$dir"
mkdir -p "$dir"
failures=0
last=

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

run() {
    expected=$1
    shift
    last="amq $*"
    "$amq" "$@" >"$dir/out" 2>"$dir/err" </dev/null
    code=$?
    if [ "$code" -ne "$expected" ]; then
        fail "$last exited $code, expected $expected"
        sed 's/^/  stdout: /' "$dir/out" | head -n 5
        sed 's/^/  stderr: /' "$dir/err" | head -n 5
        return 1
    fi
    return 0
}

expect() {
    grep -qF -- "$2" "$dir/$1" || {
        fail "$1 of '$last' lacks '$2':"
        sed 's/^/  | /' "$dir/$1" | head -n 5
    }
}

empty() {
    [ ! -s "$dir/$1" ] || {
        fail "$1 of '$last' should be empty:"
        sed 's/^/  | /' "$dir/$1" | head -n 5
    }
}

lines() {
    got=$(wc -l <"$dir/$1" | tr -d ' ')
    [ "$got" = "$2" ] || fail "$1 of '$last' has $got lines, expected $2"
}

finish() {
    if [ "$failures" -ne 0 ]; then
        echo "$1: $failures failure(s)"
        exit 1
    fi
    echo "$1: ok"
    exit 0
}

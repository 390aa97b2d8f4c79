# What the command-line tests share; sourced by tests/cli/*.sh, which ctest
# runs as `sh SCRIPT PATH_TO_AMQ SCRATCH_DIR`.
#
#   run EXPECTED_EXIT ARGS...   run amq ARGS, stdout/stderr to $dir/out, $dir/err
#   expect out|err TEXT         that output of the last command contains TEXT
#   empty out|err               that output of the last command is empty
#   lines out|err COUNT         that output has exactly COUNT lines
#   fail MESSAGE                count a failure
#   finish NAME                 report and exit: 0 if nothing failed
#   remove_absent_keys FILE OTHERS PRESENT
#                               amq remove on a filter that removes keys
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

# empty_but_note FILE: FILE (a build's stderr) holds nothing but, for a
# gcs filter, the one line saying the size/speed trade-off its layout chose.
empty_but_note() {
    grep -v '^amq: build: note: .* layout, .* bits/key, a query decodes about ' "$dir/$1" \
        >"$dir/$1.rest" || true
    [ ! -s "$dir/$1.rest" ] || {
        fail "$1 of '$last' should be empty but for the trade-off note:"
        sed 's/^/  | /' "$dir/$1.rest" | head -n 5
    }
}

lines() {
    got=$(wc -l <"$dir/$1" | tr -d ' ')
    [ "$got" = "$2" ] || fail "$1 of '$last' has $got lines, expected $2"
}

# remove_absent_keys FILE OTHERS PRESENT: removing keys of OTHERS that FILE
# certainly lacks reports each, then their number, exits 1, and leaves FILE
# as it was, not rewritten (same inode, same bytes); then 5 of them with
# the first 100 lines of PRESENT remove those 100 and report the 5.
remove_absent_keys() {
    "$amq" query -v "$1" "$2" >"$dir/absent.txt"
    absent=$(wc -l <"$dir/absent.txt" | tr -d ' ')
    cp "$1" "$dir/before.amq"
    inode=$(ls -i "$1" | cut -d' ' -f1)
    run 1 remove "$1" "$dir/absent.txt" && expect err "absent.txt:1: not in the filter" &&
        expect err "$absent of $absent keys were not in the filter; the file is unchanged" &&
        lines err $((absent + 1))
    cmp -s "$1" "$dir/before.amq" || fail "removing absent keys changed the file"
    [ "$(ls -i "$1" | cut -d' ' -f1)" = "$inode" ] || fail "removing absent keys rewrote the file"
    head -n 5 "$dir/absent.txt" >"$dir/mixed.txt"
    head -n 100 "$3" >>"$dir/mixed.txt"
    run 1 remove "$1" "$dir/mixed.txt" && lines err 6 &&
        expect err "5 of 105 keys were not in the filter"
}

finish() {
    if [ "$failures" -ne 0 ]; then
        echo "$1: $failures failure(s)"
        exit 1
    fi
    echo "$1: ok"
    exit 0
}

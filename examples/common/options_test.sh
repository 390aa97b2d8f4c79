#!/bin/sh
# An example program's options (common/options.h): --help and -h print the
# usage to stdout and exit 0; a refused option exits 2 and names what the
# user typed - the letter and its bundle, a long name without its value, the
# option left without a value.
#   options_test.sh SCRATCH_DIR PROGRAM COMMAND...
# Each COMMAND is one word: a subcommand ("-" for none) and the options of
# it that take a value, e.g. "index -o --output"; the first of them must
# take any word as its value (it is given "value" before a bad option).
set -u
dir=$1 program=$2
shift 2
rm -rf "$dir"
mkdir -p "$dir"
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# check EXIT TEXT ARG...: PROGRAM [SUBCOMMAND] ARG... exits EXIT; TEXT ("" for
# none) is in stderr when EXIT is 2, in stdout otherwise.
check() {
    expected=$1 text=$2
    shift 2
    # shellcheck disable=SC2086 # no subcommand: no word
    "$program" $sub "$@" >"$dir/out" 2>"$dir/err" </dev/null
    code=$?
    shown="$(basename "$program") $sub $*"
    [ "$code" -eq "$expected" ] || fail "$shown exited $code, expected $expected: $(head -n 2 "$dir/err")"
    where=out
    [ "$expected" -eq 2 ] && where=err
    [ -z "$text" ] || grep -qF -- "$text" "$dir/$where" ||
        fail "$shown: no \"$text\" in its std$where: $(head -n 2 "$dir/$where")"
}

for command in "$@"; do
    set -f
    # shellcheck disable=SC2086
    set -- $command
    set +f
    sub=$1
    [ "$sub" = - ] && sub=
    shift
    check 0 "Usage: " --help
    [ -s "$dir/err" ] && fail "$(basename "$program") $sub --help wrote to stderr"
    check 0 "Usage: " -h
    check 0 "Usage: " --he # a prefix, as getopt_long takes it
    check 2 "unknown option '-Z'" -Z
    grep -q "in '" "$dir/err" && fail "$sub -Z: names a bundle: $(head -n 1 "$dir/err")"
    check 2 "unknown option '-Z' (in '-Zq')" -Zq foo
    check 2 "unknown option '-Z' (in '-Zq')" foo -Zq
    [ $# -gt 0 ] && check 2 "unknown option '-Z' (in '-Zq')" "$1" value -Zq
    check 2 "unknown option '--bogus'" --bogus
    check 2 "unknown option '--bogus'" --bogus=1 foo
    grep -q "bogus=" "$dir/err" && fail "$sub --bogus=1: names the value: $(head -n 1 "$dir/err")"
    check 2 "unknown option '--bogus'" foo --bogus
    check 2 "option '--help' takes no value" --help=1
    for option in "$@"; do
        check 2 "option '$option' needs a value" "$option"
    done
done

if [ "$failures" -ne 0 ]; then
    echo "$(basename "$program") options: $failures failure(s)"
    exit 1
fi
echo "$(basename "$program") options: ok"

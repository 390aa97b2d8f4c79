#!/bin/sh
# Every command names a bad option as the user typed it: an unknown short
# option (alone and inside a bundle), an unknown long option (with and
# without a value), a long option given a value it does not take, and an
# option missing its value; each is a usage error (exit 2) that points to
# --help, and nothing is written.
#   options.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

seq 1 100 >"$dir/keys.txt"
"$amq" build -t bloom -o "$dir/f.amq" "$dir/keys.txt" || fail "build of the test filter"

# bad_options COMMAND [ARGS...]: the command, with its usual arguments, and
# each bad option placed after them (getopt permutes, so a file argument
# before the option must not be taken for it).
bad_options() {
    command=$1
    shift
    run 2 "$command" "$@" -Z && expect err "amq $command: unknown option '-Z'" &&
        expect err "Try 'amq $command --help'."
    run 2 "$command" "$@" -Zq && expect err "unknown option '-Z' (in '-Zq')"
    run 2 "$command" "$@" --no-such-option && expect err "unknown option '--no-such-option'"
    run 2 "$command" "$@" --no-such-option=3 && expect err "unknown option '--no-such-option'"
    run 2 "$command" "$@" --help=3 && expect err "option '--help' takes no value"
    empty out
}

bad_options build -t bloom -o "$dir/new.amq" "$dir/keys.txt"
[ ! -e "$dir/new.amq" ] || fail "build with a bad option wrote its output"
bad_options add "$dir/f.amq" "$dir/keys.txt"
bad_options remove "$dir/f.amq" "$dir/keys.txt"
bad_options query "$dir/f.amq" "$dir/keys.txt"
bad_options info "$dir/f.amq"
bad_options merge -o "$dir/m.amq" "$dir/f.amq" "$dir/f.amq"
bad_options export "$dir/f.amq" --format raw
bad_options dedup "$dir/keys.txt"
bad_options calc -n 1000 -p 0.01

# A word before the bundle is never named instead of it.
run 2 query "$dir/f.amq" -xyz && expect err "unknown option '-x' (in '-xyz')"
run 2 dedup -zq && expect err "unknown option '-z' (in '-zq')"

# Missing values, short and long, at the end of the command line.
run 2 build -t bloom -o && expect err "option '-o' needs a value"
run 2 build -t bloom -o "$dir/x.amq" --seed && expect err "option '--seed' needs a value"
run 2 dedup -n && expect err "option '-n' needs a value"
run 2 export "$dir/f.amq" --format && expect err "option '--format' needs a value"
run 2 calc -n && expect err "option '-n' needs a value"
run 2 build -t bloom -o "$dir/x.amq" --semi-sort=1 && expect err "option '--semi-sort' takes no value"

# Malformed values: the option named as the tool spells it, short form too.
run 2 build -t bloom -n abc -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "option '--capacity' (-n): 'abc' is not a number"
run 2 build -t bloom -n 0 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "option '--capacity' (-n): '0' is below the minimum, 1"
run 2 dedup -p 2 "$dir/keys.txt" && expect err "option '--fpr' (-p): '2' is not between 0 and 1"
run 2 build -t bloom --layout split -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--layout' for bloom"
run 2 query "$dir/f.amq" --field x "$dir/keys.txt" && expect err "--field takes a field number"
[ ! -e "$dir/x.amq" ] || fail "a refused build wrote its output"

# An option that names one thing, given twice, is an error, not the last.
run 2 build -t bloom -o "$dir/x.amq" -o "$dir/y.amq" "$dir/keys.txt" &&
    expect err "-o/--output is given twice"
run 2 build -t bloom -t cuckoo -o "$dir/x.amq" "$dir/keys.txt" && expect err "-t/--type is given twice"
run 2 merge -o "$dir/x.amq" --output "$dir/y.amq" "$dir/f.amq" "$dir/f.amq" &&
    expect err "-o/--output is given twice"
[ ! -e "$dir/x.amq" ] && [ ! -e "$dir/y.amq" ] || fail "an option given twice wrote a file"

# bench: amq_bench's own parser, the same rules (when this build has it).
if [ -n "${AMQ_TEST_BENCH:-}" ]; then
    run 2 bench -Z && expect err "amq bench: unknown option '-Z'"
    run 2 bench --no-such-option=1 && expect err "unknown option '--no-such-option'"
    run 2 bench --json=1 && expect err "option '--json' takes no value"
    run 2 bench --keys && expect err "option '--keys' needs a value"
fi

finish "cli options"

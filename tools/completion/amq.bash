# bash completion for amq(1): the subcommands, each subcommand's options,
# the type names after -t/--type, the values of the options that take one of
# a few words (--hash, --layout, --format, ...), nothing after an option that
# takes a number, a key or a byte (--delimiter), and file names everywhere
# else (inputs, filters, -o). Installed as
# share/bash-completion/completions/amq, which bash-completion loads on the
# first `amq <TAB>`; `source` it to try it.
#
# The lists are kept in step with the tool by tests/cli/completion.sh: the
# types must be those `amq --help` lists, each subcommand's long options
# those its --help shows.

_amq_commands="build add remove query info merge export dedup calc bench"
_amq_types="bloom blocked-bloom counting-bloom scalable-bloom cuckoo gcs hfb fuse8 fuse16"
# The options of every subcommand that reads keys (build, add, remove, query,
# dedup): how its lines give keys.
_amq_input_options="--hex --binary --field --delimiter"

# The options of one subcommand.
_amq_options()
{
    case $1 in
    build)
        echo "-t --type -o --output --force $_amq_input_options -n --capacity -p --fpr" \
            "--seed --hash" \
            "--key -m --bits -k --hashes --layout --counter-bits --growth --tightening" \
            "--fingerprint-bits --bucket-size --max-kicks --semi-sort --range --rice-bits" \
            "--divisor --index --bip158-key --bank-bits --arity --count-duplicates --help" ;;
    add) echo "--count-duplicates $_amq_input_options --help" ;;
    remove) echo "$_amq_input_options --help" ;;
    query) echo "-v --invert -c --count $_amq_input_options --help" ;;
    info) echo "--json --help" ;;
    merge) echo "-o --output --force --help" ;;
    export) echo "-f --format --hex --help" ;;
    dedup) echo "-n --capacity -p --fpr -t --type --stats $_amq_input_options --help" ;;
    calc) echo "-n --capacity -p --fpr -m --bits -k --hashes --json --help" ;;
    bench) echo "--filter --keys --runs --seed --json --list --help" ;;
    esac
}

# COMPREPLY: the words of $1 that start with the current word.
_amq_words()
{
    mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2")
}

# COMPREPLY: file and directory names that start with the current word.
_amq_files()
{
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$1")
}

_amq()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        _amq_words "$_amq_commands --help --version" "$cur"
        return 0
    fi
    local command=${COMP_WORDS[1]}
    case $command:$prev in
    *:-t | *:--type) _amq_words "$_amq_types" "$cur"; return 0 ;;
    *:--hash) _amq_words "xxh3 md5 siphash" "$cur"; return 0 ;;
    *:--layout) _amq_words "block split" "$cur"; return 0 ;;
    *:--counter-bits) _amq_words "4 8" "$cur"; return 0 ;;
    *:--bucket-size) _amq_words "2 4 8" "$cur"; return 0 ;;
    *:--arity) _amq_words "3 4" "$cur"; return 0 ;;
    export:-f | export:--format) _amq_words "raw bip158" "$cur"; return 0 ;;
    *:-o | *:--output) _amq_files "$cur"; return 0 ;;
    *:-n | *:--capacity | *:-p | *:--fpr | *:-m | *:--bits | *:-k | *:--hashes | *:--seed | \
        *:--key | *:--growth | *:--tightening | *:--fingerprint-bits | *:--max-kicks | \
        *:--range | *:--rice-bits | *:--divisor | *:--index | *:--bip158-key | \
        *:--bank-bits | *:--keys | *:--runs | *:--filter | *:--field | *:--delimiter)
        return 0 ;; # a number, a key or a byte to type
    esac
    if [[ $cur == -* ]]; then
        _amq_words "$(_amq_options "$command")" "$cur"
    else
        _amq_files "$cur"
    fi
    return 0
}

complete -F _amq amq

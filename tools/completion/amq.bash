# bash completion for amq(1): the subcommands, each subcommand's options,
# the type names after -t/--type, the values of the options that take one of
# a few words (--hash, --layout, --format, ...), nothing after an option that
# takes a number, a key or a byte (--delimiter), and file names everywhere
# else (inputs, filters, -o). Installed as
# share/bash-completion/completions/amq, which bash-completion loads on the
# first `amq <TAB>`; `source` it to try it.
#
# The filter types' options (build's -n, --layout, --arity...) and the words
# of those that take one of a few are not written here: the script asks the
# amq being completed (`amq __options`, which reads the library's tables),
# so an option a type adds is completed as soon as the tool has it. The
# other lists are kept in step with the tool by tests/cli/completion.sh: the
# types must be those `amq --help` lists, each subcommand's long options
# those its --help shows.

_amq_commands="build add remove query info merge export dedup calc bench"
_amq_types="bloom blocked-bloom counting-bloom scalable-bloom cuckoo gcs hfb fuse8 fuse16"
# The options of every subcommand that reads keys (build, add, remove, query,
# dedup): how its lines give keys.
_amq_input_options="--hex --binary --field --delimiter"

# The filter types' options, one a line, "NAME LETTER KIND [WORD...]" (LETTER
# "-" when none), from the amq being completed ($1: the command as typed).
_amq_type_options()
{
    local amq=${1/#\~/$HOME}
    "$amq" __options 2>/dev/null
}

# The options of one subcommand ($2: the amq command as typed).
_amq_options()
{
    case $1 in
    build)
        local name letter kind words
        echo "-t --type -o --output --force $_amq_input_options --add-once --count-duplicates --help"
        while read -r name letter kind words; do
            printf '%s\n' "--$name"
            [ "$letter" != - ] && printf '%s\n' "-$letter"
        done < <(_amq_type_options "$2") ;;
    add) echo "--add-once --count-duplicates $_amq_input_options --help" ;;
    remove) echo "$_amq_input_options --help" ;;
    query) echo "-v --invert -c --count --mmap $_amq_input_options --help" ;;
    info) echo "--json --show-seed --help" ;;
    merge) echo "-o --output --force --help" ;;
    export) echo "-f --format --hex --help" ;;
    dedup) echo "-n --capacity -p --fpr -t --type --stages --stats $_amq_input_options --help" ;;
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
    export:-f | export:--format) _amq_words "raw bip158" "$cur"; return 0 ;;
    dedup:--stages) _amq_words "block split-block classic" "$cur"; return 0 ;;
    *:-o | *:--output) _amq_files "$cur"; return 0 ;;
    dedup:-n | dedup:--capacity | dedup:-p | dedup:--fpr | calc:-n | calc:--capacity | \
        calc:-p | calc:--fpr | calc:-m | calc:--bits | calc:-k | calc:--hashes | \
        bench:--seed | *:--keys | *:--runs | *:--filter | *:--field | *:--delimiter)
        return 0 ;; # a number or a byte to type
    esac
    # After an option of the filter types (build's): its words, or nothing
    # to offer when it takes a number or a key.
    if [[ $command == build && $prev == -* ]]; then
        local name letter kind words
        while read -r name letter kind words; do
            [[ $prev == "--$name" || ($letter != - && $prev == "-$letter") ]] || continue
            case $kind in
            flag) break ;;
            choice) _amq_words "$words" "$cur"; return 0 ;;
            *) return 0 ;;
            esac
        done < <(_amq_type_options "${COMP_WORDS[0]}")
    fi
    if [[ $cur == -* ]]; then
        _amq_words "$(_amq_options "$command" "${COMP_WORDS[0]}")" "$cur"
    else
        _amq_files "$cur"
    fi
    return 0
}

complete -F _amq amq

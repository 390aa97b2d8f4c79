#!/bin/sh
# The input every command that reads keys shares (tools/cli_input.c):
#  - lines are printed as written: dedup of distinct lines and query of a
#    filter built from them give the file back byte for byte, with CRLF
#    and LF ends, NUL bytes, empty lines, no final newline, several inputs;
#  - lines up to 64 MiB work in dedup, query, build and add; a longer one
#    is refused naming the file, the line and the limit, before any of it
#    is printed, and a 10 GB line is not read to its end;
#  - gzip and zstd input (files and standard input, several members or
#    frames) gives the same filters, byte for byte, as the plain keys; a
#    truncated or damaged stream is an error naming the file and the byte
#    offset (tests/cli/compressed.sh has every shape zstd and gzip write);
#  - input that looks binary is refused, saying why and that --binary
#    reads it, before any of its lines is taken; --binary and --hex read it;
#  - --field and --delimiter pick the key from a field, query and dedup
#    printing the whole line; a line of fewer fields has an empty key;
#  - an empty file, empty lines only, no final newline and NUL bytes work
#    in build (every type), query, add and dedup.
#   input.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

# same FILE WHAT: the last command's output is FILE's bytes.
same() {
    cmp -s "$dir/out" "$1" || fail "$2: the output is not $(basename "$1") byte for byte"
}

# ---- lines printed as written -------------------------------------------------

# Distinct keys: a CR before LF is not part of the key, so "crlf" below is
# the only line of that key; "lone\rcr" keeps its CR (not before LF).
printf 'plain\ncrlf\r\nnul\000inside\r\nlone\rcr\n\n\tindented\nlast, no end' >"$dir/distinct.txt"
run 0 dedup --binary "$dir/distinct.txt" && empty err && same "$dir/distinct.txt" "dedup"
run 0 build -t bloom -p 1e-6 --binary -o "$dir/distinct.amq" "$dir/distinct.txt"
run 0 query --binary "$dir/distinct.amq" "$dir/distinct.txt" && same "$dir/distinct.txt" "query"
run 0 build -t fuse8 --binary -o "$dir/distinct8.amq" "$dir/distinct.txt"
run 0 query --binary "$dir/distinct8.amq" "$dir/distinct.txt" && same "$dir/distinct.txt" "query fuse8"

# A line end is not part of the key: "a\r\n", "a\n" and a last "a" are one key,
# printed as first written.
printf 'a\r\nb\na\na\r\n' >"$dir/ends.txt"
run 0 dedup "$dir/ends.txt" && printf 'a\r\nb\n' | cmp -s - "$dir/out" ||
    fail "dedup of CRLF and LF lines: $(od -c "$dir/out" | head -n 3)"
run 0 build -t bloom -p 1e-6 -o "$dir/ends.amq" "$dir/ends.txt"
printf 'a' >"$dir/a-no-end.txt"
run 0 query "$dir/ends.amq" "$dir/a-no-end.txt" && same "$dir/a-no-end.txt" "query of a line with no end"

# Several inputs: a last line with no end is printed without one, and a
# newline separates it from the next input's first line.
printf 'x\r\ny' >"$dir/first.txt"
printf 'z\r\nw\n' >"$dir/second.txt"
run 0 dedup "$dir/first.txt" "$dir/second.txt" && printf 'x\r\ny\nz\r\nw\n' | cmp -s - "$dir/out" ||
    fail "dedup of two inputs: $(od -c "$dir/out" | head -n 3)"
"$amq" dedup --binary "$dir/distinct.txt" - <"$dir/second.txt" >"$dir/out" 2>"$dir/err" ||
    fail "dedup distinct.txt - exited $?"
{ cat "$dir/distinct.txt"; printf '\n'; cat "$dir/second.txt"; } >"$dir/both.txt"
same "$dir/both.txt" "dedup distinct.txt - <second.txt"
run 0 query --binary "$dir/distinct.amq" "$dir/distinct.txt" "$dir/distinct.txt"
{ cat "$dir/distinct.txt"; printf '\n'; cat "$dir/distinct.txt"; } >"$dir/twice.txt"
same "$dir/twice.txt" "query of the file twice"

# ---- long lines -------------------------------------------------------------------

# chars N C: N bytes C, no newline.
chars() {
    head -c "$1" /dev/zero | tr '\0' "$2"
}
{
    echo first
    chars 2097152 a
    echo
    chars 5242880 b
    printf '\r\n'
    echo last
} >"$dir/long.txt"
run 0 dedup "$dir/long.txt" && empty err && same "$dir/long.txt" "dedup of 2 and 5 MiB lines"
run 0 build -t bloom -p 1e-6 -o "$dir/long.amq" "$dir/long.txt"
run 0 query "$dir/long.amq" "$dir/long.txt" && same "$dir/long.txt" "query of 2 and 5 MiB lines"
run 0 build -t fuse16 -o "$dir/long16.amq" "$dir/long.txt"
run 0 query "$dir/long16.amq" "$dir/long.txt" && same "$dir/long.txt" "query fuse16 of long lines"
printf 'other\n' >"$dir/other.txt"
run 0 build -t bloom -n 100 -p 1e-6 -o "$dir/grown.amq" "$dir/other.txt"
run 0 add "$dir/grown.amq" "$dir/long.txt"
run 0 query "$dir/grown.amq" "$dir/long.txt" && same "$dir/long.txt" "query after add of long lines"

# Exactly 64 MiB (and its CRLF) is read; one byte more is refused, naming the
# file, the line and the limit, before anything of that line is printed.
{
    echo a
    chars 67108864 c
    printf '\r\n'
} >"$dir/limit.txt"
run 0 dedup "$dir/limit.txt" && same "$dir/limit.txt" "dedup of a 64 MiB line"
{
    echo a
    echo b
    chars 67108865 c
    echo
    echo d
} >"$dir/over.txt"
rm -f "$dir/limit.txt"
run 2 dedup "$dir/over.txt" &&
    expect err "over.txt: line 3 is longer than 64 MiB, the longest line amq reads"
printf 'a\nb\n' | cmp -s - "$dir/out" || fail "dedup printed part of the line over the limit"
run 2 build -t bloom -o "$dir/over.amq" "$dir/over.txt" && expect err "line 3 is longer than 64 MiB"
[ -e "$dir/over.amq" ] && fail "build wrote a filter from input with a line over the limit"
rm -f "$dir/over.txt"
# A 10 GB line: refused once 64 MiB are read (head stops on the closed pipe).
head -c 10000000000 /dev/zero | "$amq" dedup --binary >"$dir/out" 2>"$dir/err"
code=$?
[ "$code" -eq 2 ] || fail "dedup of a 10 GB line exited $code, expected 2"
grep -qF "(standard input): line 1 is longer than 64 MiB" "$dir/err" ||
    fail "dedup of a 10 GB line: $(head -n 2 "$dir/err")"

# ---- compressed input -----------------------------------------------------------

awk 'BEGIN { for (i = 0; i < 5000; i++) printf "key-%d\n", i * 7919 }' >"$dir/keys.txt"
gzip -c "$dir/keys.txt" >"$dir/keys.gz"
zstd -q -c "$dir/keys.txt" >"$dir/keys.zst"
# Several gzip members, several zstd frames (as `cat a.gz b.gz` makes).
{ head -n 2000 "$dir/keys.txt" | gzip -c; tail -n 3000 "$dir/keys.txt" | gzip -c; } >"$dir/members.gz"
{ head -n 2000 "$dir/keys.txt" | zstd -q -c; tail -n 3000 "$dir/keys.txt" | zstd -q -c; } >"$dir/frames.zst"
for type in bloom fuse8; do
    run 0 build -t "$type" -o "$dir/plain-$type.amq" "$dir/keys.txt"
    for input in keys.gz keys.zst members.gz frames.zst; do
        run 0 build -t "$type" -o "$dir/$input-$type.amq" "$dir/$input" && empty err
        cmp -s "$dir/plain-$type.amq" "$dir/$input-$type.amq" ||
            fail "build -t $type from $input: not the filter of the plain keys"
        "$amq" build -t "$type" -o "$dir/stdin-$input-$type.amq" <"$dir/$input" 2>"$dir/err" ||
            fail "build -t $type <$input exited $?"
        cmp -s "$dir/plain-$type.amq" "$dir/stdin-$input-$type.amq" ||
            fail "build -t $type from standard input $input: not the filter of the plain keys"
    done
done
run 0 dedup "$dir/keys.gz" && empty err && same "$dir/keys.txt" "dedup keys.gz"
run 0 dedup "$dir/frames.zst" && same "$dir/keys.txt" "dedup frames.zst"
run 0 query "$dir/plain-fuse8.amq" "$dir/members.gz" && same "$dir/keys.txt" "query members.gz"
"$amq" query "$dir/plain-bloom.amq" - <"$dir/keys.zst" >"$dir/out" 2>"$dir/err" ||
    fail "query - <keys.zst exited $?"
same "$dir/keys.txt" "query - <keys.zst"
printf 'gzipped\n' | gzip -c >"$dir/one.gz"
printf 'gzipped\n' >"$dir/one.txt"
run 1 query "$dir/grown.amq" "$dir/one.txt"
run 0 add "$dir/grown.amq" "$dir/one.gz" && empty err
run 0 query "$dir/grown.amq" "$dir/one.txt" && same "$dir/one.txt" "query after add from one.gz"

# Truncated and damaged streams: errors naming the file, nothing built.
# half FILE: its first half.
half() {
    head -c $(($(wc -c <"$1") / 2)) "$1"
}
half "$dir/keys.gz" >"$dir/truncated.gz"
run 2 dedup "$dir/truncated.gz" && expect err "truncated.gz: the gzip data ends early, at byte offset $(wc -c <"$dir/truncated.gz" | tr -d ' ')"
run 2 build -t bloom -o "$dir/truncated.amq" "$dir/truncated.gz" && expect err "truncated.gz:"
[ -e "$dir/truncated.amq" ] && fail "build wrote a filter from a truncated .gz"
half "$dir/keys.zst" >"$dir/truncated.zst"
run 2 query "$dir/plain-bloom.amq" "$dir/truncated.zst" && expect err "truncated.zst:" &&
    expect err "zstd data ends early"
cp "$dir/keys.gz" "$dir/damaged.gz"
printf 'XXXXXXXX' | dd of="$dir/damaged.gz" bs=1 seek=$(($(wc -c <"$dir/keys.gz") / 2)) \
    conv=notrunc 2>/dev/null
run 2 dedup "$dir/damaged.gz" && expect err "damaged.gz:" && expect err "damaged gzip data"
{ cat "$dir/keys.gz"; echo trailing; } >"$dir/trailing.gz"
run 2 dedup "$dir/trailing.gz" &&
    expect err "trailing.gz: bytes at byte offset $(wc -c <"$dir/keys.gz" | tr -d ' '), after the gzip data, that are neither another gzip member nor zero padding"

# ---- binary input -------------------------------------------------------------------

# A NUL byte; mostly control bytes: refused, saying why and what reads it,
# before a line is printed or a filter saved. Text with UTF-8: read.
run 2 dedup "$dir/distinct.txt" && lines err 1 && empty out &&
    expect err "distinct.txt: not read: it looks binary (a NUL byte at byte offset 15 in the first 64 KiB)" &&
    expect err "give --binary"
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%c%c%c%d\n", 1, 2, 3, i }' >"$dir/control.bin"
run 2 dedup "$dir/control.bin" "$dir/distinct.txt" && lines err 1 && empty out &&
    expect err "control.bin: not read: it looks binary (mostly bytes that are not text in the first 64 KiB)"
run 2 build -t bloom -o "$dir/control.amq" "$dir/control.bin" && lines err 1
[ -e "$dir/control.amq" ] && fail "build saved a filter of input that looks binary"
run 0 build -t bloom -n 100 -o "$dir/text.amq" "$dir/other.txt"
cp "$dir/text.amq" "$dir/text.before"
run 2 add "$dir/text.amq" "$dir/other.txt" "$dir/control.bin" && expect err "control.bin: not read"
cmp -s "$dir/text.amq" "$dir/text.before" || fail "add changed the filter from input that looks binary"
run 2 query "$dir/text.amq" "$dir/control.bin" && empty out && expect err "give --binary"
run 0 dedup --binary "$dir/control.bin" "$dir/distinct.txt" && empty err
run 0 build -t bloom --binary -o "$dir/control.amq" "$dir/control.bin" && empty err
run 0 query -c --binary "$dir/control.amq" "$dir/control.bin" && expect out 3000
printf 'h\303\251llo\n\346\227\245\346\234\254\n\033[1mbold\033[0m\tx\n' >"$dir/utf8.txt"
run 0 dedup "$dir/utf8.txt" && empty err
printf '00ff\n0000\n' >"$dir/hex.txt"
run 0 dedup --hex "$dir/hex.txt" && empty err && lines out 2
# Judged by the content, after decompression; from a pipe as the bytes come.
gzip -c "$dir/control.bin" >"$dir/control.gz"
run 2 dedup "$dir/control.gz" && empty out &&
    expect err "control.gz: not read: it looks binary (mostly bytes that are not text in the first 64 KiB decompressed from gzip)"
run 0 dedup --binary "$dir/control.gz" && lines out 3000
cat "$dir/distinct.txt" | "$amq" dedup >"$dir/out" 2>"$dir/err"
code=$?
last="amq dedup <pipe of distinct.txt"
[ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
expect err "(standard input): not read: it looks binary (a NUL byte"
# A NUL byte past the first 64 KiB is a key's byte like any other.
{ seq 1 20000; printf 'late\000nul\n'; } >"$dir/late-nul.txt"
run 0 dedup "$dir/late-nul.txt" && empty err && lines out 20001

# ---- fields ---------------------------------------------------------------------------

# Build from a CSV's 2nd column; query a log whose 3rd (tab-separated)
# field holds the keys: whole lines are printed.
printf 'id,email,name\n1,ann@example.org,Ann\n2,bob@example.org,Bob\n' >"$dir/users.csv"
run 0 build -t bloom -p 1e-6 --field 2 --delimiter , -o "$dir/emails.amq" "$dir/users.csv"
printf '09:00\tGET\tann@example.org\t200\r\n09:01\tGET\teve@example.org\t200\n09:02\tPUT\tbob@example.org\n' \
    >"$dir/log.tsv"
run 0 query --field 3 "$dir/emails.amq" "$dir/log.tsv" &&
    printf '09:00\tGET\tann@example.org\t200\r\n09:02\tPUT\tbob@example.org\n' | cmp -s - "$dir/out" ||
    fail "query --field 3: $(od -c "$dir/out" | head -n 3)"
run 0 query --field 3 --delimiter '\t' -v "$dir/emails.amq" "$dir/log.tsv" && lines out 1 &&
    expect out "eve@example.org"
# Without --field the key is the whole line.
run 1 query "$dir/emails.amq" "$dir/users.csv" && empty out
# Dedup by a field; a line of fewer fields has an empty key (as awk's $N).
printf 'a,1\nb,1\nc,2\nd\ne,\nf,3,x\n' >"$dir/fields.csv"
run 0 dedup --field 2 --delimiter , "$dir/fields.csv" &&
    printf 'a,1\nc,2\nd\nf,3,x\n' | cmp -s - "$dir/out" || fail "dedup --field 2: $(cat "$dir/out")"
awk -F, '!seen[$2]++' "$dir/fields.csv" | cmp -s - "$dir/out" || fail "dedup --field 2 is not awk's"
# With --hex the field is decoded.
printf 'k1 00ff\nk2 00FF\nk3 abcd\n' >"$dir/hexfields.txt"
run 0 dedup --hex --field 2 --delimiter ' ' "$dir/hexfields.txt" && lines out 2 &&
    expect out "k1 00ff" && expect out "k3 abcd"
printf 'k1 zz\n' >"$dir/badhex.txt"
run 2 dedup --hex --field 2 --delimiter ' ' "$dir/badhex.txt" && expect err "badhex.txt:1: not a hex key"
# add and remove by a field.
run 0 build -t counting-bloom -n 1000 -p 1e-4 -o "$dir/counting.amq" "$dir/other.txt"
run 0 add --field 2 --delimiter , "$dir/counting.amq" "$dir/users.csv"
printf 'ann@example.org\n' >"$dir/ann.txt"
run 0 query "$dir/counting.amq" "$dir/ann.txt" && lines out 1
run 0 remove --field 2 --delimiter , "$dir/counting.amq" "$dir/users.csv"
run 1 query "$dir/counting.amq" "$dir/ann.txt" && lines out 0

# Bad values: usage errors (exit 2) in every command that reads keys; good
# ones taken by each.
run 0 build -t counting-bloom -n 100 -o "$dir/removable.amq" "$dir/other.txt"
for command in build add remove query dedup; do
    case $command in
    build) args="-t bloom -o $dir/never.amq" ;;
    add | query) args=$dir/grown.amq ;;
    remove) args=$dir/removable.amq ;;
    dedup) args= ;;
    esac
    # shellcheck disable=SC2086
    run 2 $command --field 0 $args && expect err "--field takes a field number, from 1: '0'"
    # shellcheck disable=SC2086
    run 2 $command --field 1 --delimiter ab $args && expect err "--delimiter takes one byte"
    # shellcheck disable=SC2086
    run 2 $command --delimiter , $args "$dir/other.txt" && expect err "give --field too"
    # shellcheck disable=SC2086
    run 0 $command --binary --field 1 $args "$dir/other.txt"
done

# ---- odd input through every type ------------------------------------------------

# An empty file, empty lines only (every key the empty string), no final
# newline, NUL bytes: every type builds from each and answers for each of
# its lines; dynamic filters take each through add; dedup prints each
# distinct line once. The ASan+UBSan run of this script is what checks
# that none of it reads out of bounds or does undefined arithmetic.
: >"$dir/odd-empty.txt"
printf '\n\n\n' >"$dir/odd-blank.txt"
printf 'a\nb\nc' >"$dir/odd-nofinal.txt"
printf 'x\000y\nx\000z\n\000\n' >"$dir/odd-nul.txt"
for input in empty blank nofinal nul; do
    file=$dir/odd-$input.txt
    # As grep: query and dedup exit 1 when they print nothing.
    printed=0
    [ "$input" = empty ] && printed=1
    for type in bloom blocked-bloom counting-bloom scalable-bloom cuckoo fuse8 fuse16 gcs; do
        run 0 build --binary -t "$type" -o "$dir/odd-$input-$type.amq" "$file" && empty_but_note err
        run $printed query --binary "$dir/odd-$input-$type.amq" "$file" &&
            same "$file" "query $type of $input"
    done
    for type in bloom cuckoo scalable-bloom; do
        run 0 build -t "$type" -n 10000 -o "$dir/odd-add-$input-$type.amq" "$dir/keys.txt"
        run 0 add --binary "$dir/odd-add-$input-$type.amq" "$file" && empty err
        run $printed query --binary "$dir/odd-add-$input-$type.amq" "$file" &&
            same "$file" "query $type after add of $input"
    done
    run $printed dedup --binary "$file" && empty err
done
# hfb keys are hex IDs: odd lines are refused naming the line.
run 2 build -t hfb -o "$dir/odd.amq" "$dir/odd-blank.txt" &&
    expect err "odd-blank.txt:1: an hfb ID is 32 hex digits"
run 2 build -t hfb -o "$dir/odd.amq" "$dir/odd-nul.txt" &&
    expect err "odd-nul.txt:1: an hfb ID is 32 hex digits"

finish "cli input"

#!/bin/sh
# Every shape of gzip and zstd data that gzip -t or zstd -t accepts is read
# as its decompressed lines by every command that reads keys (build, add,
# remove, query, dedup), from a file and from standard input: each shape is
# made here with Debian's gzip, pigz, zstd and pzstd (and skippable frames
# by hand, each checked with zstd -t first), and after each command every
# key answers yes. The shapes: one member or frame; several; empty members
# and frames first, between and last; skippable frames (all 16 magic
# numbers) first, between and last; pzstd's output (a skippable frame
# before every frame) and pigz's (many blocks; independent blocks); zero
# padding after the last gzip member, as tar and tape tools add; a zstd
# window of 128 MiB (--long=27), the largest zstd -d decodes by default.
# Past that (--long=28), and for data whose first bytes say compressed but
# that does not decode, each command exits 2 naming the file (and the byte
# offset, or the option that decodes it), with or without --binary, and
# nothing is built, added or printed. A compressed filter file (not keys)
# is refused by the commands that load filters, merge's inputs among them,
# naming its format.   compressed.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

for tool in gzip pigz zstd pzstd; do
    command -v $tool >/dev/null 2>&1 || {
        echo "compressed: $tool is missing (scripts/install-deps.sh installs it)"
        exit 1
    }
done

# byte N: the byte of value N.
byte() {
    # shellcheck disable=SC2059 # the format is the escape made here
    printf "\\$(printf '%03o' "$1")"
}
# skippable NIBBLE SIZE: a skippable frame (magic 0x184D2A50 + NIBBLE) of
# SIZE bytes of content.
skippable() {
    byte $((0x50 + $1))
    byte 42
    byte 77
    byte 24
    byte $(($2 & 255))
    byte $(($2 >> 8 & 255))
    byte $(($2 >> 16 & 255))
    byte $(($2 >> 24 & 255))
    head -c "$2" /dev/zero | tr '\0' 's'
}
# zeros N: N zero bytes.
zeros() {
    head -c "$1" /dev/zero
}

awk 'BEGIN { for (i = 0; i < 20000; i++) printf "key-%d\n", i * 7919 }' >"$dir/keys.txt"
head -n 7000 "$dir/keys.txt" >"$dir/part1.txt"
sed -n '7001,13000p' "$dir/keys.txt" >"$dir/part2.txt"
tail -n 7000 "$dir/keys.txt" >"$dir/part3.txt"
# pzstd cuts its input into frames of about 1.5 MiB at level 1, pigz into
# blocks of -b KiB: 300000 keys (4.3 MB) make several of each.
awk 'BEGIN { for (i = 0; i < 300000; i++) printf "big-%d\n", i * 13 }' >"$dir/big.txt"

# ---- the shapes ---------------------------------------------------------------

# shape NAME PLAIN: the file $dir/NAME, made by the commands on standard
# input, holds the lines of $dir/PLAIN.txt. (The end of a pipeline, so a
# subshell: the list is kept in a file.)
: >"$dir/shapes.list"
shape() {
    cat >"$dir/$1"
    echo "$1:$2" >>"$dir/shapes.list"
}

gzip -c "$dir/keys.txt" | shape one.gz keys
gzip -c -9 "$dir/keys.txt" | shape best.gz keys
gzip -c <"$dir/keys.txt" | shape unnamed.gz keys
for p in 1 2 3; do gzip -c "$dir/part$p.txt"; done | shape members.gz keys
{
    printf '' | gzip -c
    gzip -c "$dir/part1.txt"
    printf '' | gzip -c
    gzip -c "$dir/part2.txt"
    gzip -c "$dir/part3.txt"
    printf '' | gzip -c
} | shape empty-members.gz keys
{
    gzip -c "$dir/keys.txt"
    zeros 1
} | shape padded-1.gz keys
# As tar pads a compressed archive: to a whole number of 10240-byte records.
gzip -c "$dir/keys.txt" >"$dir/unpadded.gz"
size=$(wc -c <"$dir/unpadded.gz" | tr -d ' ')
{
    cat "$dir/unpadded.gz"
    zeros $((10240 - size % 10240))
} | shape padded-tar.gz keys
{
    for p in 1 2 3; do gzip -c "$dir/part$p.txt"; done
    zeros 100000
} | shape members-padded.gz keys
pigz -c -p 2 -b 32 "$dir/big.txt" | shape pigz.gz big
pigz -c -p 2 -b 32 -i "$dir/big.txt" | shape pigz-independent.gz big
{
    head -n 150000 "$dir/big.txt" | pigz -c -p 2 -b 32
    tail -n 150000 "$dir/big.txt" | pigz -c -p 2 -b 64
} | shape pigz-members.gz big

zstd -q -c "$dir/keys.txt" | shape one.zst keys
zstd -q -c --no-check -19 "$dir/keys.txt" | shape no-check.zst keys
zstd -q -c <"$dir/keys.txt" | shape unsized.zst keys
for p in 1 2 3; do zstd -q -c "$dir/part$p.txt"; done | shape frames.zst keys
{
    printf '' | zstd -q -c
    zstd -q -c "$dir/part1.txt"
    printf '' | zstd -q -c
    zstd -q -c "$dir/part2.txt"
    zstd -q -c "$dir/part3.txt"
    printf '' | zstd -q -c
} | shape empty-frames.zst keys
{
    skippable 0 16
    zstd -q -c "$dir/keys.txt"
} | shape skippable-first.zst keys
{
    zstd -q -c "$dir/part1.txt"
    skippable 7 1000
    zstd -q -c "$dir/part2.txt"
    skippable 15 0
    zstd -q -c "$dir/part3.txt"
} | shape skippable-between.zst keys
{
    zstd -q -c "$dir/keys.txt"
    skippable 3 5
} | shape skippable-last.zst keys
{
    n=0
    while [ $n -lt 16 ]; do
        skippable $n $((n * 3))
        n=$((n + 1))
    done
    zstd -q -c "$dir/part1.txt"
    skippable 10 70000
    skippable 11 1
    zstd -q -c "$dir/part2.txt"
    printf '' | zstd -q -c
    skippable 12 2
    zstd -q -c "$dir/part3.txt"
    skippable 13 0
} | shape skippable-every.zst keys
pzstd -q -c -p 2 "$dir/keys.txt" | shape pzstd.zst keys
pzstd -q -c -p 2 -1 "$dir/big.txt" | shape pzstd-frames.zst big
{
    head -n 150000 "$dir/big.txt" | pzstd -q -c -p 2 -1
    tail -n 150000 "$dir/big.txt" | pzstd -q -c -p 2 -1
} | shape pzstd-concatenated.zst big
# From a pipe zstd does not know the size, and the frame asks for the whole
# window --long gives: 128 MiB, as far as zstd -d goes without --long.
zstd -q -c --long=27 <"$dir/keys.txt" | shape long-27.zst keys

shapes=$(cat "$dir/shapes.list")
[ "$(echo "$shapes" | wc -l)" -eq 24 ] || fail "$(echo "$shapes" | wc -l) shapes made, expected 24"

# Every shape is one its tool's own test accepts, and decompresses to the
# keys (what the rest of this script checks amq against).
for entry in $shapes; do
    name=${entry%%:*}
    plain=${entry#*:}
    case $name in
    *.gz) gzip -t "$dir/$name" 2>"$dir/err" && gzip -dc "$dir/$name" | cmp -s - "$dir/$plain.txt" ||
        fail "gzip -t or -dc refuses $name: $(cat "$dir/err")" ;;
    *.zst) zstd -q -t "$dir/$name" 2>"$dir/err" && zstd -q -dc "$dir/$name" | cmp -s - "$dir/$plain.txt" ||
        fail "zstd -t or -dc refuses $name: $(cat "$dir/err")" ;;
    esac
done

# ---- every command reads each ----------------------------------------------------

# The filter of the plain keys, for query.
for plain in keys big; do
    run 0 build -t bloom -p 1e-4 -o "$dir/$plain-plain.amq" "$dir/$plain.txt"
done

# all_yes FILTER PLAIN WHAT: every key of PLAIN answers yes in FILTER.
all_yes() {
    n=$(wc -l <"$2" | tr -d ' ')
    got=$("$amq" query -c "$1" "$2" 2>&1)
    [ "$got" = "$n" ] || fail "$3: $got of the $n keys answer yes"
}

# from_stdin EXPECTED ARGS... <FILE: as run, keys on standard input.
from_stdin() {
    expected=$1
    shift
    last="amq $* <$(basename "$stdin")"
    "$amq" "$@" <"$stdin" >"$dir/out" 2>"$dir/err"
    code=$?
    [ "$code" -eq "$expected" ] || {
        fail "$last exited $code, expected $expected"
        sed 's/^/  stderr: /' "$dir/err" | head -n 3
        return 1
    }
}

for entry in $shapes; do
    name=${entry%%:*}
    plain=$dir/${entry#*:}.txt
    file=$dir/$name
    stdin=$file
    n=$(wc -l <"$plain" | tr -d ' ')
    # build, a dynamic and a static type, from the file and from stdin.
    for type in bloom fuse8; do
        run 0 build -t "$type" -o "$dir/$name.$type.amq" "$file" && empty err &&
            all_yes "$dir/$name.$type.amq" "$plain" "build -t $type from $name"
        from_stdin 0 build -t "$type" -o "$dir/$name.$type.stdin.amq" && empty err &&
            all_yes "$dir/$name.$type.stdin.amq" "$plain" "build -t $type from standard input $name"
    done
    # add, into an empty filter, then (a second copy of each) from stdin.
    run 0 build -t counting-bloom -n "$n" -p 1e-4 -o "$dir/$name.counting.amq" /dev/null
    run 0 add "$dir/$name.counting.amq" "$file" && empty err &&
        all_yes "$dir/$name.counting.amq" "$plain" "add $name"
    from_stdin 0 add "$dir/$name.counting.amq" && empty err
    # remove: one copy of each key goes (every key held: exit 0), one stays.
    run 0 remove "$dir/$name.counting.amq" "$file" && empty err &&
        all_yes "$dir/$name.counting.amq" "$plain" "remove of one of two copies from $name"
    from_stdin 0 remove "$dir/$name.counting.amq" && empty err
    # query prints every line, as the plain keys are.
    run 0 query "$dir/${entry#*:}-plain.amq" "$file" && empty err &&
        { cmp -s "$dir/out" "$plain" || fail "query of $name: not the keys, line for line"; }
    from_stdin 0 query -c "$dir/${entry#*:}-plain.amq" && expect out "$n"
    # dedup gives the distinct keys back.
    run 0 dedup "$file" && empty err &&
        { cmp -s "$dir/out" "$plain" || fail "dedup of $name: not the keys, line for line"; }
    from_stdin 0 dedup && { cmp -s "$dir/out" "$plain" || fail "dedup <$name: not the keys"; }
done

# ---- what is refused ---------------------------------------------------------------------

zstd -q -c --long=28 <"$dir/keys.txt" >"$dir/long-28.zst"
zstd -q -t "$dir/long-28.zst" 2>/dev/null && fail "zstd -t decodes a --long=28 frame without --long"
zstd -q -t --long=28 "$dir/long-28.zst" || fail "zstd -t --long=28 refuses long-28.zst"
# A skippable frame, then bytes that are no frame; a frame cut short after
# a skippable frame (pzstd's output, truncated); a damaged gzip member after
# a sound one; zero padding with a byte that is not zero in it.
{
    skippable 0 4
    printf 'key-1\nkey-2\n'
} >"$dir/skippable-then-text.zst"
pzstd_size=$(wc -c <"$dir/pzstd.zst" | tr -d ' ')
head -c $((pzstd_size / 2)) "$dir/pzstd.zst" >"$dir/pzstd-truncated.zst"
cp "$dir/members.gz" "$dir/members-damaged.gz"
one=$(gzip -c "$dir/part1.txt" | wc -c | tr -d ' ')
printf 'XXXXXXXXXXXXXXXX' | dd of="$dir/members-damaged.gz" bs=1 seek=$((one + 200)) conv=notrunc 2>/dev/null
{
    cat "$dir/unpadded.gz"
    zeros 100
    printf 'x'
    zeros 100
} >"$dir/padding-with-garbage.gz"
{
    cat "$dir/unpadded.gz"
    printf 'not gzip\n'
} >"$dir/trailing-text.gz"

# refused FILE TEXT: every command that reads keys exits 2 on FILE, with
# and without --binary, naming the file and saying TEXT, and builds, adds,
# prints nothing.
refused() {
    base=$(basename "$1")
    run 0 build --force -t counting-bloom -n 10000 -o "$dir/refused-counting.amq" "$dir/part1.txt"
    cp "$dir/refused-counting.amq" "$dir/refused-counting.before"
    for binary in "" --binary; do
        rm -f "$dir/refused.amq"
        # shellcheck disable=SC2086 # $binary: no word, or one
        run 2 build $binary -t bloom -o "$dir/refused.amq" "$1" && expect err "amq: build: $1: $2"
        [ -e "$dir/refused.amq" ] && fail "build saved a filter of $base"
        for command in add remove; do
            # shellcheck disable=SC2086
            run 2 $command $binary "$dir/refused-counting.amq" "$1" && expect err "$base: $2"
        done
        cmp -s "$dir/refused-counting.amq" "$dir/refused-counting.before" ||
            fail "add or remove of $base changed the filter"
        # shellcheck disable=SC2086
        run 2 query $binary -c "$dir/keys-plain.amq" "$1" && expect err "$base: $2" && empty out
        # shellcheck disable=SC2086
        run 2 dedup $binary "$1" && expect err "$base: $2"
        stdin=$1
        # shellcheck disable=SC2086
        from_stdin 2 dedup $binary && expect err "(standard input): $2"
    done
}
refused "$dir/long-28.zst" "the zstd frame at byte offset 0 needs a window over 128 MiB"
expect err "zstd --long=28 or more" && expect err "zstd -d --long=31"
refused "$dir/skippable-then-text.zst" "damaged zstd data at byte offset 12"
refused "$dir/pzstd-truncated.zst" "the zstd data ends early, at byte offset $((pzstd_size / 2))"
refused "$dir/members-damaged.gz" "damaged gzip data at byte offset"
refused "$dir/padding-with-garbage.gz" \
    "a byte that is not zero at byte offset $((size + 100)), in the zero padding after the gzip data"
refused "$dir/trailing-text.gz" "bytes at byte offset $size, after the gzip data, that are neither"
# Formats gzip -d or zstd -d read and amq does not: refused by their magic
# number, naming the command that decompresses them.
printf '\375\067\172\130\132\000rest' >"$dir/fake.xz"
refused "$dir/fake.xz" "xz data (so its first bytes say), which amq does not decompress: give it decompressed (xz -dc)"
printf '\037\235\220key' >"$dir/fake.Z"
refused "$dir/fake.Z" "compress (.Z) data"
printf 'PK\003\004rest' >"$dir/fake.zip"
refused "$dir/fake.zip" "zip data"
printf '\004\042\115\030rest' >"$dir/fake.lz4"
refused "$dir/fake.lz4" "lz4 data"

# Fewer bytes than a magic number are plain bytes: binary, so refused
# without --binary, read with it.
printf '\037' >"$dir/short.bin"
run 2 dedup "$dir/short.bin" && expect err "not read: it looks binary"
run 0 dedup --binary "$dir/short.bin" && cmp -s "$dir/out" "$dir/short.bin" ||
    fail "dedup --binary of one byte 1f: not that byte"
# Text that begins as a magic number may: "P*M" is not a skippable frame.
printf 'P*M\nkey\n' >"$dir/pstar.txt"
run 0 dedup "$dir/pstar.txt" && cmp -s "$dir/out" "$dir/pstar.txt" || fail "dedup of 'P*M': not the text"

# A filter file is read as amq saved it: a compressed one is refused by
# every command that loads a filter (merge's inputs among them), naming its
# format.
gzip -c "$dir/keys-plain.amq" >"$dir/filter.amq.gz"
zstd -q -c "$dir/keys-plain.amq" >"$dir/filter.amq.zst"
for filter in filter.amq.gz filter.amq.zst; do
    format=${filter##*.}
    [ "$format" = gz ] && format=gzip
    [ "$format" = zst ] && format=zstd
    for args in "query $dir/$filter $dir/keys.txt" "info $dir/$filter" \
        "merge -o $dir/merged.amq $dir/keys-plain.amq $dir/$filter"; do
        # shellcheck disable=SC2086 # the words of args are the arguments
        run 2 $args && expect err "$filter: $format data, not an amq file"
    done
done
[ -e "$dir/merged.amq" ] && fail "merge saved a union with a compressed filter file"

finish compressed

#!/bin/sh
# make_family_corpus.sh - remake the seed corpus of fuzz/fuzz_family_load.c.
#
# Usage: fuzz/make_family_corpus.sh AMQ [DIR]
#   AMQ  the amq command-line tool (e.g. build/amq)
#   DIR  where to write the seeds (default: fuzz/corpus/family_load)
#
# Each seed is a small filter built by `AMQ build` from keys key-1, key-2, ...
# with its container stripped (docs/FORMAT.md, "Layout"): the fuzz target's
# input is
#
#     u8 family index | u16 LE params length P | the P parameter bytes | payload
#
# where the params sit at offset 64 of the file, P is the u32 at offset 40,
# the payload length N the u64 at offset 56, and the payload starts at
# round_up(64 + P, 64). The family index is the family's position in
# amq__family_table(), which is not its file id less one (a build may lack
# families, and they are listed in the order filter.c gives them): it is
# found by the type `AMQ info` reports for the file, in the list of types
# `AMQ --help` prints in that table's order. A seed is only meaningful for
# the build whose table it was made with: remake the corpus when the table
# changes.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 AMQ [DIR]" >&2
    exit 2
fi
amq=$1
out=${2:-$(dirname "$0")/corpus/family_load}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# keys N: key-1 .. key-N, one per line
keys() {
    seq 1 "$1" | sed 's/^/key-/'
}

field() { # FILE OFFSET WIDTH(4|8): an unsigned little-endian field
    od -An -v -t "u$3" -j "$2" -N "$3" --endian=little "$1" | tr -d ' '
}

# index TYPE: the family's position in the build's table
types=$("$amq" --help | sed -n 's/^  types: //p')
index() {
    i=0
    for type in $types; do
        if [ "$type" = "$1" ]; then
            echo "$i"
            return
        fi
        i=$((i + 1))
    done
    echo "$0: $amq has no type $1" >&2
    exit 1
}

byte() { # VALUE: one raw byte
    printf "\\$(printf '%03o' "$1")"
}

# strip NAME: turn $work/filter.amq into the seed $out/NAME.bin
strip() {
    file=$work/filter.amq
    type=$("$amq" info "$file" | awk '$1 == "type" { print $2 }')
    family=$(index "$type")
    params=$(field "$file" 40 4)
    payload=$(field "$file" 56 8)
    offset=$(((64 + params + 63) / 64 * 64))
    {
        byte "$family"
        byte $((params % 256))
        byte $((params / 256))
        dd if="$file" bs=1 skip=64 count="$params" 2>/dev/null
        tail -c "+$((offset + 1))" "$file" | head -c "$payload"
    } >"$out/$1.bin"
}

# seed NAME KEYS BUILD-OPTIONS...: build from KEYS keys and strip
seed() {
    name=$1
    count=$2
    shift 2
    keys "$count" | "$amq" build --force -o "$work/filter.amq" "$@"
    strip "$name"
}

seed bloom-n100 100 -t bloom -n 100
seed bloom-m64-k1 10 -t bloom -m 64 -k 1
seed blocked-split 500 -t blocked-bloom -n 500 --layout split
seed blocked-block 500 -t blocked-bloom -n 500 --layout block
seed counting-4 100 -t counting-bloom -n 100 --counter-bits 4
seed counting-8 100 -t counting-bloom -n 100 --counter-bits 8
seed counting-4-saturated 300 -t counting-bloom -m 64 -k 4 --counter-bits 4
seed scalable-5-stages 300 -t scalable-bloom -n 10
# A scalable filter whose newest stage is full, so that the next new key
# opens a stage: the fewest keys whose count reaches the stages' capacity.
count=150
while keys "$count" | "$amq" build --force -o "$work/filter.amq" -t scalable-bloom -n 10 &&
    [ "$("$amq" info "$work/filter.amq" | awk '$1 == "capacity" { c = $2 } $1 == "keys" { k = $2 }
                                              END { print (c == k) }')" = 0 ]; do
    count=$((count + 1))
done
strip scalable-full-stage
seed scalable-growth4 300 -t scalable-bloom -n 4 --growth 4 --tightening 0.5
seed cuckoo-f12-b4 100 -t cuckoo -n 100 --fingerprint-bits 12 --bucket-size 4
seed cuckoo-f12-b8 100 -t cuckoo -n 100 --fingerprint-bits 12 --bucket-size 8
seed cuckoo-f32-b2 40 -t cuckoo -n 40 --fingerprint-bits 32 --bucket-size 2
seed cuckoo-f8-b2-tables 300 -t cuckoo -n 2 --fingerprint-bits 8 --bucket-size 2 --growth 2
seed cuckoo-f13-semi 100 -t cuckoo -n 100 --fingerprint-bits 13 --semi-sort

# A cuckoo filter as full as it gets: the most keys a fixed 20-key table
# takes, the last of them left in the stash (one more is AMQ_EFULL).
full="-t cuckoo -n 20 --fingerprint-bits 8 --bucket-size 4 --max-kicks 100"
count=20
while keys $((count + 1)) | "$amq" build --force -o "$work/filter.amq" $full 2>/dev/null; do
    count=$((count + 1))
done
seed cuckoo-full-stash "$count" $full

# Counted copies (a cuckoo block of version 2, entries after the slots):
# each of 40 keys five times, in chained tables.
keys 40 | awk '{ for (i = 0; i < 5; i++) print }' |
    "$amq" build --force -o "$work/filter.amq" -t cuckoo -n 20 --fingerprint-bits 8 \
        --bucket-size 4 --growth 2
strip cuckoo-counted-copies

seed gcs-rice 300 -t gcs
seed gcs-golomb-index 300 -t gcs --range 100 --index 7
seed gcs-md5-article 26 -t gcs --hash md5 --range 64
seed gcs-bip158 20 -t gcs --bip158-key 000102030405060708090a0b0c0d0e0f
# A gcs union: two segments in one stream.
keys 200 | "$amq" build --force -o "$work/a.amq" -t gcs --range 64 --index 3
keys 300 | sed 's/key/other/' | "$amq" build --force -o "$work/b.amq" -t gcs --range 64 --index 2
"$amq" merge --force -o "$work/filter.amq" "$work/a.amq" "$work/b.amq"
strip gcs-union

seed fuse8-n100 100 -t fuse8
seed fuse8-empty 0 -t fuse8
seed fuse16-arity4-n100 100 -t fuse16 --arity 4
seed fuse16-n1 1 -t fuse16 -p 0.01

# hfb: IDs of 32 hex digits, the MD5 digests of key-1, key-2, ...; raw IDs
# only (the fuzz target's hasher is xxh3 seed 0, which an MD5 filter
# refuses). One Golomb-coded bank; three raw banks; no IDs at all.
ids() {
    keys "$1" | while read -r key; do printf '%s' "$key" | md5sum | cut -c 1-32; done
}
seed_ids() { # NAME COUNT BUILD-OPTIONS...: as seed, with IDs for keys
    name=$1
    count=$2
    shift 2
    ids "$count" | "$amq" build --force -o "$work/filter.amq" "$@"
    strip "$name"
}
seed_ids hfb-golomb 200 -t hfb
seed_ids hfb-raw-banks 60 -t hfb -p 0.3 --bank-bits 6
seed_ids hfb-empty 0 -t hfb

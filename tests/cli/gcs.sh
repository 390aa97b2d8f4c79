#!/bin/sh
# The amq tool end to end with the Golomb-coded set: build with the gcs
# options (range, rice-bits, divisor and their "best", index, hash=md5,
# bip158-key with --hex), query (present keys, -v, -c, the FPR), info (text
# and JSON agreeing with the file), the article's example (197 bits) and a
# BIP158 vector (the saved stream is filter_hex's), merge (a union keeps
# every key; different parameters are refused by name), the options and
# operations a gcs refuses, and a damaged file.
#   gcs.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"
data=${AMQ_TEST_DATA_DIR:-$(dirname "$0")/../data}

seq 1 20000 | sed 's/^/key-/' >"$dir/keys.txt"
seq 1 20000 | sed 's/^/other-/' >"$dir/others.txt"
head -n 10000 "$dir/keys.txt" >"$dir/first.txt"
tail -n 10000 "$dir/keys.txt" >"$dir/second.txt"

# The filter's saved fields and stream, read from the file (docs/FORMAT.md,
# src/gcs/gcs_file.c): prints "stream_bits index_entries segments stream_hex".
fields() {
    /usr/bin/python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
p, = struct.unpack_from("<I", b, 40)
params = b[64:64 + p]
bits, entries = struct.unpack_from("<QQ", params, 16)
segments, = struct.unpack_from("<I", params, 48)
payload = b[(64 + p + 63) // 64 * 64:]
print(bits, entries, segments, payload[:(bits + 7) // 8].hex())
' "$1"
}

# Defaults: p = 1/1024, so M = 1024, the bucketed layout: Rice with P = 9
# (the best Rice code at M = 1024), gaps restarted every 24 M values.
run 0 build -t gcs -o "$dir/f.amq" "$dir/keys.txt" && empty_but_note err &&
    expect err "bucketed layout" && expect err "a query decodes about 13 codes"
run 0 query -c "$dir/f.amq" "$dir/keys.txt" && expect out 20000
run 0 query "$dir/f.amq" "$dir/first.txt" && lines out 10000
run 1 query -v "$dir/f.amq" "$dir/keys.txt" && empty out
# About 20000/1024 = 19.5 false positives.
"$amq" query -c "$dir/f.amq" "$dir/others.txt" >"$dir/out"
fp=$(cat "$dir/out")
if [ "$fp" -lt 3 ] || [ "$fp" -gt 45 ]; then
    fail "$fp false positives of 20000 at M = 1024"
fi
run 0 query -v "$dir/f.amq" "$dir/others.txt" && lines out $((20000 - fp))
run 0 info "$dir/f.amq" && expect out "type             gcs" && expect out "keys added       20000" &&
    expect out "range            1024" && expect out "code             rice" &&
    expect out "rice bits        9" && expect out "layout           bucketed" &&
    expect out "bucket keys      24" && expect out "segments         1"
run 0 info --json "$dir/f.amq"
/usr/bin/python3 -c '
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["layout"] == "bucketed" and d["count"] == 20000 and d["range"] == 1024, d
assert d["rice_bits"] == 9 and d["divisor"] == 512 and d["bucket_keys"] == 24, d
assert d["buckets"] == math.ceil(d["universe"] / (24 * 1024)), d
assert d["size_bytes"] == math.ceil(d["stream_bits"] / 8) + d["index_bytes"], d
# The restarted gaps cost little: under 0.15 bits/key over the continuous
# stream, and the index under half a bit.
assert d["stream_bits"] / 20000 < 11.58 + 0.15 and d["index_bytes"] * 8 / 20000 < 0.5, d
assert d["query_codes"] == 13 and d["alt_layout_codes"] == 65, d
assert d["target_fpr"] == 1 / 1024 and 0.9 / 1024 < d["expected_fpr"] <= 1 / 1024, d
' "$dir/out" || fail "info --json of a default gcs"

# The continuous layout: Rice with P = 10, S = N / 128.
run 0 build -t gcs --stream continuous -o "$dir/c.amq" "$dir/keys.txt" && empty_but_note err &&
    expect err "continuous layout"
run 0 query -c "$dir/c.amq" "$dir/keys.txt" && expect out 20000
run 0 info "$dir/c.amq" && expect out "rice bits        10" && expect out "index entries    156"
run 0 info --json "$dir/c.amq"
set -- $(fields "$dir/c.amq")
/usr/bin/python3 -c '
import json, math, sys
d = json.load(open(sys.argv[1]))
bits, entries = int(sys.argv[2]), int(sys.argv[3])
assert d["family"] == "gcs" and d["count"] == 20000 and d["capacity"] == 20000, d
assert d["range"] == 1024 and d["universe"] == 20000 * 1024 and d["divisor"] == 1024, d
assert d["stream_bits"] == bits and d["index_entries"] == entries == 156, (d, bits, entries)
assert d["size_bytes"] == math.ceil(bits / 8) + d["index_bytes"], d
assert abs(d["bits_per_key"] - d["size_bytes"] * 8 / 20000) < 1e-9, d
# Rice P = 10 at M = 1024 takes log2 M + 1.58 bits per key, and the index little.
assert abs(bits / 20000 - 11.58) < 0.1 and d["index_bytes"] * 8 / 20000 < 0.3, d
assert d["target_fpr"] == 1 / 1024 and 0.9 / 1024 < d["expected_fpr"] <= 1 / 1024, d
' "$dir/out" "$1" "$2" || fail "info --json of a continuous gcs"

# Codes and index sizes.
run 0 build -t gcs --stream continuous --range 1000 -o "$dir/golomb.amq" "$dir/keys.txt"
run 0 info "$dir/golomb.amq" && expect out "code             golomb" &&
    expect out "divisor          1000"
run 0 build -t gcs --range 1024 --divisor best -o "$dir/best.amq" "$dir/keys.txt"
run 0 info "$dir/best.amq" && expect out "divisor          710"
run 0 build -t gcs --range 256 --rice-bits best --index 0 -o "$dir/rice.amq" "$dir/keys.txt"
run 0 info "$dir/rice.amq" && expect out "rice bits        7" && expect out "index entries    0"
run 0 build -t gcs -p 0.01 --divisor 100 --index 2000 -o "$dir/dense.amq" "$dir/keys.txt"
run 0 info "$dir/dense.amq" && expect out "range            128" && expect out "divisor          100" &&
    expect out "index entries    2000"
for f in golomb best dense; do
    run 0 query -c "$dir/$f.amq" "$dir/keys.txt" && expect out 20000
done
# Without an index each query decodes half the stream: fewer of them.
head -n 500 "$dir/keys.txt" >"$dir/some.txt"
run 0 query -c "$dir/rice.amq" "$dir/some.txt" && expect out 500

# The article's worked example: 26 words, MD5, M = 64: 197 bits.
/usr/bin/python3 -c '
import json, sys
for w in json.load(open(sys.argv[1]))["words"]:
    print(w)
' "$data/gcs/gcs-seed-example.json" >"$dir/words.txt"
run 0 build -t gcs --hash md5 --range 64 -o "$dir/words.amq" "$dir/words.txt"
run 0 info "$dir/words.amq" && expect out "stream bits      197" && expect out "rice bits        6"
set -- $(fields "$dir/words.amq")
[ "$4" = cba920f780663a061f2065198ab1032d624c50331e66ae9818 ] ||
    fail "the article's stream is $4"
run 0 query -c "$dir/words.amq" "$dir/words.txt" && expect out 26

# BIP158: the vector of block 49291 (10 elements). Built from its elements
# with its key, the file's stream is the vector's filter after its count.
/usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    if v["height"] == 49291:
        open(sys.argv[2], "w").write("".join(e + "\n" for e in v["elements_hex"]))
        print(v["siphash_key_hex"], v["filter_hex"][2:])
' "$data/gcs/bip158-elements.jsonl" "$dir/elements.txt" >"$dir/vector"
read -r key stream <"$dir/vector"
run 0 build -t gcs --bip158-key "$key" --hex -o "$dir/block.amq" "$dir/elements.txt"
set -- $(fields "$dir/block.amq")
[ "$4" = "$stream" ] || fail "BIP158 stream $4, expected $stream"
run 0 info "$dir/block.amq" && expect out "keys added       10" &&
    expect out "range            784931" && expect out "rice bits        19" &&
    expect out "hash             siphash"
run 0 query -c --hex "$dir/block.amq" "$dir/elements.txt" && expect out 10
run 2 build -t gcs --bip158-key "$key" --range 1024 -o "$dir/x.amq" "$dir/elements.txt" &&
    expect err "contradicts bip158-key"

# merge: the union of two halves holds every key, in two segments.
run 0 build -t gcs -o "$dir/a.amq" "$dir/first.txt"
run 0 build -t gcs -o "$dir/b.amq" "$dir/second.txt"
run 0 merge -o "$dir/u.amq" "$dir/a.amq" "$dir/b.amq" && empty err
run 0 query -c "$dir/u.amq" "$dir/keys.txt" && expect out 20000
run 0 info "$dir/u.amq" && expect out "keys added       20000" && expect out "segments         2"
"$amq" query -c "$dir/u.amq" "$dir/others.txt" >"$dir/out"
fp=$(cat "$dir/out")
[ "$fp" -le 60 ] || fail "$fp false positives of 20000 in a union at M = 1024"
run 2 merge -o "$dir/x.amq" "$dir/a.amq" "$dir/golomb.amq" && expect err "range M"
run 2 merge -o "$dir/x.amq" "$dir/a.amq" "$dir/block.amq" && expect err "range M"
run 0 build -t gcs --seed 5 -o "$dir/seeded.amq" "$dir/second.txt"
run 2 merge -o "$dir/x.amq" "$dir/a.amq" "$dir/seeded.amq" && expect err "hash"
run 2 merge -o "$dir/x.amq" "$dir/a.amq" "$dir/f.amq" "$dir/best.amq" && expect err "divisor"

# What a gcs refuses.
run 2 add "$dir/f.amq" "$dir/others.txt" && expect err "cannot add"
run 2 remove "$dir/f.amq" "$dir/keys.txt" && expect err "cannot remove"
run 2 build -t gcs --fingerprint-bits 12 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--fingerprint-bits' for gcs"
run 2 build -t gcs --layout split -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--layout' for gcs"
run 2 build -t gcs --rice-bits 3 --divisor 5 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "exclude each other"
run 2 build -t gcs --divisor bestx -o "$dir/x.amq" "$dir/keys.txt" && expect err "divisor"
run 2 build -t gcs --rice-bits 64 -o "$dir/x.amq" "$dir/keys.txt" && expect err "rice-bits"
run 2 build -t gcs --range 1 -o "$dir/x.amq" "$dir/keys.txt" && expect err "range"
run 2 build -t gcs --bip158-key 00 -o "$dir/x.amq" "$dir/keys.txt" && expect err "bip158-key"
run 2 build -t bloom --range 64 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--range' for bloom"
[ -e "$dir/x.amq" ] && fail "a refused build wrote a file"

# A damaged file is refused.
size=$(wc -c <"$dir/f.amq")
cp "$dir/f.amq" "$dir/damaged.amq"
printf 'X' | dd of="$dir/damaged.amq" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run 2 query "$dir/damaged.amq" "$dir/keys.txt" && expect err "corrupt"
run 2 info "$dir/damaged.amq" && expect err "corrupt"

finish "cli gcs"

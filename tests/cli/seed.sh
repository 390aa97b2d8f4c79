#!/bin/sh
# Secret seeds: --seed random (and --hash siphash --key random) on every
# type that takes a seed draws a new one from the operating system each
# build, stored in the file; the filter answers for its keys from the file;
# `amq info` says the seed is secret and prints it only with --show-seed
# (every seed but the default 0, since a file does not record where its
# seed came from); the seed --show-seed prints is the one to give another
# filter that must merge with it. docs/SECURITY.md says why.
#   seed.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

seq 1 3000 | sed 's/^/key-/' >"$dir/keys.txt"
seq 1 3000 | sed 's/^/other-/' >"$dir/others.txt"

# The seed amq info --show-seed --json gives FILE, or "" for none.
seed_of() {
    "$amq" info --show-seed --json "$1" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d.get("hash_seed", d.get("hash_key", "")))'
}

# info --json of the last command: hash_secret is SECRET, and hash_seed
# and hash_key are there only when SHOWN.
check_json() { # SECRET SHOWN
    /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
secret, shown = sys.argv[2] == "true", sys.argv[3] == "true"
assert d["hash_secret"] is secret, d
assert (("hash_seed" in d) or ("hash_key" in d)) == shown, d
assert shown or not secret or d["hash"].endswith("=secret"), d
assert secret or "=secret" not in d["hash"], d
' "$dir/out" "$1" "$2" || fail "$last: json"
}

for type in bloom blocked-bloom counting-bloom scalable-bloom cuckoo gcs fuse8 fuse16; do
    a=$dir/$type-a.amq b=$dir/$type-b.amq
    run 0 build -t "$type" --seed random -o "$a" "$dir/keys.txt" || continue
    run 0 build -t "$type" --seed random -o "$b" "$dir/keys.txt"
    # The file answers for every key, and for the others as a filter does.
    run 0 query -c "$a" "$dir/keys.txt" && expect out 3000
    maybe=$("$amq" query -c "$a" "$dir/others.txt")
    [ "$maybe" -lt 300 ] || fail "$type: $maybe of 3000 others maybe present"
    # Secret unless asked for.
    run 0 info "$a" && expect out "hash             xxh3 with a secret seed (--show-seed prints it)"
    grep -q "seed=" "$dir/out" && fail "$type: info prints a seed: $(grep seed= "$dir/out")"
    run 0 info --json "$a" && check_json true false
    seed=$(seed_of "$a")
    [ -n "$seed" ] && [ "$seed" != 0 ] || fail "$type: no seed in info --show-seed: '$seed'"
    run 0 info --show-seed "$a" && expect out "hash             xxh3 seed=$seed"
    run 0 info --show-seed --json "$a" && check_json true true
    # Each build draws its own.
    [ "$seed" != "$(seed_of "$b")" ] || fail "$type: two builds got the same seed $seed"
    # The seed is all the file's randomness: given back, it rebuilds the
    # same file, byte for byte.
    run 0 build -t "$type" --seed "$seed" -o "$dir/$type-same.amq" "$dir/keys.txt"
    cmp -s "$a" "$dir/$type-same.amq" || fail "$type: --seed $seed did not rebuild the file"
done

# Two random seeds do not merge; the seed --show-seed prints does.
run 2 merge -o "$dir/x.amq" "$dir/bloom-a.amq" "$dir/bloom-b.amq" && expect err "hash"
run 0 build -t bloom -n 6000 --seed random -o "$dir/bloom-d.amq" "$dir/keys.txt"
seed=$(seed_of "$dir/bloom-d.amq")
run 0 build -t bloom -n 6000 --seed "$seed" -o "$dir/bloom-c.amq" "$dir/others.txt"
run 0 merge -o "$dir/union.amq" "$dir/bloom-d.amq" "$dir/bloom-c.amq" && empty err
run 0 query -c "$dir/union.amq" "$dir/keys.txt" && expect out 3000
run 0 query -c "$dir/union.amq" "$dir/others.txt" && expect out 3000
run 0 info "$dir/union.amq" && expect out "xxh3 with a secret seed"

# A SipHash key at random: secret too, 32 hex digits when shown.
run 0 build -t cuckoo --hash siphash --key random -o "$dir/sip.amq" "$dir/keys.txt"
run 0 query -c "$dir/sip.amq" "$dir/keys.txt" && expect out 3000
run 0 info "$dir/sip.amq" && expect out "hash             siphash with a secret key (--show-seed prints it)"
run 0 info --json "$dir/sip.amq" && check_json true false
key=$(seed_of "$dir/sip.amq")
[ "${#key}" = 32 ] || fail "siphash key '$key' is not 32 hex digits"
run 0 info --show-seed "$dir/sip.amq" && expect out "hash             siphash key=$key"

# The default seed is no secret: shown as it always was. Any other is
# hidden, chosen or not, since the file cannot tell.
run 0 build -t bloom -o "$dir/default.amq" "$dir/keys.txt"
run 0 info "$dir/default.amq" && expect out "hash             xxh3 seed=0"
run 0 info --json "$dir/default.amq" && check_json false true
run 0 build -t bloom --seed 42 -o "$dir/42.amq" "$dir/keys.txt"
run 0 info "$dir/42.amq" && expect out "xxh3 with a secret seed"
run 0 info --show-seed "$dir/42.amq" && expect out "hash             xxh3 seed=42"
run 0 build -t gcs --hash md5 -o "$dir/md5.amq" "$dir/keys.txt"
run 0 info "$dir/md5.amq" && expect out "hash             md5"
run 0 info --json "$dir/md5.amq" && check_json false false

# Refusals: by name, with what to do.
run 2 build -t bloom --seed Random -o "$dir/x.amq" "$dir/keys.txt" && expect err "seed"
run 2 build -t bloom --hash siphash --seed random -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "key=random"
run 2 build -t bloom --hash md5 --seed random -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "takes no seed"
/usr/bin/python3 -c '
import hashlib
for i in range(100):
    print(hashlib.md5(b"id-%d" % i).hexdigest())' >"$dir/ids.txt"
run 2 build -t hfb --seed random -o "$dir/x.amq" "$dir/ids.txt" && expect err "hfb takes no seed"
[ -e "$dir/x.amq" ] && fail "a refused build wrote its file"
run 0 info --help && expect out "--show-seed"
run 0 build --help && expect out "random"

finish seed

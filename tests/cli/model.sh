#!/bin/sh
# The filters that remove keys (cuckoo, counting-bloom) through the amq tool
# against an exact multiset: random batches of `amq add` and `amq remove`
# (each line one copy; a key may come several times in one batch, and a
# remove takes only copies the model holds), and after each the keys the
# model holds all answer maybe (query -v prints nothing, query -c counts
# them all), a cuckoo filter's count (info --json) is the model's number of
# copies, and the keys whose copies were all removed mostly answer no.
# Then --add-once on a copy of each filter (the copy marked, nothing lost,
# a second add that changes nothing leaves it byte for byte, remove refused
# and the file untouched, the original unmarked), and last every copy
# removed: a cuckoo filter is then empty and answers no for every key.
# One plan of batches per filter shape, from a seed that is printed
# (AMQ_TEST_SEED=N reproduces a run).
#   model.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

seed=${AMQ_TEST_SEED:-20261207}
echo "model.sh: seed $seed (AMQ_TEST_SEED=$seed sh $0 ... reproduces this run)"
rounds=${AMQ_TEST_MODEL_ROUNDS:-24}

# The shapes: a name, then the build options. The first cuckoo one is
# built without -n from its first batch (read first, sized for the copies
# its slots store) and grows; the others stream their first batch in.
shapes='cuckoo-default|-t cuckoo
cuckoo-b2-f8|-t cuckoo -n 300 --bucket-size 2 --fingerprint-bits 8
cuckoo-fixed|-t cuckoo -n 20000 --growth 0
cuckoo-semi|-t cuckoo -n 500 --semi-sort --fingerprint-bits 13
counting-4|-t counting-bloom -n 6000 --counter-bits 4
counting-8|-t counting-bloom -n 6000 --counter-bits 8'

# plan DIR SEED ROUNDS: write the batches of one shape into DIR, with
# DIR/rounds: for each round "ROUND COPIES DISTINCT GONE" after its remove
# (COPIES: the copies the model holds, DISTINCT: its keys, GONE: keys
# added once and now without copies), and COPIES-after-add in DIR/N.total.
plan() {
    /usr/bin/python3 - "$1" "$2" "$3" <<'EOF'
import os, random, sys
out, seed, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
# Keys: plain ones, a few that are not plain (empty, spaces, a tab,
# UTF-8, long), and one hot key that gets many copies (past a 4-bit
# counter and past b / 2 slots).
universe = ["key-%d-%d" % (i, rng.randrange(10**6)) for i in range(1800)]
universe += ["", " spaced key ", "tab\there", "\u00fcn\u00efcode-\u00e9t\u00e9", "x" * 300]
hot = "hot-key"
model = {}
ever = set()

def write(name, keys):
    with open(os.path.join(out, name), "w", encoding="utf-8", newline="\n") as f:
        for k in keys:
            f.write(k + "\n")

def held():
    return sorted(k for k, c in model.items() if c > 0)

summary = []
for r in range(rounds):
    # add: new keys, copies of keys held, copies within the batch, the hot key
    batch = []
    for _ in range(rng.randrange(60, 220)):
        u = rng.random()
        if u < 0.45 or not model:
            batch.append(rng.choice(universe))
        elif u < 0.85:
            batch.append(rng.choice(list(model)))
        else:
            batch.extend([batch[-1]] * rng.randrange(1, 4) if batch else [])
    if rng.random() < 0.6:
        batch += [hot] * rng.randrange(2, 12)
    rng.shuffle(batch)
    for k in batch:
        model[k] = model.get(k, 0) + 1
        ever.add(k)
    write("%d.add" % r, batch)
    after_add = sum(model.values())
    write("%d.held-after-add" % r, held())
    # remove: copies the model holds, each at most as often as held
    copies = [k for k, c in model.items() for _ in range(c)]
    take = rng.randrange(0, min(len(copies), 200) + 1)
    if r == rounds - 1:
        take = min(len(copies), 40)
    removed = rng.sample(copies, take)
    # the hot key now and then loses every copy at once
    if r % 7 == 6 and model.get(hot, 0) > 0:
        removed = [k for k in removed if k != hot] + [hot] * model[hot]
    rng.shuffle(removed)
    for k in removed:
        model[k] -= 1
        assert model[k] >= 0
    write("%d.remove" % r, removed)
    keys = held()
    write("%d.held" % r, keys)
    gone = sorted(k for k in ever if model.get(k, 0) == 0)
    write("%d.gone" % r, gone)
    summary.append("%d %d %d %d %d" % (r, after_add, sum(model.values()), len(keys), len(gone)))
with open(os.path.join(out, "rounds"), "w") as f:
    f.write("\n".join(summary) + "\n")
# The last phase: a batch for --add-once (keys held, new ones, copies),
# every copy the model still holds (shuffled), and every key ever used.
once = [rng.choice(universe + [hot]) for _ in range(150)] + rng.sample(held(), min(50, len(held())))
once += once[:20]
rng.shuffle(once)
write("once.add", once)
rest = [k for k, c in model.items() for _ in range(c)]
rng.shuffle(rest)
write("rest.remove", rest)
write("ever", sorted(ever | set(once)))
EOF
}

# json_field NAME: the number or word NAME has in $dir/out (info --json).
json_field() {
    sed -n "s/^  \"$1\": \\([^,]*\\),\$/\\1/p" "$dir/out"
}

# header FILE: the container's version and flags (docs/FORMAT.md).
header() {
    echo "$(od -An -tu4 -j8 -N4 "$1" | tr -d ' ') $(od -An -tu4 -j20 -N4 "$1" | tr -d ' ')"
}

# check_held -c|-v FILE KEYS N: every one of the N keys the model holds
# answers maybe: query -c counts all N, query -v prints none of them.
check_held() {
    [ "$4" -gt 0 ] || return
    if [ "$1" = -v ]; then
        run 1 query -v "$2" "$3" && empty out
    else
        run 0 query -c "$2" "$3" && [ "$(cat "$dir/out")" = "$4" ] ||
            fail "query -c $3: $(cat "$dir/out") of the $4 keys held answer maybe"
    fi
}

# check_count FILE COPIES: a cuckoo filter counts every copy.
check_count() {
    run 0 info --json "$1" || return
    got=$(json_field count)
    [ "$got" = "$2" ] || fail "$1: info count $got, the model holds $2 copies"
    [ "$(json_field add_once)" = false ] || fail "$1: marked add-once"
}

shape_index=0
printf '%s\n' "$shapes" >"$dir/shapes"
while IFS='|' read -r name options; do
    shape_index=$((shape_index + 1))
    start=$(date +%s)
    plan="$dir/$name"
    mkdir -p "$plan"
    plan "$plan" $((seed + shape_index)) "$rounds" || { fail "$name: planning"; continue; }
    f="$dir/$name.amq"
    case $name in
    cuckoo*) cuckoo=1 ;;
    *) cuckoo=0 ;;
    esac
    failures_before=$failures
    while read -r round after_add copies distinct gone; do
        # shellcheck disable=SC2086 # the options are words
        if [ "$round" -eq 0 ]; then
            run 0 build $options -o "$f" "$plan/0.add" && empty err
        else
            run 0 add "$f" "$plan/$round.add" && empty err
        fi
        held_after_add=$(wc -l <"$plan/$round.held-after-add" | tr -d ' ')
        check_held -c "$f" "$plan/$round.held-after-add" "$held_after_add"
        [ "$cuckoo" -eq 0 ] || check_count "$f" "$after_add"
        if [ -s "$plan/$round.remove" ]; then
            run 0 remove "$f" "$plan/$round.remove" && empty err
        fi
        check_held -v "$f" "$plan/$round.held" "$distinct"
        if [ "$cuckoo" -eq 1 ]; then
            check_count "$f" "$copies"
            case $options in
            *"--growth 0"*)
                [ "$(json_field tables)" = 1 ] || fail "$f: a --growth 0 filter has $(json_field tables) tables"
                ;;
            esac
        fi
        # Keys without copies answer no but for false positives (up to
        # about 3% here, with 8-bit fingerprints in three tables; a
        # twentieth and 5 more allows for chance).
        if [ "$gone" -gt 0 ]; then
            "$amq" query -c "$f" "$plan/$round.gone" >"$dir/out" 2>"$dir/err"
            maybe=$(cat "$dir/out")
            [ "$maybe" -le $((gone / 20 + 5)) ] ||
                fail "$name round $round: $maybe of $gone keys removed to the last copy answer maybe"
        fi
        # A run stops at its first failing round: the rest would repeat it.
        [ "$failures" -eq "$failures_before" ] || {
            echo "  ($name failed in round $round; AMQ_TEST_SEED=$seed)"
            break
        }
    done <"$plan/rounds"
    [ "$failures" -eq "$failures_before" ] || continue

    # --add-once on a copy: marked (version 2, flag 1; the original keeps
    # version 1, no flag), every key of the batch answers maybe, a cuckoo
    # filter's count grows by the distinct keys that did not answer maybe
    # before (less any that a key of the batch before them made a false
    # positive), and a second add changes nothing, byte for byte.
    once="$dir/$name-once.amq"
    cp "$f" "$once"
    "$amq" query -v "$once" "$plan/once.add" | LC_ALL=C sort -u >"$dir/new-keys"
    new=$(wc -l <"$dir/new-keys" | tr -d ' ')
    run 0 info --json "$once" && before=$(json_field count)
    run 0 add --add-once "$once" "$plan/once.add" && empty err
    [ "$(header "$once")" = "2 1" ] || fail "$once: header version and flags $(header "$once"), not 2 1"
    [ "$(header "$f")" = "1 0" ] || fail "$f: header version and flags $(header "$f"), not 1 0"
    run 1 query -v "$once" "$plan/once.add" && empty out
    check_held -v "$once" "$plan/$((rounds - 1)).held" "$(wc -l <"$plan/$((rounds - 1)).held" | tr -d ' ')"
    run 0 info --json "$once" && after=$(json_field count)
    [ "$(json_field add_once)" = true ] || fail "$once: add --add-once did not mark it"
    if [ "$cuckoo" -eq 1 ]; then
        grew=$((after - before))
        [ "$grew" -le "$new" ] && [ "$grew" -ge $((new - 3)) ] ||
            fail "$once: add --add-once of $new new distinct keys grew the count by $grew"
    fi
    run 0 info "$once" && expect out "adds             once (--add-once): amq remove refuses this file"
    cp "$once" "$dir/once-before.amq"
    run 0 add "$once" "$plan/once.add" && empty err
    run 0 add "$once" "$plan/$((rounds - 1)).held" && empty err
    cmp -s "$once" "$dir/once-before.amq" || fail "$once: an add of keys it answers maybe for changed it"
    inode=$(ls -i "$once" | cut -d' ' -f1)
    run 2 remove "$once" "$plan/once.add" && expect err "--add-once"
    cmp -s "$once" "$dir/once-before.amq" || fail "$once: a refused remove changed it"
    [ "$(ls -i "$once" | cut -d' ' -f1)" = "$inode" ] || fail "$once: a refused remove rewrote it"
    run 0 info "$f" && expect out "adds             every copy"

    # Every copy left removed: a cuckoo filter is empty (no copies counted
    # beside the table either) and answers no for every key ever used; a
    # counting filter too, unless counters saturated (they stay set).
    if [ -s "$plan/rest.remove" ]; then
        run 0 remove "$f" "$plan/rest.remove" && empty err
    fi
    ever=$(wc -l <"$plan/ever" | tr -d ' ')
    run 0 info --json "$f"
    if [ "$cuckoo" -eq 1 ]; then
        [ "$(json_field count)" = 0 ] && [ "$(json_field counted_copies)" = 0 ] &&
            [ "$(json_field load)" = 0 ] ||
            fail "$f: not empty after every copy was removed: count $(json_field count), counted_copies $(json_field counted_copies), load $(json_field load)"
        run 1 query -c "$f" "$plan/ever" && expect out 0
    else
        saturated=$(json_field saturated)
        "$amq" query -c "$f" "$plan/ever" >"$dir/out" 2>"$dir/err"
        maybe=$(cat "$dir/out")
        if [ "$saturated" = 0 ]; then
            [ "$maybe" = 0 ] || fail "$f: $maybe of $ever keys answer maybe after every copy was removed"
        else
            [ "$maybe" -le $((ever / 20 + 5)) ] ||
                fail "$f: $maybe of $ever keys answer maybe after every copy was removed ($saturated counters saturated)"
        fi
    fi
    echo "  $name: $rounds rounds, $(cat "$plan"/*.add "$plan"/*.remove | wc -l | tr -d ' ') keys added or removed, $(($(date +%s) - start)) s"
done <"$dir/shapes"

finish "cli model (seed $seed)"

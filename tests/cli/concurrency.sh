#!/bin/sh
# Writers at once and writers cut short: concurrent adds onto one file keep
# every writer's keys (the lock beside the file), a writer that cannot get
# the lock in time gives up with exit 2 and changes nothing, a save killed
# at any moment leaves the file loadable and no temporary file once the
# next save has run, and a save that runs out of space, or cannot write at
# all, leaves the file as it was with a message naming it.
#   concurrency.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

# temporaries DIR: how many save temporary files DIR holds.
temporaries() {
    ls -a "$1" | grep -c '\.tmp\.'
}

# holds FILE KEYS: every key of KEYS answers as present.
holds() {
    n=$(wc -l <"$2" | tr -d ' ')
    got=$("$amq" query -c "$1" "$2" 2>/dev/null)
    [ "$got" = "$n" ] || fail "$1 holds $got of the $n keys of $(basename "$2")"
}

# ---- concurrent writers -------------------------------------------------------

# Keys of writer i: 3000 of its own ("w<i>-<j>"), none shared.
keys_per_writer=3000
for i in 1 2 3 4 5 6 7 8; do
    seq 1 $keys_per_writer | sed "s/^/w$i-/" >"$dir/keys$i.txt"
done

# writers TYPE N: N `amq add` at once onto one new TYPE filter, each with its
# own keys; each exits 0 (or 2, having said it gave up on the lock) and the
# filter holds the keys of every writer that exited 0.
writers() {
    file=$dir/$1-$2.amq
    run 0 build -t "$1" -n 40000 -o "$file" || return
    pids=
    for i in $(seq 1 "$2"); do
        "$amq" add "$file" "$dir/keys$i.txt" >"$dir/w$i.out" 2>"$dir/w$i.err" &
        pids="$pids $!"
    done
    i=0
    for pid in $pids; do
        i=$((i + 1))
        wait "$pid"
        code=$?
        if [ "$code" -eq 2 ] && grep -q "gave up after" "$dir/w$i.err"; then
            echo "$1, $2 writers: writer $i timed out waiting for the lock (allowed)"
            continue
        fi
        [ "$code" -eq 0 ] || {
            fail "$1, $2 writers: writer $i exited $code"
            sed 's/^/  stderr: /' "$dir/w$i.err" | head -n 5
            continue
        }
        waits=$(grep -c "waiting for the lock on $file" "$dir/w$i.err")
        [ "$waits" -le 1 ] || fail "$1, $2 writers: writer $i said it was waiting $waits times"
        holds "$file" "$dir/keys$i.txt"
    done
    [ "$(temporaries "$dir")" -eq 0 ] || fail "$1, $2 writers left a temporary file"
    run 0 info "$file"
}

for type in bloom cuckoo; do
    for n in 2 4 8; do
        writers "$type" "$n"
    done
done

# The lock file: beside the filter, hidden, empty, and no filter.
lock=$dir/.bloom-2.amq.lock
[ -f "$lock" ] && [ ! -s "$lock" ] || fail "no empty lock file $lock beside the filter"
run 2 info "$lock" && expect err "$lock"
# A file that is not there fails to load and leaves no lock file.
run 2 add "$dir/missing.amq" "$dir/keys1.txt"
[ -e "$dir/.missing.amq.lock" ] && fail "amq add of a missing file left a lock file"

# ---- a writer that cannot get the lock ------------------------------------------

if command -v flock >/dev/null 2>&1; then
    file=$dir/bloom-2.amq
    cp "$file" "$dir/before.amq"
    # Held until $dir/release appears; on from when flock -n cannot take it.
    flock "$lock" sh -c 'while [ ! -e "$0" ]; do sleep 0.05; done' "$dir/release" &
    holder=$!
    tries=0
    while flock -n "$lock" true && [ $tries -lt 200 ]; do
        sleep 0.05
        tries=$((tries + 1))
    done
    AMQ_LOCK_TIMEOUT=0.5 "$amq" add "$file" "$dir/keys8.txt" >"$dir/out" 2>"$dir/err"
    code=$?
    last="AMQ_LOCK_TIMEOUT=0.5 amq add (lock held)"
    [ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
    expect err "waiting for the lock on $file"
    expect err "$file is locked by another process changing it"
    expect err "gave up after 0.5 s, nothing changed"
    cmp -s "$file" "$dir/before.amq" || fail "$last changed the file"
    AMQ_LOCK_TIMEOUT=0.3 "$amq" merge --force -o "$file" "$file" "$dir/before.amq" \
        >"$dir/out" 2>"$dir/err"
    code=$?
    last="AMQ_LOCK_TIMEOUT=0.3 amq merge -o (lock held)"
    [ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
    expect err "is locked by another process"
    AMQ_LOCK_TIMEOUT=0.3 "$amq" build --force -t bloom -o "$file" "$dir/keys8.txt" \
        >"$dir/out" 2>"$dir/err"
    code=$?
    last="AMQ_LOCK_TIMEOUT=0.3 amq build --force (lock held)"
    [ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
    expect err "is locked by another process"
    cmp -s "$file" "$dir/before.amq" || fail "$last changed the file"
    # A writer that waits long enough gets the lock once it is released.
    : >"$dir/err"
    "$amq" add "$file" "$dir/keys8.txt" >"$dir/out" 2>"$dir/err" &
    waiter=$!
    tries=0
    while ! grep -q "waiting for the lock" "$dir/err" && [ $tries -lt 200 ]; do
        sleep 0.05
        tries=$((tries + 1))
    done
    touch "$dir/release"
    wait "$waiter"
    code=$?
    wait "$holder"
    last="amq add (lock held, then released)"
    [ "$code" -eq 0 ] || fail "$last exited $code, expected 0"
    expect err "waiting for the lock on $file"
    lines err 1
    holds "$file" "$dir/keys8.txt"
    AMQ_LOCK_TIMEOUT=soon "$amq" add "$file" "$dir/keys8.txt" >"$dir/out" 2>"$dir/err"
    [ $? -eq 2 ] || fail "AMQ_LOCK_TIMEOUT=soon was taken"
    last="AMQ_LOCK_TIMEOUT=soon"
    expect err "AMQ_LOCK_TIMEOUT='soon' is not a number of seconds"
else
    echo "no flock(1): skipping the held-lock cases"
fi

# ---- kill -9 at random moments ------------------------------------------------

# kills FILE ROUNDS [RUN...]: kill `amq add FILE` (run through RUN...) after a
# random delay, ROUNDS times; after each the filter loads; after each next
# successful save no temporary file is left. Prints how many kills left one.
kills() {
    file=$1 rounds=$2
    shift 2
    kdir=$(dirname "$file")
    left=0
    seq 1 200 | sed 's/^/k-/' >"$dir/few.txt"
    for round in $(seq 1 "$rounds"); do
        "$@" "$amq" add "$file" "$dir/few.txt" >/dev/null 2>&1 &
        pid=$!
        # 0 to 400 ms: from before the load to after the save (about 0.3 s)
        sleep "0.$(awk -v s="$round" 'BEGIN { srand(s); printf "%03d", rand() * 400 }')"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        [ "$(temporaries "$kdir")" -eq 0 ] || left=$((left + 1))
        "$amq" info "$file" >/dev/null 2>"$dir/err" || {
            fail "round $round: $file does not load after kill -9"
            sed 's/^/  stderr: /' "$dir/err" | head -n 3
        }
        echo "k-$round" | "$@" "$amq" add "$file" >/dev/null 2>"$dir/err" || {
            fail "round $round: the save after kill -9 failed"
            sed 's/^/  stderr: /' "$dir/err" | head -n 3
        }
        n=$(temporaries "$kdir")
        [ "$n" -eq 0 ] || fail "round $round: $n temporary file(s) left after the next save"
    done
    echo "kill -9 of amq add on $(basename "$file"): $left of $rounds kills left a temporary" \
        "file until the next save"
}

mkdir "$dir/kill"
run 0 build -t bloom -n 10000000 -p 0.01 -o "$dir/kill/big.amq" </dev/null
kills "$dir/kill/big.amq" 32

# Without /proc a save cannot name an unnamed (O_TMPFILE) file: it writes a
# named one, whose name carries its pid, from the start. In a mount
# namespace with /proc hidden, where one can be made (root), kills leave
# such files and the next save removes them.
# The wrapper execs amq, so that kill -9 reaches amq itself. A sanitizer
# build does not run without /proc: it is skipped there.
cat >"$dir/noproc" <<'EOF'
#!/bin/sh
exec unshare --mount sh -c 'mount -t tmpfs none /proc && exec "$@"' sh "$@"
EOF
chmod +x "$dir/noproc"
if ! unshare --mount sh -c 'mount -t tmpfs none /proc' 2>/dev/null; then
    echo "cannot hide /proc in a mount namespace (not root?): skipping named temporaries"
elif ! "$dir/noproc" "$amq" --version >/dev/null 2>&1; then
    echo "this amq does not run without /proc (a sanitizer build): skipping named temporaries"
else
    mkdir "$dir/kill-named"
    cp "$dir/kill/big.amq" "$dir/kill-named/big.amq"
    kills "$dir/kill-named/big.amq" 16 "$dir/noproc"
fi

# ---- no room, no device, no permission -----------------------------------------------

# A 1 MiB tmpfs holding a filter of 600 KB: the new copy does not fit.
full=$dir/full
mkdir "$full"
if mount -t tmpfs -o size=1m tmpfs "$full" 2>"$dir/mount.err"; then
    trap 'umount "$dir/full" 2>/dev/null; umount "$dir/ro" 2>/dev/null' EXIT
    run 0 build -t bloom -n 500000 -p 0.01 -o "$dir/600k.amq" "$dir/keys1.txt"
    cp "$dir/600k.amq" "$full/f.amq"
    run 2 add "$full/f.amq" "$dir/keys2.txt" && expect err "$full/f.amq" &&
        expect err "No space left on device"
    cmp -s "$full/f.amq" "$dir/600k.amq" || fail "a save out of space changed the file"
    holds "$full/f.amq" "$dir/keys1.txt"
    [ "$(temporaries "$full")" -eq 0 ] || fail "a save out of space left a temporary file"
    run 2 merge -o "$full/m.amq" "$dir/600k.amq" "$dir/600k.amq" &&
        expect err "$full/m.amq" && expect err "No space left on device"
    [ -e "$full/m.amq" ] && fail "a merge out of space left its output"
    [ "$(temporaries "$full")" -eq 0 ] || fail "a merge out of space left a temporary file"
else
    echo "cannot mount a tmpfs ($(cat "$dir/mount.err")): skipping the full-disk cases"
fi

# A device that is always full.
if [ -c /dev/full ]; then
    run 2 merge -o /dev/full "$dir/bloom-2.amq" "$dir/bloom-2.amq" &&
        expect err "/dev/full" && expect err "No space left on device"
fi

# A read-only directory: a read-only mount (root), else a directory without
# write permission (root ignores those).
ro=$dir/ro
mkdir "$ro"
cp "$dir/bloom-2.amq" "$ro/f.amq"
cp "$dir/cuckoo-2.amq" "$ro/c.amq"
why=
if mount -t tmpfs -o size=1m tmpfs "$ro" 2>/dev/null; then
    cp "$dir/bloom-2.amq" "$ro/f.amq"
    cp "$dir/cuckoo-2.amq" "$ro/c.amq"
    mount -o remount,ro "$ro" && why="Read-only file system"
elif [ "$(id -u)" -ne 0 ]; then
    chmod 555 "$ro" && why="Permission denied"
fi
if [ -n "$why" ]; then
    cp "$ro/f.amq" "$dir/ro-before.amq"
    run 2 add "$ro/f.amq" "$dir/keys3.txt" && expect err "$ro/f.amq" && expect err "$why"
    cmp -s "$ro/f.amq" "$dir/ro-before.amq" || fail "a save in a read-only directory changed it"
    run 2 merge --force -o "$ro/f.amq" "$dir/bloom-2.amq" "$dir/bloom-2.amq" &&
        expect err "$ro/f.amq" && expect err "$why"
    # Nothing to save: an add of no keys does not rewrite the file.
    : >"$dir/no-keys.txt"
    run 0 add "$ro/c.amq" "$dir/no-keys.txt"
    chmod 755 "$ro" 2>/dev/null
else
    echo "no read-only directory to be had as root without mount: skipping"
fi

finish concurrency

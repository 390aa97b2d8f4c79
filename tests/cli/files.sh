#!/bin/sh
# What a save does to the file it writes: a device or FIFO is written into
# and stays what it was, a directory is refused, a rewritten file keeps its
# mode and owner, a symbolic link stays a link with its target replaced, a
# read-only file is refused and left as it was, another hard link keeps the
# old contents; the same as an unprivileged user; a crawl frontier's files
# are refused by every command that saves, whatever link leads to them.
#   files.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

seq 1 1000 >"$dir/keys.txt"
seq 5001 5100 >"$dir/more.txt"
as_root=false
[ "$(id -u)" -eq 0 ] && as_root=true

mode_of() { stat -c %a "$1"; }
owner_of() { stat -c %U:%G "$1"; }

# The keys of FILE answer as present: query prints every line of KEYS.
holds() {
    n=$(wc -l <"$2" | tr -d ' ')
    got=$("$amq" query -c "$1" "$2" 2>/dev/null)
    [ "$got" = "$n" ] || fail "$1 holds $got of the $n keys of $2"
}

# Open the FIFO (by a second hard link, in case a save replaced the first)
# for reading and writing and close it again: a reader still waiting in
# open gets its end of file, whatever amq did.
release_fifo() {
    exec 3<>"$1.link"
    exec 3>&-
}

# ---- devices, FIFOs, standard output, directories ---------------------------

# A character device of our own first (where mknod is allowed), so that a
# broken save replaces it rather than /dev/null.
if $as_root && mknod "$dir/null" c 1 3 2>/dev/null; then
    run 0 build -t bloom -o "$dir/null" "$dir/keys.txt" && empty err
    run 0 build --force -t bloom -o "$dir/null" "$dir/keys.txt"
    [ -c "$dir/null" ] || fail "saving to a character device replaced it"
fi
if [ ! -f "$dir/null" ]; then
    run 0 build -t bloom -o /dev/null "$dir/keys.txt" && empty err
    run 0 build --force -t bloom -o /dev/null "$dir/keys.txt" && empty err
fi
if [ ! -c /dev/null ]; then
    fail "/dev/null is no longer a character device"
    if $as_root; then rm -f /dev/null && mknod -m 666 /dev/null c 1 3; fi
fi

# -o /dev/stdout: into a file the shell opened (no --force: it replaces
# nothing), into a pipe, and appended to a file opened with >>.
if [ -f /dev/stdout ] && [ ! -L /dev/stdout ]; then
    fail "/dev/stdout is a regular file before the test: an earlier save replaced it"
    if $as_root; then rm -f /dev/stdout && ln -s /proc/self/fd/1 /dev/stdout; fi
fi
"$amq" build -t bloom -o /dev/stdout "$dir/keys.txt" >"$dir/stdout.amq" 2>"$dir/err"
code=$?
[ "$code" -eq 0 ] || fail "build -o /dev/stdout >FILE exited $code: $(cat "$dir/err")"
run 0 info "$dir/stdout.amq" && expect out "bloom"
holds "$dir/stdout.amq" "$dir/keys.txt"
{
    "$amq" build -t bloom -o /dev/stdout "$dir/keys.txt" 2>"$dir/err"
    echo $? >"$dir/code"
} | cat >"$dir/piped.amq"
[ "$(cat "$dir/code")" = 0 ] || fail "build -o /dev/stdout | cat exited $(cat "$dir/code")"
cmp -s "$dir/piped.amq" "$dir/stdout.amq" || fail "build -o /dev/stdout | cat differs"
printf 'head' >"$dir/log"
"$amq" build -t bloom -o /dev/stdout "$dir/keys.txt" >>"$dir/log" ||
    fail "build -o /dev/stdout >>FILE failed"
[ "$(head -c 4 "$dir/log")" = head ] || fail "build -o /dev/stdout >>FILE lost what FILE held"
tail -c +5 "$dir/log" | cmp -s - "$dir/stdout.amq" || fail "build -o /dev/stdout >>FILE did not append"
"$amq" build -t bloom -o /dev/stdout "$dir/keys.txt" >/dev/full 2>"$dir/err"
code=$?
[ "$code" -eq 2 ] || fail "amq build -o /dev/stdout >/dev/full exited $code, expected 2"
last="amq build -o /dev/stdout >/dev/full"
expect err "cannot save /dev/stdout" && expect err "No space left on device"
if [ -f /dev/stdout ] && [ ! -L /dev/stdout ]; then
    fail "a save replaced /dev/stdout with a regular file"
    if $as_root; then rm -f /dev/stdout && ln -s /proc/self/fd/1 /dev/stdout; fi
fi

# A FIFO read by a background cat, from build (no --force needed) and merge --force.
mkfifo "$dir/fifo"
ln "$dir/fifo" "$dir/fifo.link"
cat "$dir/fifo" >"$dir/from-fifo.amq" &
reader=$!
run 0 build -t bloom -o "$dir/fifo" "$dir/keys.txt" && empty err
release_fifo "$dir/fifo"
wait "$reader"
[ -p "$dir/fifo" ] || fail "building into a FIFO replaced it"
cmp -s "$dir/from-fifo.amq" "$dir/stdout.amq" || fail "the FIFO's reader did not get the filter"
"$amq" build -t bloom -n 2000 -p 0.01 -o "$dir/a.amq" "$dir/keys.txt"
"$amq" build -t bloom -n 2000 -p 0.01 -o "$dir/b.amq" "$dir/more.txt"
cat "$dir/fifo" >"$dir/merged.amq" &
reader=$!
run 0 merge --force -o "$dir/fifo" "$dir/a.amq" "$dir/b.amq"
release_fifo "$dir/fifo"
wait "$reader"
[ -p "$dir/fifo" ] || fail "merging into a FIFO replaced it"
holds "$dir/merged.amq" "$dir/keys.txt"
holds "$dir/merged.amq" "$dir/more.txt"

# A directory is refused, with --force or without, and left empty.
mkdir "$dir/adir"
run 2 build -t bloom -o "$dir/adir" "$dir/keys.txt" && expect err "is a directory" &&
    expect err "a filter is saved to a regular file, a character device or a FIFO"
run 2 build --force -t bloom -o "$dir/adir" "$dir/keys.txt" && expect err "is a directory"
run 2 merge --force -o "$dir/adir" "$dir/a.amq" "$dir/b.amq" && expect err "is a directory"
[ -d "$dir/adir" ] && [ -z "$(ls -A "$dir/adir")" ] || fail "a directory output was changed"
ls -a "$dir" | grep -q '\.tmp\.' && fail "a temporary file was left in $dir"

# ---- rewriting a file: mode, owner, links, read-only ----------------------------

# Mode 0600 kept by add, remove and build --force.
"$amq" build -t counting-bloom -n 2000 -o "$dir/c.amq" "$dir/keys.txt"
chmod 600 "$dir/c.amq"
run 0 add "$dir/c.amq" "$dir/more.txt"
[ "$(mode_of "$dir/c.amq")" = 600 ] || fail "add changed mode 600 to $(mode_of "$dir/c.amq")"
holds "$dir/c.amq" "$dir/more.txt"
run 0 remove "$dir/c.amq" "$dir/more.txt"
[ "$(mode_of "$dir/c.amq")" = 600 ] || fail "remove changed mode 600 to $(mode_of "$dir/c.amq")"
run 0 build --force -t counting-bloom -n 2000 -o "$dir/c.amq" "$dir/keys.txt"
[ "$(mode_of "$dir/c.amq")" = 600 ] || fail "build --force changed mode 600"

# Owner and group kept (root only: only root can give a file away).
if $as_root; then
    chown nobody:nogroup "$dir/c.amq"
    run 0 add "$dir/c.amq" "$dir/more.txt"
    [ "$(owner_of "$dir/c.amq")" = nobody:nogroup ] ||
        fail "add as root changed the owner nobody:nogroup to $(owner_of "$dir/c.amq")"
    run 0 build --force -t counting-bloom -n 2000 -o "$dir/c.amq" "$dir/keys.txt"
    [ "$(owner_of "$dir/c.amq")" = nobody:nogroup ] || fail "build --force changed the owner"
    [ "$(mode_of "$dir/c.amq")" = 600 ] || fail "build --force changed the mode of nobody's file"
    chown root:root "$dir/c.amq"
else
    echo "not root: skipping the cases of another user's file"
fi

# A symbolic link (relative, in another directory) stays a link; its target
# is replaced in its own directory.
mkdir "$dir/real" "$dir/links"
cp "$dir/c.amq" "$dir/real/t.amq"
chmod 640 "$dir/real/t.amq"
ln -s ../real/t.amq "$dir/links/t.amq"
run 0 add "$dir/links/t.amq" "$dir/more.txt"
[ -L "$dir/links/t.amq" ] || fail "add replaced a symbolic link with a file"
[ "$(readlink "$dir/links/t.amq")" = ../real/t.amq ] || fail "add changed the link's target"
holds "$dir/real/t.amq" "$dir/more.txt"
[ "$(mode_of "$dir/real/t.amq")" = 640 ] || fail "add through a link changed the target's mode"
run 0 build --force -t bloom -o "$dir/links/t.amq" "$dir/more.txt"
[ -L "$dir/links/t.amq" ] || fail "build --force replaced a symbolic link with a file"
run 0 info "$dir/real/t.amq" && expect out "bloom"
# add's lock file is beside the file the link leads to, as the save.
[ "$(ls -A "$dir/links")" = t.amq ] &&
    [ "$(LC_ALL=C ls -A "$dir/real" | tr '\n' ' ')" = ".t.amq.lock t.amq " ] ||
    fail "saving through a link left other files: $(ls -A "$dir/links" "$dir/real")"
# A dangling link: build creates its target.
ln -s ../real/new.amq "$dir/links/new.amq"
run 0 build -t bloom -o "$dir/links/new.amq" "$dir/keys.txt"
[ -L "$dir/links/new.amq" ] && [ -f "$dir/real/new.amq" ] || fail "a dangling link's target was not created"

# A read-only file: refused by add, remove and build --force (as root too),
# nothing changed.
cp "$dir/c.amq" "$dir/ro.amq"
chmod 444 "$dir/ro.amq"
cp "$dir/ro.amq" "$dir/ro.before"
run 2 add "$dir/ro.amq" "$dir/more.txt" && expect err "$dir/ro.amq' is read-only"
run 2 remove "$dir/ro.amq" "$dir/keys.txt" && expect err "is read-only"
run 2 build --force -t bloom -o "$dir/ro.amq" "$dir/keys.txt" && expect err "is read-only"
ln -s ro.amq "$dir/ro-link.amq"
run 2 add "$dir/ro-link.amq" "$dir/more.txt" && expect err "is read-only"
cmp -s "$dir/ro.amq" "$dir/ro.before" || fail "a read-only file was changed"
[ "$(mode_of "$dir/ro.amq")" = 444 ] || fail "a read-only file's mode changed"

# Hard links: the name saved to is replaced; the other keeps the old contents.
cp "$dir/c.amq" "$dir/h1.amq"
ln "$dir/h1.amq" "$dir/h2.amq"
run 0 add "$dir/h1.amq" "$dir/more.txt"
cmp -s "$dir/h2.amq" "$dir/c.amq" || fail "add changed the other hard link"
holds "$dir/h1.amq" "$dir/more.txt"
ls -a "$dir" "$dir/real" "$dir/links" | grep -q '\.tmp\.' && fail "a temporary file was left"

# ---- as an unprivileged user --------------------------------------------------

# as_user CMD...: run CMD as nobody when root, else as ourselves. The build
# directory may be out of nobody's reach: amq is copied to a scratch
# directory under /tmp, and nobody works in a directory of its own there.
udir=
if ! $as_root; then
    as_user() { "$@"; }
    udir=$dir/user
    mkdir "$udir"
    uamq=$amq
elif command -v setpriv >/dev/null 2>&1 || su -s /bin/sh nobody -c true 2>/dev/null; then
    if command -v setpriv >/dev/null 2>&1; then
        as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    else
        as_user() { su -s /bin/sh nobody -c "$*"; } # the arguments: paths without quotes
    fi
    scratch=$(mktemp -d /tmp/amq-files.XXXXXX)
    trap 'rm -rf "$scratch"' EXIT
    chmod 755 "$scratch"
    cp "$amq" "$scratch/amq"
    chmod 755 "$scratch/amq"
    udir=$scratch/nobody
    mkdir "$udir"
    chown 65534:65534 "$udir"
    uamq=$scratch/amq
else
    echo "neither setpriv nor su: skipping the unprivileged cases"
fi

# urun EXPECTED ARGS...: as run, as the unprivileged user, keys on stdin
# from $stdin (default $dir/more.txt).
urun() {
    expected=$1
    shift
    last="amq $* (unprivileged)"
    as_user "$uamq" "$@" >"$dir/out" 2>"$dir/err" <"${stdin:-$dir/more.txt}"
    code=$?
    if [ "$code" -ne "$expected" ]; then
        fail "$last exited $code, expected $expected"
        sed 's/^/  stderr: /' "$dir/err" | head -n 5
        return 1
    fi
    return 0
}

if [ -n "$udir" ]; then
    # Its own file: mode kept, symbolic link followed.
    cp "$dir/c.amq" "$udir/mine.amq"
    $as_root && chown 65534:65534 "$udir/mine.amq"
    chmod 600 "$udir/mine.amq"
    urun 0 add "$udir/mine.amq" && [ "$(mode_of "$udir/mine.amq")" = 600 ] ||
        fail "an unprivileged add changed mode 600 to $(mode_of "$udir/mine.amq")"
    holds "$udir/mine.amq" "$dir/more.txt"
    as_user ln -s mine.amq "$udir/link.amq"
    urun 0 remove "$udir/link.amq" && [ -L "$udir/link.amq" ] ||
        fail "an unprivileged remove through a link replaced the link"
    urun 0 build --force -t counting-bloom -n 2000 -o "$udir/mine.amq"
    [ "$(mode_of "$udir/mine.amq")" = 600 ] || fail "an unprivileged build --force changed the mode"

    # Its own read-only file: refused, unchanged.
    cp "$dir/c.amq" "$udir/ro.amq"
    $as_root && chown 65534:65534 "$udir/ro.amq"
    chmod 444 "$udir/ro.amq"
    cp "$udir/ro.amq" "$dir/uro.before"
    urun 2 add "$udir/ro.amq" && expect err "$udir/ro.amq' is read-only"
    stdin=$dir/keys.txt
    urun 2 remove "$udir/ro.amq" && expect err "is read-only"
    stdin=
    urun 2 build --force -t bloom -o "$udir/ro.amq" && expect err "is read-only"
    cmp -s "$udir/ro.amq" "$dir/uro.before" || fail "an unprivileged save changed a read-only file"

    # A file of root's it may write but not give to root: refused, unchanged.
    if $as_root; then
        cp "$dir/c.amq" "$udir/roots.amq"
        chmod 666 "$udir/roots.amq"
        cp "$udir/roots.amq" "$dir/roots.before"
        urun 2 add "$udir/roots.amq" && expect err "belongs to user 0, group 0"
        cmp -s "$udir/roots.amq" "$dir/roots.before" || fail "a file of root's was changed"
        [ "$(owner_of "$udir/roots.amq")" = root:root ] || fail "a file of root's changed owner"
    else
        echo "not root: skipping the unprivileged save of another user's file"
    fi
    ls -a "$udir" | grep -q '\.tmp\.' && fail "a temporary file was left in $udir"
fi

# A crawl frontier's files (frontier.amq, filter-<16 hex>.amq written
# read-only, segment-<16 hex>.seg, the save's .tmp files) change only
# through the frontier: every command that saves refuses them, by the file
# itself: by name, through a symbolic link (also one dangling into the
# directory, and /dev/stdout or /dev/fd/N), and as another hard link in
# the frontier's directory; --force does not override it, and the message
# never suggests a remedy (--force, making it writable) that would destroy
# the file. query reads them.
fr=$dir/frontier
mkdir -p "$fr"
: >"$fr/frontier.amq"
printf 'a\nb\n' >"$dir/ab.txt"
run 0 build -t counting-bloom -n 100 -o "$dir/ab.amq" "$dir/ab.txt"
filter=$fr/filter-0000000000000003.amq
cp "$dir/ab.amq" "$filter"
chmod 444 "$filter"
: >"$fr/segment-0000000000000001.seg"
cp "$filter" "$dir/frontier-before.amq"
ln -s "$filter" "$dir/to-filter.amq"
ln -s frontier/filter-0000000000000003.amq "$dir/relative.amq"
ln -s to-filter.amq "$dir/chain.amq"
ln "$filter" "$fr/copy.amq"
ln -s "$fr/filter-0000000000000004.amq" "$dir/dangling.amq"
ln -s "$fr" "$dir/frontier-link"
# no_remedy: the last refusal names no remedy that would destroy the file.
no_remedy() {
    grep -qE 'writable|--force|chmod' "$dir/err" && fail "'$last' suggests: $(cat "$dir/err")"
}
for command in add remove; do
    for path in "$filter" "$dir/to-filter.amq" "$dir/relative.amq" "$dir/chain.amq" \
        "$dir/frontier-link/filter-0000000000000003.amq"; do
        run 2 $command "$path" "$dir/ab.txt" && expect err "is the filter of the crawl frontier in" &&
            expect err "query it with amq query" && no_remedy
    done
    run 2 $command "$dir/to-filter.amq" "$dir/ab.txt" &&
        expect err "to-filter.amq (it leads to " && expect err "$fr"
    run 2 $command "$fr/copy.amq" "$dir/ab.txt" &&
        expect err "copy.amq (the same file as $fr/filter-0000000000000003.amq) is the filter" && no_remedy
    run 2 $command /dev/fd/3 "$dir/ab.txt" 3<"$filter" && expect err "is the filter of the crawl frontier"
done
# What the old read-only refusal asked for, done: still refused.
chmod u+w "$dir/to-filter.amq"
run 2 add "$dir/to-filter.amq" "$dir/ab.txt" && expect err "is the filter of the crawl frontier"
chmod 444 "$filter"
for force in "" --force; do
    for path in "$filter" "$dir/to-filter.amq" "$dir/dangling.amq" "$fr/frontier.amq" \
        "$fr/segment-0000000000000001.seg" "$fr/.frontier.amq.tmp" \
        "$fr/.filter-0000000000000004.amq.tmp" "$fr/copy.amq"; do
        # shellcheck disable=SC2086 # $force: no word, or one
        run 2 build $force -t bloom -o "$path" "$dir/ab.txt" && expect err "of the crawl frontier in" &&
            no_remedy
        # shellcheck disable=SC2086
        run 2 merge $force -o "$path" "$dir/ab.amq" "$dir/ab.amq" && expect err "of the crawl frontier in"
    done
done
run 2 build -t bloom -o "$fr/frontier.amq" "$dir/ab.txt" && expect err "is the manifest of the crawl frontier in $fr"
run 2 build -t bloom -o "$fr/segment-0000000000000001.seg" "$dir/ab.txt" && expect err "is a spill file"
"$amq" build -t bloom -o /dev/stdout "$dir/ab.txt" >>"$fr/segment-0000000000000001.seg" 2>"$dir/err"
code=$?
last="amq build -o /dev/stdout >>segment"
[ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
expect err "/dev/stdout (it leads to " && expect err "is a spill file of the crawl frontier"
[ -s "$fr/segment-0000000000000001.seg" ] && fail "build -o /dev/stdout wrote into a frontier's spill file"
[ -e "$fr/filter-0000000000000004.amq" ] && fail "a save through a dangling link made a frontier's file"
cmp -s "$filter" "$dir/frontier-before.amq" || fail "a refused command changed the frontier's filter"
[ -s "$fr/frontier.amq" ] && fail "a refused command wrote the frontier's manifest"
ls -a "$fr" | grep -q '\.lock$' && fail "a refused command left a lock file in the frontier's directory"
run 0 query "$filter" "$dir/ab.txt" && lines out 2
run 0 query "$dir/to-filter.amq" "$dir/ab.txt" && lines out 2
# Other files in the directory, and a directory without a manifest, are
# the user's.
run 0 build -t bloom -o "$fr/mine.amq" "$dir/ab.txt"
mkdir -p "$dir/not-frontier"
run 0 build -t counting-bloom -n 100 -o "$dir/not-frontier/filter-0000000000000003.amq" "$dir/ab.txt"
run 0 add "$dir/not-frontier/filter-0000000000000003.amq" "$dir/ab.txt"
# A hard link made outside the frontier's directory cannot be told from the
# file; a save through it replaces that name, and the frontier's file
# keeps its bytes.
ln "$filter" "$dir/outside.amq"
chmod u+w "$dir/outside.amq"
run 0 add "$dir/outside.amq" "$dir/more.txt"
cmp -s "$filter" "$dir/frontier-before.amq" || fail "an add through an outside hard link changed the frontier's filter"
chmod 444 "$filter"

finish files

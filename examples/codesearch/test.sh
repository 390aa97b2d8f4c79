#!/bin/sh
# The codesearch example against grep: index real trees (the project's own
# sources, and a tree of awkward files), then check that hundreds of
# searches print exactly what `grep -rnaE` prints, and exit as it exits
# (grep_compare.py); then options, errors and damaged indexes.
#   test.sh PATH_TO_CODESEARCH PROJECT_ROOT SCRATCH_DIR PATH_TO_AMQ
cs=$1 root=$2
case $cs in /*) ;; *) cs=$PWD/$cs ;; esac
set -- "$cs" "$3"
. "$root/tests/cli/lib/common.sh"
export LC_ALL=C
searches=${CODESEARCH_SEARCHES:-300}
seed=${CODESEARCH_SEED:-$(date +%s)}

# 1. Awkward files: NUL bytes, invalid UTF-8, CRLF lines, a 1 MB line, a
# last line without its newline, dot-files, empty files, spaces in names,
# a symbolic link (grep -r does not follow it), a deep directory.
odd=$dir/odd
mkdir -p "$odd/deep/er/still" "$odd/with space" "$odd/.hidden"
: >"$odd/empty"
: >"$odd/.hidden/empty too"
printf 'bin\000ary\000needle\000\nsecond line\000x\n' >"$odd/binary"
printf 'caf\351 na\357ve \377\376 needle \200\201\n\303\251t\303\251\n' >"$odd/latin1"
printf 'line one\r\nneedle two\r\n\r\nlast\r\n' >"$odd/crlf"
printf 'needle in a spaced name\n' >"$odd/with space/file name.txt"
printf 'no newline at the end needle' >"$odd/unended"
printf '\n\n\n' >"$odd/newlines"
printf 'a dot-file needle\nstatic int hidden;\n' >"$odd/.dotfile"
printf 'deep needle\n' >"$odd/deep/er/still/here"
ln -s ../crlf "$odd/deep/link"
python3 -c '
import sys
line = b"".join(b"word%d needle_%d " % (i, i % 97) for i in range(70000))[:1 << 20]
sys.stdout.buffer.write(b"before\n" + line + b"\nafter needle\n")' >"$odd/long line"

# 2. A copy of the project's sources (so that edits made while the test
# runs change neither side) and the awkward tree in one index, indexed and
# searched from the same directory so that paths print as grep prints them.
mkdir -p "$dir/copy"
(cd "$root" && cp -R src include tools tests examples docs "$dir/copy/") || exit 2
cd "$dir/copy" || exit 2
trees="src include tools tests examples docs odd"
mv "$odd" odd
run 0 index -o "$dir/all.idx" $trees
expect err "indexed"
python3 "$root/examples/codesearch/grep_compare.py" "$cs" "$dir/all.idx" "$seed" "$searches" \
    $trees >"$dir/compare" 2>&1 || fail "searches differ from grep -rnaE: $(cat "$dir/compare")"
tail -n 1 "$dir/compare"

# 3. Fixed cases: the plan, --stats, the scan fallback, exit statuses.
run 0 search --index "$dir/all.idx" --stats -n amq_bundle_open_filter
expect err "plan: \"amq\""
expect err "candidates read: "
run 0 search --index "$dir/all.idx" --stats 'a.b'
expect err "no trigram to look up: scanning every file"
absent=$(printf '\166\161\170\153\172\152') # no trigram of it in any file, this one too
run 1 search --index "$dir/all.idx" --stats "$absent"
expect err "candidates read: 0"
empty out
run 0 search --index "$dir/all.idx" -l 'needle two'
expect out "odd/crlf"
run 0 search --index "$dir/all.idx" -c -f 'odd/binary$' 'needle'
expect out "binary:1"
lines out 1
AMQ_CODESEARCH_INDEX="$dir/all.idx" "$cs" search -n 'after needle' >"$dir/out" ||
    fail "search with AMQ_CODESEARCH_INDEX failed"
expect out "long line:3:after needle"

# 4. Errors say what is wrong and keep what exists.
run 2 search --index "$dir/none.idx" x
expect err "none.idx"
run 2 search --index "$dir/all.idx" 'a('
expect err "the pattern: "
run 2 search --index "$dir/all.idx" -l -c x
expect err "exclude each other"
printf 'not an index\n' >"$dir/precious.c"
run 2 index -o "$dir/precious.c" odd
expect err "is not an index"
grep -q "not an index" "$dir/precious.c" || fail "index overwrote precious.c"
run 2 index -o "$dir/x.idx"
expect err "no PATH"
run 2 search --index "$dir/all.idx"
expect err "one PATTERN"
run 2 search --index "$dir/precious.c" x
# A damaged index is refused with what is wrong, never a crash: cut short,
# and a byte changed in each section (header, paths, directory, postings).
size=$(wc -c <"$dir/all.idx")
head -c 50 "$dir/all.idx" >"$dir/short.idx"
run 2 search --index "$dir/short.idx" needle
expect err "damaged index: the header is cut short"
head -c $((size - 1)) "$dir/all.idx" >"$dir/cut.idx"
run 2 search --index "$dir/cut.idx" needle
expect err "damaged index"
flip() { # flip OFFSET OUT: all.idx with the byte at OFFSET changed
    python3 -c 'import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[int(sys.argv[2])] ^= 0x55
open(sys.argv[3], "wb").write(data)' "$dir/all.idx" "$1" "$2"
}
for at in 12 200 $((size / 3)) $((size - 100)); do
    flip "$at" "$dir/flipped.idx"
    # the byte may lie in postings this search does not read: then the
    # search answers; a scan of every trigram reads them all
    "$cs" search --index "$dir/flipped.idx" 'needle' >/dev/null 2>"$dir/err"
    code=$?
    [ "$code" -eq 2 ] && ! grep -q "damaged index\|not a codesearch index" "$dir/err" &&
        fail "flipped byte $at: $(cat "$dir/err")"
    [ "$code" -le 2 ] || fail "flipped byte $at: exit $code"
done
flip 12 "$dir/flipped.idx"
run 2 search --index "$dir/flipped.idx" needle
expect err "the header's checksum does not match"
flip 200 "$dir/flipped.idx"
run 2 search --index "$dir/flipped.idx" needle
expect err "damaged index"
run 2 nonsense
expect err "not a command"
run 0 --help
expect out "codesearch search"
finish codesearch

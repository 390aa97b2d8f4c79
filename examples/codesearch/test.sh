#!/bin/sh
# The codesearch example against grep: index real trees (the project's own
# sources, and a small tree of awkward files), then check that every search
# prints exactly the files `grep -rlF` prints, with its exit status.
# `amq info` describes the index, a bundle of filters.
#   test.sh PATH_TO_CODESEARCH PROJECT_ROOT SCRATCH_DIR PATH_TO_AMQ
cs=$1 root=$2 amq_tool=$4
case $cs in /*) ;; *) cs=$PWD/$cs ;; esac
set -- "$cs" "$3"
. "$root/tests/cli/lib/common.sh"
export LC_ALL=C

# same_as_grep INDEX STRING PATH...: the search and grep -rlF agree.
same_as_grep() {
    index=$1 string=$2
    shift 2
    "$cs" search -i "$index" -- "$string" | sort >"$dir/found"
    found_status=$?
    grep -rlF -- "$string" "$@" | sort >"$dir/expected"
    grep -rqF -- "$string" "$@"
    grep_status=$?
    if ! cmp -s "$dir/found" "$dir/expected"; then
        fail "search '$string' differs from grep -rlF:"
        diff "$dir/found" "$dir/expected" | head -n 5
    fi
    # exit status as grep's, read from a second run (the pipe hides it)
    "$cs" search -i "$index" -- "$string" >/dev/null 2>&1
    found_status=$?
    [ "$found_status" -eq "$grep_status" ] ||
        fail "search '$string' exited $found_status, grep $grep_status"
}

# 1. The project's sources, from the project root so paths match grep's.
cd "$root" || exit 2
trees="src include tools tests examples"
run 0 index -o "$dir/project.idx" $trees
expect err "indexed"
expect err "bits per posting"
for string in amq__bundle "static int" XXH3 Golomb-Rice "#include <stdio.h>" \
    "AMQ_API int amq_bundle_open(" "a.b*[x]" zzqqzzqqzz ab a " * " "	return" \
    "codesearch_trigram_name" "Parquet"; do
    same_as_grep "$dir/project.idx" "$string" $trees
done
run 0 search -i "$dir/project.idx" --stats amq_bundle_open_filter
expect err "documents: "
expect err "candidates after filtering: "
expect err "true matches: "
expect err "false candidates: "
# Candidates never fewer than matches; matches are the lines printed.
candidates=$(sed -n 's/^candidates after filtering: //p' "$dir/err")
matches=$(sed -n 's/^true matches: //p' "$dir/err")
[ "$candidates" -ge "$matches" ] || fail "$candidates candidates < $matches matches"
lines out "$matches"
# One family alone answers the same.
run 0 index -f gcs -o "$dir/gcs.idx" $trees
run 0 index -f hfb -o "$dir/hfb.idx" $trees
same_as_grep "$dir/gcs.idx" "amq_contains_many" $trees
same_as_grep "$dir/hfb.idx" "amq_contains_many" $trees

# 2. Awkward files: empty, binary with NUL bytes, CRLF lines, spaces in a
# name, a symbolic link inside the tree (grep -r does not follow it), a
# short file, a deep directory.
cd "$dir" || exit 2
mkdir -p tree/deep/er/still "tree/with space"
: >tree/empty
printf 'bin\000ary\000needle\000' >tree/binary
printf 'line one\r\nneedle two\r\n' >tree/crlf
printf 'needle in a spaced name\n' >"tree/with space/file name.txt"
printf 'ab' >tree/short
printf 'deep needle\n' >tree/deep/er/still/here
ln -s ../crlf tree/deep/link
run 0 index -o "$dir/tree.idx" tree
for string in needle "needle two" ab b "ary" "deep needle" "in a spaced" missing; do
    same_as_grep "$dir/tree.idx" "$string" tree
done

# 3. amq info lists the bundle's members by type; other commands say that a
# bundle is not one filter.
"$amq_tool" info "$dir/tree.idx" >"$dir/info" 2>&1 || fail "amq info on an index failed"
grep -q "bundle" "$dir/info" || fail "amq info does not call the index a bundle"
grep -q "^  bytes  *1 members" "$dir/info" || fail "amq info lacks the document table"
"$amq_tool" info --json "$dir/tree.idx" | python3 -m json.tool >"$dir/info.json" ||
    fail "amq info --json on an index is not JSON"
grep -q '"members": ' "$dir/info.json" || fail "amq info --json lacks members"
echo x | "$amq_tool" query "$dir/tree.idx" >/dev/null 2>"$dir/err"
[ $? -eq 2 ] || fail "amq query on a bundle did not exit 2"
grep -q "is a bundle of filters" "$dir/err" || fail "amq query on a bundle: $(cat "$dir/err")"

# 4. Errors say what is wrong and keep what exists.
run 2 search -i "$dir/none.idx" x
expect err "none.idx"
printf 'not an index\n' >"$dir/precious.c"
run 2 index -o "$dir/precious.c" tree
expect err "is not an index"
grep -q "not an index" "$dir/precious.c" || fail "index overwrote precious.c"
run 2 index -o "$dir/x.idx"
expect err "no PATH"
run 2 index -p 2 -o "$dir/x.idx" tree
expect err "-p 2"
run 2 index -f bloom -o "$dir/x.idx" tree
expect err "smaller, hfb or gcs"
run 2 search -i "$dir/tree.idx"
expect err "one STRING"
run 2 search -i "$dir/precious.c" x
run 2 nonsense
expect err "not a command"
run 0 --help
expect out "codesearch search"
finish codesearch

#!/bin/sh
# check.sh - the library's include graph follows its layers (CONTRIBUTING.md,
# "Layout"): core/ includes only core/; a family folder includes core/ and
# itself; the generic handle (filter/) includes core/ and filter/; the
# applications (bundle/, frontier/) include core/, filter/ and themselves.
# No folder reaches into another family's internals.
# Usage: check.sh SOURCE_DIR
set -eu
src="$1/src"
status=0
for file in "$src"/*/*.[ch]; do
    layer=$(basename "$(dirname "$file")")
    case "$layer" in
    core) allowed="core" ;;
    bloom | cuckoo | gcs | hfb | fuse) allowed="core $layer" ;;
    filter) allowed="core filter" ;;
    bundle | frontier) allowed="core filter $layer" ;;
    *)
        echo "$file: folder '$layer' has no place in the layers (tests/layout/check.sh)"
        status=1
        continue
        ;;
    esac
    for included in $(sed -n 's/^#include "\([a-z_]*\)\/[a-z_]*\.h".*/\1/p' "$file"); do
        [ "$included" = amq ] && continue
        case " $allowed " in
        *" $included "*) ;;
        *)
            echo "$file: includes $included/, which layer '$layer' must not depend on"
            status=1
            ;;
        esac
    done
    if grep -q '^#include "[a-z_]*\.h"' "$file"; then
        echo "$file: an include without its folder ($(grep -m1 '^#include "[a-z_]*\.h"' "$file"))"
        status=1
    fi
done
[ "$status" = 0 ] && echo "layout: every include follows the layers"
exit "$status"

#!/bin/sh
# check.sh - the library's include graph follows its layers (CONTRIBUTING.md,
# "Layout"): core/ includes only core/; a family folder includes core/ and
# itself; the generic handle (filter/) includes core/ and filter/; the
# applications (bundle/, frontier/) include core/, filter/ and themselves.
# No folder reaches into another family's internals.
#
# Public headers (amq/) follow the same order. core/ includes amq/amq.h and
# amq/calc.h (the calculator is core's: core/calc.c), no family's header. A
# family includes those, its own header and, for the families with inline
# views (bloom, cuckoo, fuse), amq/inline.h; bloom/ also the split-block
# kernel amq/split_block.h. The generic handle and the applications sit
# above every family and may include any public header.
# Usage: check.sh SOURCE_DIR
set -eu
src="$1/src"
status=0
for file in "$src"/*/*.[ch]; do
    layer=$(basename "$(dirname "$file")")
    public="amq.h calc.h"
    case "$layer" in
    core) allowed="core" ;;
    bloom) allowed="core $layer" public="$public bloom.h inline.h split_block.h" ;;
    cuckoo | fuse) allowed="core $layer" public="$public $layer.h inline.h" ;;
    gcs | hfb) allowed="core $layer" public="$public $layer.h" ;;
    filter) allowed="core filter" public="*" ;;
    bundle | frontier) allowed="core filter $layer" public="*" ;;
    *)
        echo "$file: folder '$layer' has no place in the layers (tests/layout/check.sh)"
        status=1
        continue
        ;;
    esac
    for header in $(sed -n 's/^#include [<"]amq\/\([a-z_]*\.h\)[>"].*/\1/p' "$file"); do
        case " $public " in
        *" * "* | *" $header "*) ;;
        *)
            echo "$file: includes amq/$header, a public header layer '$layer' must not depend on"
            status=1
            ;;
        esac
    done
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

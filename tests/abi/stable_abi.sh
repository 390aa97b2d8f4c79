#!/bin/sh
# The stable tier's ABI is the stored snapshot's: abidiff of libamq.abi
# against the built library, restricted to the functions of stable.txt
# (the experimental tier may change in any release). Any difference fails,
# an addition too, so the snapshot always describes the tree: a deliberate
# change regenerates it (README.md) in the commit that makes it.
#   stable_abi.sh LIBRARY INCLUDE_DIR ABI_DIR SCRATCH_DIR
set -eu
library=$1 include=$2 abi=$3 scratch=$4
mkdir -p "$scratch"
if ! command -v abidiff >/dev/null 2>&1; then
    echo "abidiff is missing: install Debian's abigail-tools (make deps does)"
    exit 1
fi
{
    echo "[abi_whitelist]"
    sed 's/^/  /' "$abi/stable.txt"
} >"$scratch/stable.whitelist"
status=0
abidiff --kmi-whitelist "$scratch/stable.whitelist" --headers-dir2 "$include/amq" \
    --drop-private-types "$abi/libamq.abi" "$library" >"$scratch/report" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
    cat "$scratch/report"
    cat <<MSG
The stable tier's ABI differs from $abi/libamq.abi (abidiff exit $status:
4 a change, +8 an incompatible one). A deliberate change: say so in
CHANGELOG.md and regenerate the snapshot as $abi/README.md shows.
MSG
    exit 1
fi
echo "stable ABI: $(wc -l <"$abi/stable.txt") functions as the snapshot describes them"

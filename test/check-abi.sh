#!/bin/sh
# The ABI gate (issue 15, docs/abi.md): compares the stable tier of a built
# library with its committed baseline (test/abi/NAME.abi, written by libabigail's abidw over
# the public headers) and fails on an incompatible change: a function or
# variable removed, a signature or a type of the public API changed.
# Added functions are compatible and pass; the baseline is refreshed on
# purpose with test/abi/update.sh when the API grows.
# Usage: check-abi.sh LIBRARY BASELINE HEADERS_DIR
# Exit 77 (meson: skipped) when abidiff is not installed.
set -u
lib=${1:?usage: check-abi.sh LIBRARY BASELINE HEADERS_DIR}
base=${2:?}
headers=${3:?}
command -v abidiff >/dev/null 2>&1 || { echo "abidiff not installed (abigail-tools): skipped"; exit 77; }
# The experimental tier's version nodes are left out (docs/abi.md).
suppr=$(dirname "$0")/abi/experimental.suppr
out=$(abidiff --no-added-syms --suppressions "$suppr" --headers-dir1 "$headers" \
    --headers-dir2 "$headers" "$base" "$lib" 2>&1)
rc=$?
# abidiff's status bits: 1 error, 2 usage error, 4 ABI change, 8 incompatible change.
if [ $((rc & 3)) -ne 0 ]; then
    printf '%s\n' "$out"
    echo "abidiff failed (status $rc) on $lib against $base"
    exit 1
fi
# Bit 8 is what libabigail is sure breaks callers (a symbol removed); bit 4
# covers every other reported change (a parameter or return type, an enum
# value, a struct), which for a C API breaks callers too. Added functions
# are not reported (--no-added-syms): they are the compatible growth.
if [ $((rc & 12)) -ne 0 ]; then
    printf '%s\n' "$out"
    echo "ABI CHANGE in $lib against $base (docs/abi.md says what may change; an intended,"
    echo "compatible change: refresh the baseline with test/abi/update.sh)"
    exit 1
fi
echo "ok: $lib keeps the ABI of $base"
exit 0

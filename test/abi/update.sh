#!/bin/sh
# Rewrites the ABI baselines (test/abi/*.abi) from a build: run after an
# intended, compatible change of the public API (docs/abi.md), and commit.
#   test/abi/update.sh [BUILD_DIR]      (default: build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
b=${1:-$root/build}
# libbosch-torch is left out: its opaque handles are C++ classes, whose
# definitions pull libtorch's whole type graph into the dump (19.7 MB); its
# gate is its symbol list and the C header (docs/abi.md).
for lib in "lib/libbosch.so.0" "lib/text/libbosch-text.so.0"; do
    [ -f "$b/$lib" ] || { echo "skip $lib (not built)"; continue; }
    name=$(basename "$lib" .so.0)
    abidw --no-corpus-path --headers-dir "$root/include/bosch" --out-file "$here/$name.abi" "$b/$lib"
    echo "wrote $here/$name.abi"
done

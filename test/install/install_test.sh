#!/bin/sh
# install_test.sh BUILD_DIR SOURCE_DIR HAVE_TORCH PYTHON
# `meson install` into a fresh DESTDIR, then the installed tree on its own:
# the command starts without LD_LIBRARY_PATH (RUNPATH $ORIGIN), finds the
# installed organism beside itself, no installed file names the build or
# source tree, pkg-config sees the libraries, and (when PYTHON can make a
# venv) the Python package installs offline and scores the organism through
# the installed backend.
set -u
B=$(cd "$1" && pwd -P) || exit 1
SRC=$(cd "$2" && pwd -P) || exit 1
HAVE_TORCH=$3
PY=$4
T=$(mktemp -d "${TMPDIR:-/tmp}/bosch-install-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset LD_LIBRARY_PATH BOSCH_LIBRARY BOSCH_LIBRARY_DIR BOSCH_DEFAULT_MODEL PYTHONPATH

meson install -C "$B" --no-rebuild --quiet --destdir "$T/root" >"$T/install.log" 2>&1 ||
    { cat "$T/install.log" >&2; fail "meson install"; }
BIN=$(find "$T/root" -path '*/bin/bosch' -type f | head -n 1)
[ -n "$BIN" ] || fail "no bin/bosch installed"
ROOT=${BIN%/bin/bosch}
LIBDIR=$(dirname "$(find "$ROOT" -name 'libbosch.so.0' | head -n 1)")
[ -d "$LIBDIR" ] || fail "no libbosch.so.0 installed"
echo "installed prefix: $ROOT (libraries in $LIBDIR)"

# 1. Starts on its own.
"$BIN" --version >"$T/out" 2>&1 || { cat "$T/out" >&2; fail "installed bosch does not start"; }
readelf -d "$BIN" | grep -q 'R.*PATH.*\$ORIGIN' || fail "bin/bosch has no \$ORIGIN runpath"

# 2. No path of this machine's build or source tree in any installed file.
if grep -rlF -e "$B" -e "$SRC" "$ROOT" >"$T/paths" 2>/dev/null; then
    cat "$T/paths" >&2
    fail "installed files name the build or source tree"
fi

# 3. pkg-config finds the libraries of the prefix.
PKG_CONFIG_PATH="$LIBDIR/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$T/root" \
    pkg-config --exists libbosch libbosch-text || fail "pkg-config cannot find libbosch"

MASK=""
if [ "$HAVE_TORCH" = 1 ]; then
    # 4. README's main command from the installed tree (short budget): the
    #    default model is the organism installed beside the program.
    cd "$T" || exit 1
    "$BIN" search --ratio 0.875 --budget 24 --out "$T/s" >"$T/out" 2>&1 ||
        { cat "$T/out" >&2; fail "installed bosch search"; }
    grep -q "model $ROOT/share/libbosch/organism" "$T/out" ||
        { cat "$T/out" >&2; fail "search did not use the installed organism"; }
    "$BIN" show "$T/s.json" >"$T/out" 2>&1 || { cat "$T/out" >&2; fail "bosch show"; }
    MASK=$T/s.json
fi

# 5. The Python package, installed offline into a venv, outside the tree.
if [ -z "$PY" ] || ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
    echo "install test: ok (Python package skipped: no venv/ensurepip for '$PY')"
    exit 0
fi
"$PY" -m venv --system-site-packages "$T/venv" >"$T/out" 2>&1 || { cat "$T/out" >&2; fail "venv"; }
cp -rL "$SRC/bindings/python" "$T/pkg" # setuptools builds in the folder it is given
# without a developer's earlier in-tree build: setuptools would reuse its stale copies
rm -rf "$T/pkg/build" "$T/pkg"/*.egg-info
"$T/venv/bin/pip" install --no-index --no-build-isolation --quiet "$T/pkg" \
    >"$T/out" 2>&1 || { cat "$T/out" >&2; fail "pip install ./bindings/python"; }
cd "$T" || exit 1
BOSCH_LIBRARY_DIR=$LIBDIR "$T/venv/bin/python" -c \
    'import bosch, sys; assert "site-packages" in bosch.__file__, bosch.__file__; print(bosch.__version__)' \
    >"$T/out" 2>&1 || { cat "$T/out" >&2; fail "import bosch from the venv"; }
if [ "$HAVE_TORCH" = 1 ]; then
    BOSCH_LIBRARY_DIR=$LIBDIR OMP_NUM_THREADS=2 "$T/venv/bin/python" \
        "$SRC/bindings/python/examples/search_organism.py" --model "$ROOT/share/libbosch/organism" \
        --ratio 0.875 --budget 24 --samples 16 --out "$T/py" >"$T/out" 2>&1 ||
        { cat "$T/out" >&2; fail "scoring and searching the organism from Python"; }
    "$BIN" show "$T/py.json" >"$T/out" 2>&1 || { cat "$T/out" >&2; fail "bosch show of Python's file"; }
fi
echo "install test: ok"

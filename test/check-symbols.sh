#!/bin/sh
# Asserts that the shared library exports only symbols named bosch_*, and,
# given the committed list (test/abi/*.symbols, one NAME@@VERSION_NODE per
# line), exactly those in exactly those version nodes: a symbol that
# disappears or moves to another node breaks the ABI; a new one must be
# added to the list, in the node of the release that adds it (and to
# CHANGELOG.md), on purpose.
# Usage: check-symbols.sh PATH_TO_LIBRARY [EXPECTED_LIST [PREFIX]]
set -u
lib=${1:?usage: check-symbols.sh LIBRARY [EXPECTED_LIST [PREFIX]]}
expected=${2:-}
prefix=${3:-bosch_}
nm=${NM:-nm}
if [ ! -f "$lib" ]; then
    echo "library not found: $lib"
    exit 1
fi
syms=$("$nm" -D --defined-only "$lib") || { echo "nm failed on $lib"; exit 1; }
# Third column is the name with its version (name@@NODE; name@NODE for a
# non-default version). Type "A" entries are the version-script nodes
# (LIBBOSCH_0), not symbols.
versioned=$(printf '%s\n' "$syms" | awk '$2 == "A" && $3 ~ /^LIBBOSCH_/ { next } NF >= 3 { print $3 } NF == 2 { print $2 }')
names=$(printf '%s\n' "$versioned" | sed 's/@.*//')
if [ -z "$names" ]; then
    echo "no dynamic symbols defined in $lib"
    exit 1
fi
bad=$(printf '%s\n' "$names" | grep -v "^$prefix" || true)
count=$(printf '%s\n' "$names" | grep -c "^$prefix" || true)
if [ -n "$bad" ]; then
    echo "symbols not starting with bosch_ exported by $lib:"
    printf '%s\n' "$syms" | grep -v ' bosch_' 
    exit 1
fi
if [ -n "$expected" ]; then
    actual=$(printf '%s\n' "$versioned" | LC_ALL=C sort -u)
    want=$(LC_ALL=C sort -u "$expected")
    gone=$(printf '%s\n' "$want" | while read -r s; do printf '%s\n' "$actual" | grep -qxF "$s" || echo "$s"; done)
    new=$(printf '%s\n' "$actual" | while read -r s; do printf '%s\n' "$want" | grep -qxF "$s" || echo "$s"; done)
    if [ -n "$gone" ]; then
        echo "ABI break: symbols of $expected no longer exported by $lib:"
        printf '  %s\n' $gone
    fi
    if [ -n "$new" ]; then
        echo "new exported symbols not in $expected (add them there and to CHANGELOG.md):"
        printf '  %s\n' $new
    fi
    [ -z "$gone" ] && [ -z "$new" ] || exit 1
    echo "ok: $count exported symbols, all $prefix*, exactly the list and version nodes in $expected"
    exit 0
fi
echo "ok: $count exported symbols, all $prefix*"
exit 0

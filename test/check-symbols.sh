#!/bin/sh
# Asserts that the shared library exports only symbols named bosch_*.
# Usage: check-symbols.sh PATH_TO_LIBBOSCH_SO
set -u
lib=${1:?usage: check-symbols.sh LIBRARY}
nm=${NM:-nm}
if [ ! -f "$lib" ]; then
    echo "library not found: $lib"
    exit 1
fi
syms=$("$nm" -D --defined-only "$lib") || { echo "nm failed on $lib"; exit 1; }
# Third column is the name; strip symbol versions (name@@VER / name@VER).
# Type "A" entries are the version-script nodes (LIBBOSCH_0), not symbols.
names=$(printf '%s\n' "$syms" | awk '$2 == "A" && $3 ~ /^LIBBOSCH_/ { next } NF >= 3 { print $3 } NF == 2 { print $2 }' | sed 's/@.*//')
if [ -z "$names" ]; then
    echo "no dynamic symbols defined in $lib"
    exit 1
fi
bad=$(printf '%s\n' "$names" | grep -v '^bosch_' || true)
count=$(printf '%s\n' "$names" | grep -c '^bosch_' || true)
if [ -n "$bad" ]; then
    echo "symbols not starting with bosch_ exported by $lib:"
    printf '%s\n' "$syms" | grep -v ' bosch_' 
    exit 1
fi
echo "ok: $count exported symbols, all bosch_*"
exit 0

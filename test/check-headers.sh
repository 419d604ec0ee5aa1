#!/bin/sh
# Compiles every public header of libbosch on its own, as C99 and as C++11,
# with warnings as errors. Usage: check-headers.sh INCLUDE_DIR
set -u
inc=${1:?usage: check-headers.sh INCLUDE_DIR}
cc=${CC:-cc}
cxx=${CXX:-c++}
status=0
found=0

have_cxx=1
command -v "$cxx" >/dev/null 2>&1 || have_cxx=0

for h in "$inc"/bosch/*.h; do
    [ -f "$h" ] || continue
    found=1
    name=bosch/$(basename "$h")
    if ! printf '#include <%s>\nint bosch_header_check_dummy;\n' "$name" |
        "$cc" -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$inc" -x c - ; then
        echo "FAIL (C99): $name"
        status=1
    else
        echo "ok   (C99): $name"
    fi
    if [ "$have_cxx" = 1 ]; then
        if ! printf '#include <%s>\nint bosch_header_check_dummy;\n' "$name" |
            "$cxx" -std=c++11 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$inc" -x c++ - ; then
            echo "FAIL (C++11): $name"
            status=1
        else
            echo "ok   (C++11): $name"
        fi
    fi
done

if [ "$found" = 0 ]; then
    echo "no headers found under $inc/bosch"
    exit 1
fi
[ "$have_cxx" = 1 ] || echo "note: $cxx not found, C++ checks skipped"
exit $status

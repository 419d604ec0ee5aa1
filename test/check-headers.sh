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
    [ "$name" = bosch/testbed.h ] && continue # experimental tier only (below)
    extra=""
    if [ "$name" = bosch/mpi.h ]; then
        # libbosch-mpi's header includes <mpi.h>: checked where MPI is installed
        # (without Open MPI's deprecated C++ bindings, which warn on their own).
        extra=$(mpicc --showme:compile 2>/dev/null) || extra=""
        if [ -z "$extra" ]; then
            echo "skip (no mpicc): $name"
            continue
        fi
        extra="$extra -DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1"
    fi
    # shellcheck disable=SC2086 # $extra: several flags
    if ! printf '#include <%s>\nint bosch_header_check_dummy;\n' "$name" |
        "$cc" -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$inc" $extra -x c - ; then
        echo "FAIL (C99): $name"
        status=1
    else
        echo "ok   (C99): $name"
    fi
    if [ "$have_cxx" = 1 ]; then
        if ! printf '#include <%s>\nint bosch_header_check_dummy;\n' "$name" |
            "$cxx" -std=c++11 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$inc" $extra -x c++ - ; then
            echo "FAIL (C++11): $name"
            status=1
        else
            echo "ok   (C++11): $name"
        fi
    fi
done

# The experimental tier (docs/abi.md): each header compiles with
# BOSCH_EXPERIMENTAL_API defined too; without it <bosch/testbed.h> refuses
# to compile and the other headers declare nothing of the tier.
for h in "$inc"/bosch/*.h; do
    name=bosch/$(basename "$h")
    [ "$name" = bosch/mpi.h ] && continue # no experimental part; needs <mpi.h> (above)
    if ! printf '#define BOSCH_EXPERIMENTAL_API 1\n#include <%s>\nint bosch_header_check_dummy;\n' \
        "$name" | "$cc" -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$inc" -x c - ; then
        echo "FAIL (C99, experimental tier): $name"
        status=1
    fi
done
if printf '#include <bosch/testbed.h>\n' |
    "$cc" -std=c99 -fsyntax-only -I"$inc" -x c - 2>/dev/null; then
    echo "FAIL: <bosch/testbed.h> compiles without BOSCH_EXPERIMENTAL_API"
    status=1
fi
for sym in bosch_strategy_solve bosch_subproblem_create bosch_torch_model_load; do
    if printf '#include <bosch/bosch.h>\n#include <bosch/torch.h>\nvoid *p = (void *)%s;\n' "$sym" |
        "$cc" -std=c99 -fsyntax-only -I"$inc" -x c - 2>/dev/null; then
        echo "FAIL: $sym is declared without BOSCH_EXPERIMENTAL_API"
        status=1
    fi
done
echo "ok: the experimental tier only with BOSCH_EXPERIMENTAL_API"

if [ "$found" = 0 ]; then
    echo "no headers found under $inc/bosch"
    exit 1
fi
[ "$have_cxx" = 1 ] || echo "note: $cxx not found, C++ checks skipped"
exit $status

#!/usr/bin/env bash
# early_stop_floor: what a path-keeping early stop would cost the default
# search in quality, on bench_peers' landscapes (issue 34, item 3).
#
# An evaluator may stop a candidate (exact metric: once its remaining prompts
# cannot lift it to a floor) only if the search then takes the same path as
# with the whole evaluation. The `model` strategy reads every value (its
# surrogate, its temperature scale, its Metropolis rule), so the only such
# stop is one where the strategy reads every value clipped at a floor it
# could send with the request: max(value, floor). This applies
# bench/experiments/early_stop_floor.patch (the `model` strategy clipping its
# values, chosen by BOSCH_EXP_FLOOR) to a scratch copy of HEAD, builds it
# without the torch backend, and runs bench_peers once per floor:
#   none       today's strategy
#   predraw    the Metropolis draw made before the values are read, nothing
#              clipped (a floor sent with the request needs the draw first)
#   threshold  clipped at the acceptance threshold cur + t ln u (the highest
#              floor that keeps the acceptance exact)
#   1, 2, 4    clipped at min(threshold, cur - K x mean |delta|)
# and prints, per floor, the default's mean q (all runs, and the runs that
# return a mask), the difference to predraw, and the share of values read
# below the floor: an upper bound on the candidates such a stop could cut.
#
#   bash bench/early_stop_floor.sh [FLOOR ...]   (about 1 minute per floor on 2 cores)
#
# Never part of libbosch: the patch exists only for this measurement.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
floors=("$@")
[ ${#floors[@]} -gt 0 ] || floors=(none predraw threshold 1 2 4)
work=$(mktemp -d /tmp/bosch-early-stop-floor-XXXXXX)
trap 'git -C "$src" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$src" worktree add --detach --quiet "$work/src" HEAD
patch --quiet -d "$work/src" -p1 <"$src/bench/experiments/early_stop_floor.patch"
meson setup "$work/build" "$work/src" -Dtests=false -Dtorch=disabled -Dmpi=disabled \
    -Dpython_tests=disabled -Dreference_tests=disabled -Dbuildtype=release >/dev/null
ninja -C "$work/build" bench/bench_peers >/dev/null

echo "# Early stop at a floor: the default search on bench_peers' landscapes"
echo
echo "HEAD $(git -C "$src" rev-parse --short HEAD) + bench/experiments/early_stop_floor.patch;" \
     "bench_peers with its defaults (6 families, 2 shapes, 3 ratios, seeds 1..5, budgets 500 and 1500)."
echo
echo "| floor | mean q (all runs) | mean q (runs with a mask) | vs predraw | values the model strategy read below the floor |"
echo "|---|---|---|---|---|"
declare -A q_all q_mask
for f in "${floors[@]}"; do
    BOSCH_EXP_FLOOR=$f LD_LIBRARY_PATH="$work/build/lib" "$work/build/bench/bench_peers" \
        --threads 1 >"$work/peers-$f.md" 2>"$work/peers-$f.err"
    q_all[$f]=$(awk -F'|' '/^\| libbosch default \|/ {gsub(/ /, "", $3); print $3; exit}' "$work/peers-$f.md")
    q_mask[$f]=$(sed -n 's/.*did return a mask: libbosch default \([0-9.]*\),.*/\1/p' "$work/peers-$f.md")
    below=$(sed -n 's/^early-stop floor: \([0-9]*\) of \([0-9]*\) .*/\1 \2/p' "$work/peers-$f.err")
    share=$(awk -v b="$below" 'BEGIN {split(b, x, " "); if (x[2] > 0) printf "%.3f (%d of %d)", x[1] / x[2], x[1], x[2]; else print "-"}')
    vs="-"
    if [ -n "${q_mask[predraw]:-}" ]; then
        vs=$(awk -v a="${q_mask[$f]}" -v b="${q_mask[predraw]}" 'BEGIN {printf "%+.4f", a - b}')
    fi
    echo "| $f | ${q_all[$f]} | ${q_mask[$f]} | $vs | $share |"
done

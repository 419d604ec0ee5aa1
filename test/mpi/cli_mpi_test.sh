#!/bin/sh
# `mpirun -np 3 bosch search` (issue 37) on the organism: the same mask and
# score as one process, outputs written by rank 0 alone, and a rank that
# cannot open its model (MPMD: another --model for rank 2) refusing the job
# before any evaluation, naming the rank and the reason.
# Usage: cli_mpi_test.sh MPIRUN BOSCH
set -u
MPIRUN=$1
BOSCH=$2
T=$(mktemp -d /tmp/bosch-cli-mpi-XXXXXX)
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# One libtorch thread per rank, and no re-exec for the thread policy.
export OMP_NUM_THREADS=1 BOSCH_THREAD_POLICY=0
fail() { echo "FAIL: $*"; exit 1; }
ARGS="search --device cpu --budget 16 --samples 4"

# shellcheck disable=SC2086
"$BOSCH" $ARGS --out "$T/one" >"$T/one.log" 2>&1 || fail "one process: $(cat "$T/one.log")"
# shellcheck disable=SC2086
"$MPIRUN" --oversubscribe -np 3 -x OMP_NUM_THREADS -x BOSCH_THREAD_POLICY "$BOSCH" $ARGS \
    --out "$T/three" >"$T/three.log" 2>&1 || fail "-np 3: $(cat "$T/three.log")"
cmp -s "$T/one.tsv" "$T/three.tsv" || fail "-np 3: another mask than one process"
grep '"raw"' "$T/one.json" >"$T/one.raw"
grep '"raw"' "$T/three.json" | cmp -s - "$T/one.raw" || fail "-np 3: another score"
[ "$(grep -c '^wrote ' "$T/three.log")" = 1 ] || fail "-np 3: outputs reported by more than one rank"
echo "ok: mpirun -np 3 bosch search returns one process's mask and score"

# shellcheck disable=SC2086
"$MPIRUN" --oversubscribe -np 2 "$BOSCH" $ARGS --out "$T/nr" : \
    -np 1 "$BOSCH" $ARGS --model "$T/no-model" --out "$T/nr" >"$T/nr.log" 2>&1 &&
    fail "a rank without its model did not fail the job"
grep -q "rank 2 is not ready: model directory '$T/no-model' does not exist" "$T/nr.log" ||
    fail "no refusal naming rank 2: $(cat "$T/nr.log")"
[ -e "$T/nr.json" ] && fail "outputs written though a rank was not ready"
grep -q "numerical noise" "$T/nr.log" && fail "evaluated before the refusal"
echo "ok: a rank that cannot open its model refuses the job before any evaluation"

#!/bin/sh
# Scaling of a search over MPI ranks (libbosch-mpi, issue 37), with a slow
# evaluator that sleeps instead of computing (the testbed plus --sleep-ms,
# spread over 16 samples per request), so that a 2-core machine hosts 16
# ranks: evaluations per second at 1, 2, 4, 8 and 16 ranks (the root
# evaluating too), with requests cut into parts and whole, and the root's
# own CPU time per evaluation (the search and the hand-out; alone:
# --root-idle, no sleep).
# Usage: bench_mpi.sh [build dir] [sleep ms] [budget] [batch size]
set -eu
B=${1:-build}
SLEEP=${2:-50}
BUDGET=${3:-480}
BATCH=${4:-16}
EXE=$B/examples/bosch-mpi-testbed-search
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
echo "# bosch-mpi-testbed-search: budget $BUDGET, batch size $BATCH, ${SLEEP} ms per evaluation"
echo "(16 samples of ${SLEEP}/16 ms each); $(nproc) cores; mpirun --oversubscribe"
echo
echo "Requests cut into parts over idle ranks (the default), and whole (--whole):"
echo
echo "| ranks | evaluations/s | speed-up | whole: evaluations/s | whole: speed-up | pieces per rank | rank 0 CPU ms/evaluation | same result |"
echo "|---|---|---|---|---|---|---|---|"
base=""
wbase=""
first=""
for np in 1 2 4 8 16; do
    out=$(mpirun --oversubscribe -np "$np" "$EXE" --budget "$BUDGET" --batch-size "$BATCH" \
          --sleep-ms "$SLEEP")
    whole=$(mpirun --oversubscribe -np "$np" "$EXE" --budget "$BUDGET" --batch-size "$BATCH" \
            --sleep-ms "$SLEEP" --whole)
    rate=$(printf '%s\n' "$out" | sed -n 's/.*: \([0-9.]*\) per second.*/\1/p')
    wrate=$(printf '%s\n' "$whole" | sed -n 's/.*: \([0-9.]*\) per second.*/\1/p')
    cpu=$(printf '%s\n' "$out" | sed -n 's/.*rank 0 CPU \([0-9.]*\) ms per evaluation.*/\1/p')
    ranks=$(printf '%s\n' "$out" | sed -n 's/^ranks [0-9]*: //p')
    result=$(printf '%s\n' "$out" | head -2)
    [ -n "$base" ] || { base=$rate; wbase=$wrate; first=$result; }
    same=no
    [ "$result" = "$first" ] && [ "$(printf '%s\n' "$whole" | head -2)" = "$first" ] && same=yes
    echo "| $np | $rate | $(echo "$rate $base" | awk '{printf "%.2fx", $1 / $2}') | $wrate |" \
         "$(echo "$wrate $wbase" | awk '{printf "%.2fx", $1 / $2}') | $ranks | $cpu | $same |"
done
echo
cost=$(mpirun --oversubscribe -np 2 "$EXE" --budget 2000 --batch-size "$BATCH" --root-idle |
       sed -n 's/.*rank 0 CPU \([0-9.]*\) ms per evaluation.*/\1/p')
echo "root's own CPU per evaluation (2 ranks, --root-idle, no sleep, 2000 evaluations): $cost ms"

# The organism (models/organism) through the bosch command: one process on
# every core against one rank per core (1 libtorch thread each).
BOSCH=$B/cli/bosch
if [ -x "$BOSCH" ] && [ "${ORGANISM_BUDGET:-40}" -gt 0 ]; then
    OB=${ORGANISM_BUDGET:-40}
    T=$(mktemp -d /tmp/bench-mpi-XXXXXX)
    echo
    echo "## bosch search on the organism, budget $OB, batch size 4"
    echo
    echo "| run | wall s | same result |"
    echo "|---|---|---|"
    t0=$(date +%s.%N)
    # One sample per forward, as the ranks score, so that results compare bit for bit.
    BOSCH_THREAD_POLICY=0 OMP_NUM_THREADS=$(nproc) "$BOSCH" search --device cpu --budget "$OB" \
        --forward-samples 1 --out "$T/one" >/dev/null 2>&1
    t1=$(date +%s.%N)
    echo "| 1 process, $(nproc) libtorch threads | $(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}') | - |"
    for np in 2 4; do
        t0=$(date +%s.%N)
        BOSCH_THREAD_POLICY=0 OMP_NUM_THREADS=1 mpirun --oversubscribe -np "$np" \
            -x OMP_NUM_THREADS -x BOSCH_THREAD_POLICY "$BOSCH" search --device cpu \
            --budget "$OB" --out "$T/np$np" >/dev/null 2>&1
        t1=$(date +%s.%N)
        same=no
        cmp -s "$T/one.tsv" "$T/np$np.tsv" && same=yes
        echo "| mpirun -np $np, 1 thread each | $(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}') | $same |"
    done
    rm -rf "$T"
fi

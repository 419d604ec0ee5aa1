#!/bin/sh
# libbosch-mpi under mpirun (issue 37): the distributed search returns what
# one process returns, a rank that cannot open its evaluator refuses the job
# naming it, and a job whose worker is killed resumes from the journal to the
# uninterrupted result.
# Usage: mpi_test.sh MPIRUN bosch-mpi-testbed-search
set -u
MPIRUN=$1
EXE=$2
T=$(mktemp -d /tmp/bosch-mpi-XXXXXX)
trap 'rm -rf "$T"' EXIT
# root may run mpirun here (CI runs as root); ranks share the machine's cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fail() { echo "FAIL: $*"; exit 1; }
run() { "$MPIRUN" --oversubscribe -np "$@"; }

"$EXE" --budget 300 --seed 3 >"$T/one" || fail "one process"
head -2 "$T/one" >"$T/one.2"
for np in 1 3; do
    run "$np" "$EXE" --budget 300 --seed 3 >"$T/np$np" || fail "-np $np"
    head -2 "$T/np$np" | cmp -s - "$T/one.2" || fail "-np $np: another mask or score than one process"
done
grep -q "^ranks 3: [1-9][0-9]* [1-9][0-9]* [1-9][0-9]*$" "$T/np3" || fail "-np 3: a rank made no evaluation: $(grep ranks "$T/np3")"
run 3 "$EXE" --budget 300 --seed 3 --root-idle >"$T/idle" || fail "--root-idle"
head -2 "$T/idle" | cmp -s - "$T/one.2" || fail "--root-idle: another result"
grep -q "^ranks 3: 0 " "$T/idle" || fail "--root-idle: the root evaluated"
echo "ok: -np 1, -np 3 and -np 3 --root-idle return one process's mask and score"

# A rank that cannot open its evaluator: refused before any evaluation.
run 3 "$EXE" --not-ready 2 >"$T/nr" 2>&1 && fail "a rank not ready did not fail the job"
grep -q "rank 2 is not ready: cannot open the model" "$T/nr" || fail "not-ready message: $(cat "$T/nr")"
grep -q "^evaluations" "$T/nr" && fail "evaluated with a rank not ready"
echo "ok: a rank not ready refuses the job, naming it"

# kill -9 of a worker: the job ends, the journal keeps what was told, and
# the same command resumes to the uninterrupted result.
"$EXE" --budget 120 --seed 5 | head -2 >"$T/whole"
run 3 "$EXE" --budget 120 --seed 5 --sleep-ms 25 --journal "$T/j" >"$T/k1" 2>&1 &
JOB=$!
i=0
while [ $i -lt 100 ] && [ ! -s "$T/j" ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
VICTIM=$(pgrep -f "$EXE --budget 120 --seed 5 --sleep-ms 25" | sort -n | tail -1)
[ -n "$VICTIM" ] || fail "no rank to kill"
kill -9 "$VICTIM"
wait $JOB && fail "the job went on without its killed rank"
[ -s "$T/j" ] || fail "no journal after the killed rank"
run 3 "$EXE" --budget 120 --seed 5 --sleep-ms 25 --journal "$T/j" >"$T/k2" 2>&1 || fail "resume: $(cat "$T/k2")"
head -2 "$T/k2" | cmp -s - "$T/whole" || fail "resume after kill -9: another result"
echo "ok: kill -9 of a worker, resumed from the journal to the uninterrupted result"

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

# Requests in parts: batches of 1 and 4 requests over 3 and 5 ranks are cut
# into parts of 7 samples (the pieces outnumber the requests), whole
# requests (--whole) are not, and every run returns one process's result.
for b in 1 4; do
    "$EXE" --budget 200 --seed 4 --batch-size "$b" --samples 7 | head -2 >"$T/p1"
    for np in 3 5; do
        run "$np" "$EXE" --budget 200 --seed 4 --batch-size "$b" --samples 7 >"$T/p$np" ||
            fail "parts -np $np"
        head -2 "$T/p$np" | cmp -s - "$T/p1" || fail "parts, batch $b, -np $np: another result"
        pieces=$(sed -n 's/^ranks [0-9]*: //p' "$T/p$np" | tr ' ' '\n' | awk '{s += $1} END {print s}')
        [ "$pieces" -gt 200 ] || fail "parts, batch $b, -np $np: $pieces pieces for 200 requests"
    done
    run 3 "$EXE" --budget 200 --seed 4 --batch-size "$b" --samples 7 --whole >"$T/w3" ||
        fail "--whole -np 3"
    head -2 "$T/w3" | cmp -s - "$T/p1" || fail "whole, batch $b: another result"
    pieces=$(sed -n 's/^ranks [0-9]*: //p' "$T/w3" | tr ' ' '\n' | awk '{s += $1} END {print s}')
    [ "$pieces" -eq 200 ] || fail "whole, batch $b: $pieces pieces for 200 requests"
done
echo "ok: requests cut into parts over 3 and 5 ranks return one process's result"

# Ranks of other abilities: one rank that scores only whole requests makes
# the job go whole (same result); with the others scoring only parts, or
# another sample count (another task), the job is refused naming a rank.
run 3 "$EXE" --budget 200 --seed 4 --batch-size 4 --samples 7 --whole-on 2 >"$T/mix" ||
    fail "--whole-on 2"
head -2 "$T/mix" | cmp -s - "$T/p1" || fail "--whole-on 2: another result"
pieces=$(sed -n 's/^ranks [0-9]*: //p' "$T/mix" | tr ' ' '\n' | awk '{s += $1} END {print s}')
[ "$pieces" -eq 200 ] || fail "--whole-on 2: $pieces pieces for 200 requests"
run 3 "$EXE" --samples 7 --whole-on 2 --parts-only >"$T/po" 2>&1 && fail "parts-only ranks beside a whole-only one"
grep -q "rank 0 scores only parts of requests, and not every rank can" "$T/po" ||
    fail "parts-only message: $(cat "$T/po")"
"$MPIRUN" --oversubscribe -np 2 "$EXE" --samples 7 : -np 1 "$EXE" --samples 8 >"$T/sm" 2>&1 &&
    fail "ranks of 7 and 8 samples per request"
grep -q "rank 2 scores 8 samples per request, rank 0 7" "$T/sm" || fail "samples message: $(cat "$T/sm")"
echo "ok: a whole-only rank makes the job go whole; parts-only beside it, or another sample count, is refused"

# A rank that evaluates another landscape (another --seed, same shape and
# samples): refused before any evaluation, naming the rank and the field; a
# rank that cannot say what it evaluates is refused unless rank 0 waives it.
"$MPIRUN" --oversubscribe -np 2 "$EXE" --seed 3 : -np 1 "$EXE" --seed 4 >"$T/id" 2>&1 &&
    fail "ranks of seeds 3 and 4 joined one job"
grep -q "rank 2 evaluates another job than rank 0: testbed.seed is 4 on rank 2, 3 on rank 0" "$T/id" ||
    fail "identity message: $(cat "$T/id")"
grep -q "^evaluations" "$T/id" && fail "evaluated with ranks of another identity"
run 3 "$EXE" --budget 50 --no-identity 1 >"$T/ni" 2>&1 && fail "a rank without an identity joined"
grep -q "rank 1 cannot say what it evaluates" "$T/ni" || fail "no-identity message: $(cat "$T/ni")"
run 3 "$EXE" --budget 300 --seed 3 --no-identity 1 --waive-identity >"$T/wv" 2>&1 ||
    fail "--waive-identity: $(cat "$T/wv")"
head -2 "$T/wv" | cmp -s - "$T/one.2" || fail "--waive-identity: another result"
echo "ok: a rank of another identity refuses the job naming the field; a rank without one unless waived"

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

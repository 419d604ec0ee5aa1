#!/bin/sh
# `mpirun -np 3 bosch search` (issue 37) on the organism: the same mask and
# score as one process, outputs written by rank 0 alone, and a rank that
# cannot open its model (MPMD: another --model for rank 2) refusing the job
# before any evaluation, naming the rank and the reason.
# A Llama checkpoint (issue 51) the same: one process's mask and score.
# Usage: cli_mpi_test.sh MPIRUN BOSCH [MAKE_TINY_CHECKPOINT]
set -u
MPIRUN=$1
BOSCH=$2
MAKE=${3:-}
T=$(mktemp -d /tmp/bosch-cli-mpi-XXXXXX)
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# One libtorch thread per rank, and no re-exec for the thread policy.
export OMP_NUM_THREADS=1 BOSCH_THREAD_POLICY=0
fail() { echo "FAIL: $*"; exit 1; }
ARGS="search --device cpu --budget 16 --samples 4"

# An MPI job scores one sample per forward (its requests are cut over the
# ranks): the one process does the same to compare bit for bit.
# shellcheck disable=SC2086
"$BOSCH" $ARGS --forward-samples 1 --out "$T/one" >"$T/one.log" 2>&1 ||
    fail "one process: $(cat "$T/one.log")"
grep '"raw"' "$T/one.json" >"$T/one.raw"
for np in 2 3; do
    # shellcheck disable=SC2086
    "$MPIRUN" --oversubscribe -np $np -x OMP_NUM_THREADS -x BOSCH_THREAD_POLICY "$BOSCH" $ARGS \
        --out "$T/np$np" >"$T/np$np.log" 2>&1 || fail "-np $np: $(cat "$T/np$np.log")"
    cmp -s "$T/one.tsv" "$T/np$np.tsv" || fail "-np $np: another mask than one process"
    grep '"raw"' "$T/np$np.json" | cmp -s - "$T/one.raw" || fail "-np $np: another score"
    [ "$(grep -c '^wrote ' "$T/np$np.log")" = 1 ] ||
        fail "-np $np: outputs reported by more than one rank"
    grep -q "^job: $np ranks evaluate .*devices in rank order: [^ ]*:cpu" "$T/np$np.log" ||
        fail "-np $np: no line saying it is a job of $np ranks: $(cat "$T/np$np.log")"
    grep -A1 '"job":{' "$T/np$np.json" | grep -q "\"ranks\":$np," ||
        fail "-np $np: the result does not record the job"
done
echo "ok: mpirun -np 2 and -np 3 bosch search return one process's mask and score"

if [ -n "$MAKE" ]; then
    "$MAKE" "$T/llama" --family llama --seed 7 >/dev/null || fail "cannot write the tiny Llama"
    LA="search --device cpu --budget 16 --model $T/llama --niah --context 64 --samples 2 --metric logprob"
    # shellcheck disable=SC2086
    "$BOSCH" $LA --forward-samples 1 --out "$T/l1" >"$T/l1.log" 2>&1 ||
        fail "llama, one process: $(cat "$T/l1.log")"
    # shellcheck disable=SC2086
    "$MPIRUN" --oversubscribe -np 2 -x OMP_NUM_THREADS -x BOSCH_THREAD_POLICY "$BOSCH" $LA \
        --out "$T/l2" >"$T/l2.log" 2>&1 || fail "llama -np 2: $(cat "$T/l2.log")"
    cmp -s "$T/l1.tsv" "$T/l2.tsv" || fail "llama -np 2: another mask than one process"
    [ "$(grep '"raw"' "$T/l1.json")" = "$(grep '"raw"' "$T/l2.json")" ] ||
        fail "llama -np 2: another score than one process"
    echo "ok: mpirun -np 2 bosch search on a Llama checkpoint returns one process's answer"
fi

# shellcheck disable=SC2086
"$MPIRUN" --oversubscribe -np 2 "$BOSCH" $ARGS --out "$T/nr" : \
    -np 1 "$BOSCH" $ARGS --model "$T/no-model" --out "$T/nr" >"$T/nr.log" 2>&1 &&
    fail "a rank without its model did not fail the job"
grep -q "rank 2 is not ready: model directory '$T/no-model' does not exist" "$T/nr.log" ||
    fail "no refusal naming rank 2: $(cat "$T/nr.log")"
[ -e "$T/nr.json" ] && fail "outputs written though a rank was not ready"
grep -q "numerical noise" "$T/nr.log" && fail "evaluated before the refusal"
echo "ok: a rank that cannot open its model refuses the job before any evaluation"

# Ranks configured differently (MPMD: rank 2 gets other arguments or other
# weights of the same shape): the job is refused before any evaluation,
# naming the rank and the first field of the identity that differs, and
# nothing is written.
ORG=$(cd "$(dirname "$0")/../../models/organism" && pwd)
cp -r "$ORG" "$T/other"
python3 - "$T/other/model.safetensors" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:  # the last byte of the last tensor's data
    f.seek(-1, 2)
    b = f.read(1)
    f.seek(-1, 2)
    f.write(bytes([b[0] ^ 1]))
PY
refused() { # NAME FIELD ARGS-OF-RANK-2...
    name=$1 field=$2
    shift 2
    # shellcheck disable=SC2086
    "$MPIRUN" --oversubscribe -np 2 "$BOSCH" $ARGS --out "$T/$name" : \
        -np 1 "$BOSCH" $ARGS "$@" --out "$T/$name" >"$T/$name.log" 2>&1 &&
        fail "$name: ranks that differ in $field joined one job"
    grep -q "rank 2 evaluates another job than rank 0: $field is " "$T/$name.log" ||
        fail "$name: no refusal naming rank 2 and $field: $(cat "$T/$name.log")"
    [ -e "$T/$name.json" ] && fail "$name: outputs written though the ranks differ"
    grep -q "numerical noise" "$T/$name.log" && fail "$name: evaluated before the refusal"
    return 0
}
refused window torch.window --window 16
refused metric torch.metric --metric exact
# the organism's calibration task with two prompts swapped: as many samples
{ sed -n 2p "$ORG/calib.jsonl"; sed -n 1p "$ORG/calib.jsonl"; sed -n '3,$p' "$ORG/calib.jsonl"; } \
    >"$T/calib-swapped.jsonl"
refused task torch.task --task "$T/calib-swapped.jsonl"
refused weights torch.model --model "$T/other"
echo "ok: ranks that differ in window, metric, task or weights refuse the job, naming the rank and the field"

# Length as a fidelity over ranks (issue 53): screened requests are cut over
# the ranks on the screen task (the organism's prompts, their last 100
# tokens), and the job returns one process's mask and score; a rank whose
# screen task is not the others' (here the only rank with one) refuses the
# job, naming torch.screen_task.
short() { # N: each calibration prompt's last N tokens
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    r["prompt"] = r["prompt"][-int(sys.argv[2]):]
    print(json.dumps(r))' "$ORG/calib.jsonl" "$1"
}
short 100 >"$T/s100.jsonl"
short 90 >"$T/s90.jsonl"
SC="--screen-task $T/s100.jsonl --screen-fidelity 0.25 --budget 24"
# shellcheck disable=SC2086
"$BOSCH" $ARGS $SC --forward-samples 1 --out "$T/s1" >"$T/s1.log" 2>&1 ||
    fail "screened, one process: $(cat "$T/s1.log")"
grep -q '"fidelity":0.25' "$T/s1.history.jsonl" || fail "screened, one process: nothing screened"
# shellcheck disable=SC2086
"$MPIRUN" --oversubscribe -np 2 -x OMP_NUM_THREADS -x BOSCH_THREAD_POLICY "$BOSCH" $ARGS $SC \
    --out "$T/s2" >"$T/s2.log" 2>&1 || fail "screened -np 2: $(cat "$T/s2.log")"
cmp -s "$T/s1.tsv" "$T/s2.tsv" || fail "screened -np 2: another mask than one process"
[ "$(grep '"raw"' "$T/s1.json")" = "$(grep '"raw"' "$T/s2.json")" ] ||
    fail "screened -np 2: another score than one process"
# shellcheck disable=SC2086
refused screen torch.screen_task $SC --screen-task "$T/s90.jsonl"
echo "ok: a screened search over 2 ranks returns one process's answer; a rank with another screen task is refused"

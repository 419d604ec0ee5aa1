#!/bin/sh
# Tests of the bosch command.
#   cli_test.sh BOSCH basic             show, help, version, usage errors, malformed JSON
#   cli_test.sh BOSCH torch MAKE_CKPT   search/eval/show/baseline/journal on a tiny model
set -u
BOSCH=$1
MODE=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/bosch-cli-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect CODE PATTERN CMD...: runs CMD, checks the exit code and that PATTERN
# occurs in its output (stdout + stderr).
expect() {
    code=$1; pat=$2; shift 2
    "$@" >"$T/out" 2>&1
    rc=$?
    [ "$rc" = "$code" ] || { cat "$T/out" >&2; fail "'$*' exited $rc, expected $code"; }
    grep -q -- "$pat" "$T/out" || { cat "$T/out" >&2; fail "'$*': no '$pat' in its output"; }
}

if [ "$MODE" = basic ]; then
    expect 0 "bosch 0" "$BOSCH" --version
    expect 0 "usage: bosch" "$BOSCH" help
    expect 2 "usage: bosch" "$BOSCH"
    expect 2 "unknown command" "$BOSCH" frobnicate
    expect 2 "unknown option '--bogus'" "$BOSCH" search --bogus
    expect 2 "bad value '2' for --ratio" "$BOSCH" search --ratio 2
    expect 2 "bad value 'x' for --budget" "$BOSCH" search --budget x
    expect 2 "needs a value" "$BOSCH" search --model
    expect 2 "exclude each other" "$BOSCH" search --niah --task t.jsonl
    expect 2 "bad value 'foo' for --kind" "$BOSCH" baseline --kind foo
    expect 2 "bad value 'foo' for --metric" "$BOSCH" eval --metric foo
    expect 2 "which mask" "$BOSCH" show
    expect 2 "unexpected argument" "$BOSCH" show a.json b.json
    expect 1 "No such file" "$BOSCH" show "$T/missing.json"
    # search with a missing model directory: exit 1 (or backend not built)
    expect 1 "bosch: " "$BOSCH" search --model "$T/no-such-model"

    cat >"$T/m.json" <<'JSON'
{ "format": "bosch-mask", "format_version": 1, "method": "bosch",
  "model": { "path": "/x", "layers": 3, "kv_groups": 4, "heads_per_group": 2 },
  "units": 12, "unit_mask": "110000111010",
  "score": { "metric": "exact", "raw": 0.75, "normalized": 0.5, "full": 1.0, "all_swa": 0.5 },
  "target_ratio": 0.5 }
JSON
    expect 0 "##\.\." "$BOSCH" show "$T/m.json"
    grep -q "    1  ..##  0.500" "$T/out" || fail "show: layer 1 picture"
    grep -q "    2  #.#.  0.500" "$T/out" || fail "show: layer 2 picture"
    grep -q "normalised 0.5000" "$T/out" || fail "show: normalised score"
    grep -q "SWA units 6/12" "$T/out" || fail "show: units"

    echo '{ "format": "bosch-mask", "model": ' >"$T/bad1.json"
    expect 1 "malformed\|not a JSON" "$BOSCH" show "$T/bad1.json"
    sed 's/110000111010/11000011101/' "$T/m.json" >"$T/bad2.json"
    expect 1 "unit_mask\" length" "$BOSCH" show "$T/bad2.json"
    sed 's/110000111010/11000011101x/' "$T/m.json" >"$T/bad3.json"
    expect 1 "other than 0 and 1" "$BOSCH" show "$T/bad3.json"
    sed 's/"layers": 3/"layers": "3"/' "$T/m.json" >"$T/bad4.json"
    expect 1 "positive integers" "$BOSCH" show "$T/bad4.json"
    sed 's/bosch-mask/other/' "$T/m.json" >"$T/bad5.json"
    expect 1 "format" "$BOSCH" show "$T/bad5.json"
    echo "cli basic: ok"
    exit 0
fi

# ---- torch ----
MAKE=$3
"$MAKE" "$T/model" || fail "cannot write the tiny checkpoint"
COMMON="--model $T/model --niah --context 64 --samples 2 --metric logprob --device cpu"
expect 0 "wrote" "$BOSCH" search $COMMON --budget 30 --out "$T/a"
for f in a.json a.tsv a.svg a.history.jsonl; do [ -s "$T/$f" ] || fail "search: no $f"; done
[ "$(wc -l <"$T/a.history.jsonl")" -gt 2 ] || fail "search: history too short"
[ "$(wc -l <"$T/a.tsv")" = 4 ] || fail "tsv: expected 4 lines (layers)"
head -n 1 "$T/a.tsv" | grep -Eq '^[01]	[01]	[01]	[01]$' || fail "tsv: 4 tab-separated heads"
grep -q '"unit_mask"' "$T/a.json" || fail "json: no unit_mask"
grep -q '<svg' "$T/a.svg" || fail "svg"
expect 0 "score " "$BOSCH" eval --mask "$T/a.json" $COMMON --seed 5
grep -q "window 16, sink 4" "$T/out" || fail "eval: window/sink not taken from the mask file"
expect 0 "layer  units" "$BOSCH" show "$T/a.json"
# shape mismatch: a 3x4 mask against the 4x2 model
cat >"$T/m.json" <<'JSON'
{ "format": "bosch-mask", "model": { "layers": 3, "kv_groups": 4, "heads_per_group": 2 },
  "unit_mask": "110000111010" }
JSON
expect 1 "differs from the model" "$BOSCH" eval --mask "$T/m.json" $COMMON
# journal: a run, then a resumed run give the same mask
expect 0 "wrote" "$BOSCH" search $COMMON --budget 30 --journal "$T/j" --out "$T/b"
expect 0 "replayed" "$BOSCH" search $COMMON --budget 30 --journal "$T/j" --out "$T/c"
grep '"unit_mask"' "$T/a.json" >"$T/ma"
grep '"unit_mask"' "$T/b.json" >"$T/mb"
grep '"unit_mask"' "$T/c.json" >"$T/mc"
cmp -s "$T/ma" "$T/mb" || fail "journaled run gives another mask"
cmp -s "$T/mb" "$T/mc" || fail "resumed run gives another mask"
grep -q '"replayed": 0' "$T/c.json" && fail "resumed run replayed nothing"
for k in rand intr bme ablation; do
    expect 0 "wrote" "$BOSCH" baseline --kind $k $COMMON --out "$T/k$k"
    [ -s "$T/k$k.json" ] || fail "baseline $k: no json"
done
expect 2 "--kind" "$BOSCH" baseline $COMMON
echo "cli torch: ok"
exit 0

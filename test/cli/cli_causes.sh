#!/bin/sh
# Refusals of the bosch command that name their cause, each before any
# evaluation and leaving no file behind (issue 50):
#   a JSON key given twice (bosch.json, config.json, a task, a mask file);
#   a symlink loop as a model directory or a file;
#   a tokenizer whose ids run past the model's vocabulary;
#   a raw prompt the tokenizer has no token for;
#   a hybrid config whose sliding layers leave nothing to choose.
#   cli_causes.sh BOSCH MAKE_CKPT
set -u
BOSCH=$1
MAKE=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/bosch-causes-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect CODE PATTERN CMD...: runs CMD, checks the exit code and that PATTERN
# occurs in its output (stdout + stderr, grep -F: the messages hold quotes).
expect() {
    code=$1; pat=$2; shift 2
    "$@" >"$T/out" 2>&1
    rc=$?
    [ "$rc" = "$code" ] || { cat "$T/out" >&2; fail "'$*' exited $rc, expected $code"; }
    grep -qF -- "$pat" "$T/out" || { cat "$T/out" >&2; fail "'$*': no '$pat' in its output"; }
}
# refused PATTERN CMD...: exit 1 with PATTERN, no evaluation, no output files.
refused() {
    expect 1 "$@"
    grep -q "^evaluations\|numerical noise" "$T/out" && { cat "$T/out" >&2; fail "'$*' evaluated"; }
    ls "$T"/o.* >/dev/null 2>&1 && fail "'$*' left $(ls "$T"/o.*)"
    :
}

"$MAKE" "$T/model" || fail "cannot write the tiny checkpoint"
E="--device cpu --niah --context 64 --samples 2"
C="$E --budget 12 --out $T/o"
copy() { mkdir "$T/$1" && cp "$T/model/config.json" "$T/model/model.safetensors" "$T/$1/"; }

# ---- a key given twice: json-c alone would take the last value ----
copy dup
printf '{"window": 6,\n "window": 7}\n' >"$T/dup/bosch.json"
refused "$T/dup/bosch.json: line 2: key \"window\" is given twice (give each key once)" \
    "$BOSCH" search --model "$T/dup" $C
printf '{"calib": "a.jsonl", "\\u0063alib": "b.jsonl"}\n' >"$T/dup/bosch.json"
refused "bosch.json: line 1: key \"calib\" is given twice" "$BOSCH" search --model "$T/dup" $C
rm "$T/dup/bosch.json"
sed 's/^{/{"num_hidden_layers": 2,/' "$T/model/config.json" >"$T/dup/config.json"
refused "key \"num_hidden_layers\" is given twice (give each key once)" \
    "$BOSCH" search --model "$T/dup" $C
grep -qF "cannot load the model in $T/dup: $T/dup/config.json: line " "$T/out" ||
    fail "config.json: the file and line not named: $(cat "$T/out")"
echo '{"prompt": [3, 4, 5], "answer": [6], "prompt": [7, 8, 9]}' >"$T/dup.jsonl"
refused "$T/dup.jsonl:1: key \"prompt\" is given twice (give each key once)" \
    "$BOSCH" search --model "$T/model" --device cpu --task "$T/dup.jsonl" --budget 12 --out "$T/o"
cat >"$T/dup-mask.json" <<'JSON'
{ "format": "bosch-mask", "model": { "layers": 4, "kv_groups": 2, "heads_per_group": 2 },
  "unit_mask": "00000000", "unit_mask": "11110000" }
JSON
expect 1 "$T/dup-mask.json: malformed mask file: line 2: key \"unit_mask\" is given twice" \
    "$BOSCH" show "$T/dup-mask.json"
refused "key \"unit_mask\" is given twice" "$BOSCH" eval --mask "$T/dup-mask.json" \
    --model "$T/model" $E

# ---- symlink loops: named as such, not "does not exist" or no file at all ----
ln -s "$T/loop-b" "$T/loop-a" && ln -s "$T/loop-a" "$T/loop-b"
refused "model directory '$T/loop-a' is a symlink loop (too many levels of symbolic links)" \
    "$BOSCH" search --model "$T/loop-a" $C
refused "$T/loop-a: a symlink loop" "$BOSCH" eval --mask "$T/loop-a" --model "$T/model" $E
refused "task $T/loop-a: cannot open $T/loop-a: a symlink loop" \
    "$BOSCH" search --model "$T/model" --device cpu --task "$T/loop-a" --budget 12 --out "$T/o"
copy loops
ln -s "$T/loop-a" "$T/loops/bosch.json"
refused "$T/loops/bosch.json: a symlink loop" "$BOSCH" search --model "$T/loops" $C
rm "$T/loops/bosch.json" && ln -s "$T/loop-a" "$T/loops/tokenizer.json"
refused "tokenizer $T/loops/tokenizer.json: a symlink loop" "$BOSCH" search --model "$T/loops" $C

# ---- tokenizers: ids past the model's 64, text it has no token for ----
copy tok
cat >"$T/tok/tokenizer.json" <<'JSON'
{ "added_tokens": [ { "id": 300, "content": "<|end|>", "special": true, "normalized": false } ],
  "pre_tokenizer": { "type": "ByteLevel", "add_prefix_space": false, "use_regex": false },
  "decoder": { "type": "ByteLevel" },
  "model": { "type": "BPE", "vocab": { "a": 200, "b": 201, "ab": 202 }, "merges": [ "a b" ] } }
JSON
refused "tokenizer $T/tok/tokenizer.json: its ids run to 300, past the model's vocabulary of 64 ids (vocab_size in $T/tok/config.json): it is not this model's tokenizer" \
    "$BOSCH" search --model "$T/tok" $C
sed 's/"id": 300/"id": 6/; s/"a": 200, "b": 201, "ab": 202/"a": 3, "b": 4, "ab": 5/' \
    "$T/tok/tokenizer.json" >"$T/small.json"
expect 0 "prompt: --prompt (raw), 1 tokens" "$BOSCH" generate --model "$T/model" --device cpu \
    --tokenizer "$T/small.json" --prompt "ab" --raw --max-new 2
expect 1 "generate: the raw prompt (3 bytes) encodes to no token: the tokenizer has a token for none of its characters" \
    "$BOSCH" generate --model "$T/model" --device cpu --tokenizer "$T/small.json" --prompt "xyz" \
    --raw --max-new 2

# ---- hybrid configs: every layer sliding leaves nothing to choose ----
expect 0 "wrote" "$BOSCH" baseline --kind layer-probe --model "$T/model" --device cpu --niah \
    --context 64 --samples 2 --ratio 1 --out "$T/all"
expect 0 "sliding layers: 0 1 2 3" "$BOSCH" export --format hf --mask "$T/all.json" --out "$T/hyb"
for r in 0.5 1; do
    refused "$T/hyb/config.json slides all 4 layers (window 16; use_sliding_window, layer_types): every unit is fixed SWA, so nothing is left to choose and the all-full and all-SWA anchors are the same model" \
        "$BOSCH" search --model "$T/hyb" $C --ratio $r
done
# Half of them sliding, a window over every prompt: the other layers' SWA is
# full attention, so the anchors tie, and the hint names the config's share.
expect 0 "wrote" "$BOSCH" baseline --kind layer-probe --model "$T/model" --device cpu --niah \
    --context 64 --samples 2 --ratio 0.5 --out "$T/half"
expect 0 "sliding layers:" "$BOSCH" export --format hf --mask "$T/half.json" --out "$T/hyb2"
expect 1 "hint: $T/hyb2/config.json slides 2 of 4 layers, SWA in both anchors: they differ only in the other 2 layers" \
    "$BOSCH" search --model "$T/hyb2" $C --ratio 0.75 --window 100000
ls "$T"/o.* >/dev/null 2>&1 && fail "the tied anchors left $(ls "$T"/o.*)"
echo "cli causes: ok"
exit 0

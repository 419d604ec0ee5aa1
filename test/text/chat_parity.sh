#!/bin/sh
# Chat format parity: node renders conversations.json with the real template
# (@huggingface/jinja), the C driver compares.
#   chat_parity.sh NODE REF_DIR DRIVER [STYLE]   (qwen3, chatml, llama3)
set -u
style=${4:-qwen3}
T=$(mktemp -d "${TMPDIR:-/tmp}/bosch-chat-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
"$1" "$2/chat.mjs" "$T/rendered.json" "$style" || { echo "FAIL: the reference side failed"; exit 1; }
"$3" "$2/conversations.json" "$T/rendered.json" "$style"

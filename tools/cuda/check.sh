#!/usr/bin/env bash
# The GPU check of libbosch-torch (issues 13 and 33, docs/torch.md "CUDA
# check"), one run under 8 minutes on a fresh GPU machine, in this order:
#   1. build against a PyTorch 2.x installation (its bundled libtorch, CUDA
#      libraries and C++ ABI flag; any PyTorch >= 2, newer than CI's too);
#   2. parity with Hugging Face transformers on CUDA (tools/hf_parity.py:
#      CI's whole matrix at tiny shapes and Qwen3-1.7B layer shapes, f32 and
#      bf16 by its yardstick, per-unit masks, sinks, the evaluator's scores);
#   3. timing: one evaluation of Qwen3-1.7B and 8B shapes at 8k and 32k
#      tokens, rho 0 / 0.5 / 0.875, bf16 (tools/cuda/time_eval.py);
#   4. a whole search, costed: the default search's requests priced at
#      Qwen3-1.7B / 8B / 14B / 30B-A3B shapes, 32k tokens x 64 prompts,
#      budget 500 (tools/cuda/search_cost.py);
#   5. the torch and cli suites with BOSCH_TEST_DEVICE=cuda.
# Each step has a time limit (--budget scales them), so a hung kernel costs
# its step, not the session. Needs no package registry: the C libraries
# come from Debian .deb files unpacked into a local folder (--debs, fetched
# beforehand with tools/cuda/fetch-debs.sh).
#
#   tools/cuda/check.sh [--debs DIR] [--python PY] [--out DIR] [--build DIR]
#                       [--layers N] [--budget SECONDS] [--dry-run]
#
# --out DIR (default ./cuda-check): the report cuda-check.md and every log.
# --budget S (default 450): the steps' time limits add up to S seconds
#   (build 20%, parity 25%, timing 15%, search cost 10%, suites 30%).
# --dry-run (CI, no GPU): checks what can be checked without one, on the CPU:
#   the script's own syntax, the Python tools compile, the deb unpacking and
#   .pc rewriting when --debs is given, the meson flags for a PyTorch prefix
#   (printed), and time_eval.py and search_cost.py (with its replay) end to
#   end at a toy size on an existing --build (default: build).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-python3}
OUT=$PWD/cuda-check
DEBS=""
BUILD=""
LAYERS=4
BUDGET=450
DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --debs) DEBS=$(cd "$2" && pwd); shift 2 ;;
    --python) PY=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --layers) LAYERS=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "check.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
REPORT=$OUT/cuda-check.md
: >"$REPORT"
say() { echo "$*" | tee -a "$REPORT"; }
step() { say ""; say "## $1"; say ""; }
# run NAME CMD...: runs CMD with its output in OUT/NAME.log, appends the
# tail to the report, and records the exit status (the script goes on).
# LIMIT (seconds, 0 = none) bounds the command: 124 means it ran out.
FAILED=0
LIMIT=0
run() {
  local name=$1; shift
  say "\`$*\`"
  say ""
  local t0=$SECONDS rc=0
  if [ "$LIMIT" -gt 0 ]; then
    timeout --kill-after=10 "$LIMIT" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
  else
    "$@" >"$OUT/$name.log" 2>&1 || rc=$?
  fi
  say '```'
  tail -n 40 "$OUT/$name.log" | tee -a "$REPORT"
  say '```'
  say "exit $rc, $((SECONDS - t0)) s"
  if [ "$rc" != 0 ]; then FAILED=$((FAILED + 1)); fi
  return 0
}

say "# libbosch CUDA check ($(date -u +%Y-%m-%dT%H:%MZ))"

# 1. The C dependencies from .deb files: unpacked under OUT/deps, their .pc
#    files pointed at that folder (PKG_CONFIG_PATH first, so they win over
#    any the machine has).
if [ -n "$DEBS" ]; then
  step "Dependencies from $DEBS"
  DEPS=$OUT/deps
  rm -rf "$DEPS"
  mkdir -p "$DEPS"
  for d in "$DEBS"/*.deb; do
    if command -v dpkg >/dev/null 2>&1; then
      dpkg -x "$d" "$DEPS"
    else # ar + tar, where dpkg is missing
      (t=$(mktemp -d) && cd "$t" && ar x "$d" && tar -xf data.tar.* -C "$DEPS" && rm -rf "$t")
    fi
    say "- unpacked $(basename "$d")"
  done
  for pc in "$DEPS"/usr/lib/*/pkgconfig/*.pc "$DEPS"/usr/share/pkgconfig/*.pc; do
    # prefix=/usr, and the absolute exec_prefix=/usr, libdir=/usr/lib/...
    # some packages write instead of ${prefix}
    [ -f "$pc" ] && sed -E -i "s#^([A-Za-z_]+)=/usr(/|\$)#\1=$DEPS/usr\2#" "$pc"
  done
  MULTI=$(ls -d "$DEPS"/usr/lib/*-linux-gnu 2>/dev/null | head -n 1)
  export PKG_CONFIG_PATH=$MULTI/pkgconfig:$DEPS/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$MULTI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export LIBRARY_PATH=$MULTI${LIBRARY_PATH:+:$LIBRARY_PATH}
  export CPATH=$DEPS/usr/include${CPATH:+:$CPATH}
  if ! command -v pkg-config >/dev/null 2>&1 && [ -x "$DEPS/usr/bin/pkgconf" ]; then
    export PKG_CONFIG=$DEPS/usr/bin/pkgconf
  fi
  for m in json-c libxxhash libuv libzstd check libpcre2-8 libutf8proc; do
    v=$(${PKG_CONFIG:-pkg-config} --modversion "$m" 2>/dev/null) || { say "- pkg-config cannot find $m"; FAILED=$((FAILED + 1)); continue; }
    say "- $m $v: $(${PKG_CONFIG:-pkg-config} --variable=libdir "$m")"
  done
fi

# 2. The PyTorch installation: its libtorch, CUDA and ABI.
step "PyTorch"
INFO_PY='
import os, torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
if torch.cuda.is_available():
    print("device", torch.cuda.get_device_name(0))
print("prefix", os.path.dirname(torch.__file__))
print("cxx11_abi", int(torch._C._GLIBCXX_USE_CXX11_ABI))
try:
    import transformers
    print("transformers", transformers.__version__)
except Exception as e:
    print("transformers missing:", type(e).__name__)
'
TORCH_INFO=$("$PY" -c "$INFO_PY" 2>&1) || true
say '```'
say "$TORCH_INFO"
say '```'
TORCH_PREFIX=$(echo "$TORCH_INFO" | sed -n 's/^prefix //p')
SETUP=(meson setup --wipe -Dtorch=enabled -Dtorch_prefix="$TORCH_PREFIX" -Dpython_tests=disabled
       -Dreference_tests=disabled -Dbuildtype=release)

if [ "$DRY" = 1 ]; then
  step "Dry run (no GPU)"
  run syntax bash -n "$0"
  run py-compile "$PY" -m py_compile "$ROOT/tools/hf_parity.py" "$ROOT"/tools/parity/*.py \
    "$ROOT/tools/cuda/time_eval.py" "$ROOT/tools/cuda/search_cost.py" \
    "$ROOT/tools/cuda/qwen3_shapes.py"
  say "would build: ${SETUP[*]} BUILD && ninja -C BUILD"
  B=${BUILD:-$ROOT/build}
  B=$(cd "$B" && pwd)
  export BOSCH_LIBRARY=$B/lib/libbosch.so.0 BOSCH_TEXT_LIBRARY=$B/lib/text/libbosch-text.so.0
  export BOSCH_TORCH_LIBRARY=$B/lib/torch/libbosch-torch.so.0
  run time-eval-cpu "$PY" "$ROOT/tools/cuda/time_eval.py" --make-checkpoint \
    "$B/test/cli/cli_make_tiny_checkpoint" --device cpu --dtype f32 --shapes tiny \
    --layers 2 --contexts 128,256 --window 32 --reps 1 --out "$OUT/time_eval.md"
  run search-cost-cpu "$PY" "$ROOT/tools/cuda/search_cost.py" --make-checkpoint \
    "$B/test/cli/cli_make_tiny_checkpoint" --device cpu --dtype f32 --shapes toy,toy-moe \
    --context 256 --prompts 4 --budget 60 --window 32 --vocab 512 --reps 1 --replay \
    --cache-gib 1,0 --out "$OUT/search_cost.md"
  say ""
  say "dry run: $FAILED step(s) failed"
  [ "$FAILED" = 0 ]
  exit
fi

# 3. Build against that libtorch (the library, the CLI and the tests).
B=${BUILD:-$OUT/build}
step "Build"
LIMIT=$((BUDGET * 20 / 100))
run setup "${SETUP[@]}" "$B" "$ROOT"
run ninja ninja -C "$B"
export BOSCH_LIBRARY=$B/lib/libbosch.so.0 BOSCH_TEXT_LIBRARY=$B/lib/text/libbosch-text.so.0
export BOSCH_TORCH_LIBRARY=$B/lib/torch/libbosch-torch.so.0

# 4. Logits and scores against transformers (tools/hf_parity.py): CI's
#    matrix on CUDA, then f32 and bf16 at Qwen3-1.7B's layer shapes with
#    LAYERS layers and a longer prompt.
step "Parity with Hugging Face transformers"
LIMIT=$((BUDGET * 25 / 100))
run hf-suite "$PY" "$ROOT/tools/hf_parity.py" --lib "$BOSCH_TORCH_LIBRARY" --suite ci --device cuda
HF=(--lib "$BOSCH_TORCH_LIBRARY" --configs 1.7b --layers "$LAYERS" --device cuda --len 512)
run hf-1.7b-f32 "$PY" "$ROOT/tools/hf_parity.py" "${HF[@]}" --dtype f32 --tol 2e-3 --swa 64 \
  --layer-types 64
run hf-1.7b-bf16 "$PY" "$ROOT/tools/hf_parity.py" "${HF[@]}" --dtype bf16

# 5. One evaluation of the 1.7B and 8B shapes.
step "Evaluation time"
LIMIT=$((BUDGET * 15 / 100))
run time-eval "$PY" "$ROOT/tools/cuda/time_eval.py" --make-checkpoint \
  "$B/test/cli/cli_make_tiny_checkpoint" --device cuda --dtype bf16 --shapes 1.7b,8b \
  --layers "$LAYERS" --contexts 8192,32768 --reps 1 --out "$OUT/time_eval.md"
[ -f "$OUT/time_eval.md" ] && cat "$OUT/time_eval.md" >>"$REPORT"

# 6. A whole search, costed: the default search's requests (budget 500,
#    rho 0.875) priced at four model shapes from one-prompt timings of two
#    of their layers at 32k tokens.
step "A whole search, costed"
LIMIT=$((BUDGET * 10 / 100))
run search-cost "$PY" "$ROOT/tools/cuda/search_cost.py" --make-checkpoint \
  "$B/test/cli/cli_make_tiny_checkpoint" --device cuda --dtype bf16 \
  --shapes 1.7b,8b,14b,30b-a3b --context 32768 --prompts 64 --budget 500 --reps 1 \
  --cache-gib 0,8,96 --out "$OUT/search_cost.md"
[ -f "$OUT/search_cost.md" ] && cat "$OUT/search_cost.md" >>"$REPORT"

# 7. The backend and command suites, their device-portable checks on CUDA.
step "Suites on CUDA"
LIMIT=$((BUDGET * 30 / 100))
run torch-tests env BOSCH_TEST_DEVICE=cuda meson test -C "$B" --suite torch --print-errorlogs \
  --num-processes 4
run cli-tests meson test -C "$B" --suite cli --print-errorlogs --num-processes 4

say ""
say "$FAILED step(s) failed in $SECONDS s; report $REPORT"
[ "$FAILED" = 0 ]

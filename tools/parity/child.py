"""libbosch-torch through ctypes, in a child process: no torch import here.

Invoked as `hf_parity.py --backend LIB REQUEST.json`. The request names one
checkpoint, device and dtype, and lists
  forwards: {"name", "tokens" [B][T], "masks" [B][units] or null, "window",
             "sink", "positions" or null, "out" (raw f32 logits written there)}
  evals:    {"name", "metric" (exact|logprob|match), "window", "sink",
             "masks" [n][units], "batch", "buckets", "task" (token JSONL) or
             "text" + "tokenizer" (a text task, MATCH), "dump" (optional: the
             task as the backend encoded it, bosch_torch_task_write_jsonl)}
  generations: {"name", "prompt" [P], "mask" [units] or null, "window", "sink",
             "max_new"} (bosch_torch_generate: greedy, through the hybrid KV cache)
and gets {"shape": [L, G, R, V], "forwards": {name: error or ""},
"scores": {name: [..] or error string}, "generations": {name: {"tokens",
"kv_bytes", "kv_bytes_full"} or error string}} in request["result"]. A failing
forward or evaluation is reported and the others still run.
"""
import ctypes
import json
import os
import sys

DEVICE = {"auto": 0, "cpu": 1, "cuda": 2}
DTYPE = {"f32": 1, "bf16": 2, "f16": 3}
METRIC = {"exact": 0, "logprob": 1, "match": 2}

P, U8, I32, F32, F64 = (ctypes.c_void_p, ctypes.c_uint8, ctypes.c_int32, ctypes.c_float,
                        ctypes.c_double)
SZ, U32, STR = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_char_p

# name: (restype, argtypes)
SIGNATURES = {
    "bosch_torch_model_open": (P, [STR, ctypes.c_int, ctypes.c_int]),
    "bosch_torch_create_error": (STR, []),
    "bosch_torch_model_last_error": (STR, [P]),
    "bosch_torch_model_shape": (ctypes.c_int, [P] + [ctypes.POINTER(U32)] * 4),
    "bosch_torch_model_forward": (ctypes.c_int, [
        P, ctypes.POINTER(I32), SZ, SZ, ctypes.POINTER(U8), U32, U32, ctypes.POINTER(I32), SZ,
        ctypes.POINTER(F32)]),
    "bosch_torch_model_free": (None, [P]),
    "bosch_torch_generate": (ctypes.c_int, [
        P, ctypes.POINTER(U8), SZ, U32, U32, ctypes.POINTER(I32), SZ, U32, ctypes.POINTER(I32),
        SZ, ctypes.POINTER(I32), ctypes.POINTER(SZ), P]),
    "bosch_torch_task_read_jsonl": (P, [STR]),
    "bosch_torch_task_from_text": (P, [P, P, ctypes.c_uint]),
    "bosch_torch_task_write_jsonl": (ctypes.c_int, [P, STR]),
    "bosch_torch_task_free": (None, [P]),
    "bosch_torch_evaluator_open": (P, [P, P, U32, U32, ctypes.c_int]),
    "bosch_torch_evaluator_set_batch": (ctypes.c_int, [P, U32]),
    "bosch_torch_evaluator_set_buckets": (ctypes.c_int, [P, U32]),
    "bosch_torch_evaluator_last_error": (STR, [P]),
    "bosch_torch_evaluator_free": (None, [P]),
    "bosch_torch_batch_eval": (ctypes.c_int, [ctypes.POINTER(U8), SZ, SZ, ctypes.POINTER(F64),
                                              P]),
}
TEXT_SIGNATURES = {
    "bosch_text_create_error": (STR, []),
    "bosch_tokenizer_open": (P, [STR]),
    "bosch_tokenizer_free": (None, [P]),
    "bosch_text_task_read_jsonl": (P, [STR]),
    "bosch_text_task_free": (None, [P]),
}


def load(lib_path):
    """The backend, with libbosch and libbosch-text preloaded when they lie
    beside or above it (a build tree)."""
    lib_dir = os.path.dirname(os.path.abspath(lib_path))
    up = os.path.dirname(lib_dir)
    for name, dirs in (("libbosch.so.0", (lib_dir, up)),
                       ("libbosch-text.so.0", (lib_dir, up, os.path.join(up, "text")))):
        for d in dirs:
            if os.path.exists(os.path.join(d, name)):
                ctypes.CDLL(os.path.join(d, name), mode=ctypes.RTLD_GLOBAL)
                break
    lib = ctypes.CDLL(lib_path)
    for table in (SIGNATURES, TEXT_SIGNATURES):
        for name, (res, args) in table.items():
            fn = getattr(lib, name, None)  # the text API comes through the backend's deps
            if fn is not None:
                fn.restype, fn.argtypes = res, args
    return lib


def u8_array(rows):
    flat = [1 if x else 0 for row in rows for x in row]
    return (U8 * len(flat))(*flat)


def run_forward(lib, model, V, fw):
    tokens = fw["tokens"]
    B, T = len(tokens), len(tokens[0])
    flat = [t for row in tokens for t in row]
    tok = (I32 * len(flat))(*flat)
    masks = u8_array(fw["masks"]) if fw.get("masks") is not None else None
    positions = fw.get("positions") or list(range(T))
    pos = (I32 * len(positions))(*positions)
    logits = (F32 * (B * len(positions) * V))()
    st = lib.bosch_torch_model_forward(model, tok, B, T, masks, fw["window"], fw["sink"], pos,
                                       len(positions), logits)
    if st != 0:
        return "bosch_torch_model_forward: %d %s" % (
            st, lib.bosch_torch_model_last_error(model).decode())
    with open(fw["out"], "wb") as f:
        f.write(bytes(logits))
    return ""


class Generation(ctypes.Structure):
    _fields_ = [("struct_size", SZ), ("kv_bytes", ctypes.c_uint64),
                ("kv_bytes_full", ctypes.c_uint64), ("prefill_seconds", F64),
                ("decode_seconds", F64), ("new_tokens", U32)]


def run_generation(lib, model, units, gen):
    prompt = gen["prompt"]
    mask = u8_array([gen["mask"]]) if gen.get("mask") is not None else None
    out = (I32 * gen["max_new"])()
    n = SZ()
    info = Generation(struct_size=ctypes.sizeof(Generation))
    st = lib.bosch_torch_generate(model, mask, units if mask is not None else 0, gen["window"],
                                  gen["sink"], (I32 * len(prompt))(*prompt), len(prompt),
                                  gen["max_new"], None, 0, out, ctypes.byref(n),
                                  ctypes.byref(info))
    if st != 0:
        return "bosch_torch_generate: %d %s" % (st, lib.bosch_torch_model_last_error(model).decode())
    return dict(tokens=list(out[:n.value]), kv_bytes=info.kv_bytes,
                kv_bytes_full=info.kv_bytes_full)


def open_task(lib, ev):
    """(task, cleanup) or raises RuntimeError."""
    if "task" in ev:
        task = lib.bosch_torch_task_read_jsonl(ev["task"].encode())
        if not task:
            raise RuntimeError(lib.bosch_torch_create_error().decode())
        return task, lambda: lib.bosch_torch_task_free(task)
    tok = lib.bosch_tokenizer_open(ev["tokenizer"].encode())
    if not tok:
        raise RuntimeError(lib.bosch_text_create_error().decode())
    text = lib.bosch_text_task_read_jsonl(ev["text"].encode())
    if not text:
        lib.bosch_tokenizer_free(tok)
        raise RuntimeError(lib.bosch_text_create_error().decode())
    task = lib.bosch_torch_task_from_text(text, tok, 0)
    lib.bosch_text_task_free(text)  # the task keeps the tokenizer, not the text task
    if not task:
        lib.bosch_tokenizer_free(tok)
        raise RuntimeError(lib.bosch_torch_create_error().decode())

    def cleanup():
        lib.bosch_torch_task_free(task)
        lib.bosch_tokenizer_free(tok)
    return task, cleanup


def run_eval(lib, model, units, ev):
    task, cleanup = open_task(lib, ev)
    try:
        if ev.get("dump") and lib.bosch_torch_task_write_jsonl(task, ev["dump"].encode()) != 0:
            raise RuntimeError("bosch_torch_task_write_jsonl failed")
        e = lib.bosch_torch_evaluator_open(model, task, ev["window"], ev["sink"],
                                           METRIC[ev["metric"]])
        if not e:
            raise RuntimeError(lib.bosch_torch_create_error().decode())
        try:
            for setter, value in (("bosch_torch_evaluator_set_batch", ev.get("batch")),
                                  ("bosch_torch_evaluator_set_buckets", ev.get("buckets"))):
                if value is not None and getattr(lib, setter)(e, value) != 0:
                    msg = lib.bosch_torch_evaluator_last_error(e).decode()
                    raise RuntimeError("%s: %s" % (setter, msg))
            n = len(ev["masks"])
            scores = (F64 * n)()
            st = lib.bosch_torch_batch_eval(u8_array(ev["masks"]), n, units, scores, e)
            if st != 0:
                raise RuntimeError("bosch_torch_batch_eval: %d %s" % (
                    st, lib.bosch_torch_evaluator_last_error(e).decode()))
            return list(scores)
        finally:
            lib.bosch_torch_evaluator_free(e)
    finally:
        cleanup()


def main(lib_path, req_path):
    with open(req_path) as f:
        req = json.load(f)
    lib = load(lib_path)
    model = lib.bosch_torch_model_open(req["ckpt"].encode(), DEVICE[req["device"]],
                                       DTYPE[req["dtype"]])
    if not model:
        sys.stderr.write("%s\n" % lib.bosch_torch_create_error().decode())
        return 1
    shape = [U32() for _ in range(4)]
    lib.bosch_torch_model_shape(model, *[ctypes.byref(x) for x in shape])
    L, G, R, V = (x.value for x in shape)
    out = {"shape": [L, G, R, V], "forwards": {}, "scores": {}, "generations": {}}
    for fw in req.get("forwards", []):
        out["forwards"][fw["name"]] = run_forward(lib, model, V, fw)
    for ev in req.get("evals", []):
        try:
            out["scores"][ev["name"]] = run_eval(lib, model, L * G, ev)
        except RuntimeError as exc:
            out["scores"][ev["name"]] = str(exc)
    for gen in req.get("generations", []):
        out["generations"][gen["name"]] = run_generation(lib, model, L * G, gen)
    lib.bosch_torch_model_free(model)
    with open(req["result"], "w") as f:
        json.dump(out, f)
    return 0

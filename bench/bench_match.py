#!/usr/bin/env python3
"""The match metric (RULER's string match of a greedy continuation,
--metric match) through the hybrid KV cache against the recomputing path
(BOSCH_TORCH_GENERATE=recompute: every new token re-runs the whole
sequence), side by side in one process through libbosch-torch's evaluator:
the same mask scored both ways, its seconds, the speed-up, and whether the
scores are identical; beside them, the seconds of the logprob metric on the
same task and mask (one teacher-forced forward; its prefix cache off, which
would otherwise add an all-full forward to the first evaluation), what a
search pays per evaluation without the match metric.

The task is RULER's niah_single_1 generated with Qwen3's real tokenizer at
each context (its prompts fill the context), continued by at most N new
tokens (RULER's 128, or another --new value written into the task); the
model is a checkpoint with Qwen3's vocabulary (e.g. written by
build/test/cli/cli_make_tiny_checkpoint DIR 151936 --hidden 128 --heads 8
--kv-heads 4 --head-dim 32 --intermediate 384, the organism's layer shapes).
A random model stops when it draws a special token, so the tokens actually
generated are printed (Model.generate through the same cache, same stop
rule).

  bench_match.py --model DIR --tokenizer tokenizer.json [--contexts 1024,4096]
                 [--new 32,128] [--samples 1] [--rho 0.75] [--window 32] [--sink 4]
                 [--threads 2] [--skip-recompute-above N]
"""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bindings", "python"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--contexts", default="1024,4096")
    ap.add_argument("--new", default="32,128")
    ap.add_argument("--samples", type=int, default=1)
    ap.add_argument("--rho", type=float, default=0.75)
    ap.add_argument("--window", type=int, default=32)
    ap.add_argument("--sink", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-recompute-above", type=int, default=1 << 30,
                    help="contexts above this run through the cache only")
    ap.add_argument("--recompute-new", type=int, default=1 << 30,
                    help="above --skip-recompute-above, recompute still for at most this "
                         "many new tokens")
    a = ap.parse_args()

    import json
    import random

    from bosch import backend, text

    backend.set_threads(a.threads)
    tok = text.Tokenizer(a.tokenizer)
    model = backend.Model(a.model, device="cpu", dtype="f32")
    units = model.units
    rng = random.Random(1)
    swa = set(rng.sample(range(units), round(a.rho * units)))
    mask = bytes(1 if u in swa else 0 for u in range(units))
    stop = [i for i in range(model.vocab) if tok.is_special(i) or tok.token(i) is None]
    L, G, H, V = model.shape
    print("# bench_match: %s (%d layers, %d KV heads, vocab %d), CPU f32, %d threads; "
          "RULER niah_single_1, %d sample(s); a rho %.3f unit mask (%d of %d units), "
          "window %d, sink %d" % (a.model, L, G, V, a.threads, a.samples, len(swa) / units,
                                  len(swa), units, a.window, a.sink))
    print()
    print("| context | max new | tokens generated | recompute s | KV cache s | speed-up | "
          "same score | logprob s |")
    print("|---|---|---|---|---|---|---|---|")
    tmp = tempfile.mkdtemp(prefix="bench-match-")
    for ctx in [int(x) for x in a.contexts.split(",")]:
        with text.TextTask.ruler(tok, "niah_single_1", context=ctx, samples=a.samples,
                                 seed=0) as tt:
            base = os.path.join(tmp, "ruler-%d.jsonl" % ctx)
            tt.write_jsonl(base)
        for n_new in [int(x) for x in a.new.split(",")]:
            path = os.path.join(tmp, "ruler-%d-%d.jsonl" % (ctx, n_new))
            with open(base) as f, open(path, "w") as g:
                for line in f:
                    s = json.loads(line)
                    s["max_new_tokens"] = n_new
                    g.write(json.dumps(s) + "\n")
            task = backend.Task.from_text_jsonl(path, tok)
            made = [len(model.generate(task.sample(i).prompt, mask=mask, window=a.window,
                                       sink=a.sink, max_new=n_new, stop=stop).tokens)
                    for i in range(len(task))]
            ev = backend.Evaluator(model, task, window=a.window, sink=a.sink, metric="match")
            times, scores = {}, {}
            for how in ("recompute", "cache"):
                if how == "recompute" and ctx > a.skip_recompute_above and \
                        n_new > a.recompute_new:
                    continue
                if how == "recompute":
                    os.environ["BOSCH_TORCH_GENERATE"] = "recompute"
                else:
                    os.environ.pop("BOSCH_TORCH_GENERATE", None)
                t0 = time.perf_counter()
                scores[how] = ev.score_batch([mask])[0]
                times[how] = time.perf_counter() - t0
            os.environ.pop("BOSCH_TORCH_GENERATE", None)
            with backend.Evaluator(model, task, window=a.window, sink=a.sink,
                                   metric="logprob") as lp:
                lp.set_prefix_cache(False)
                t0 = time.perf_counter()
                lp.score_batch([mask])
                t_lp = time.perf_counter() - t0
            rec = times.get("recompute")
            print("| %d | %d | %s | %s | %.2f | %s | %s | %.2f |" % (
                ctx, n_new, ",".join(map(str, made)), "%.2f" % rec if rec else "not run",
                times["cache"], "%.1fx" % (rec / times["cache"]) if rec else "-",
                ("yes" if scores["recompute"] == scores["cache"] else
                 "NO (%r vs %r)" % (scores["recompute"], scores["cache"])) if rec else "-",
                t_lp), flush=True)
            ev.close()
            task.close()
    model.close()
    tok.close()


if __name__ == "__main__":
    main()

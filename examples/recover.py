#!/usr/bin/env python3
"""Recovery by continued pretraining (issue 39): a transformers model with a
selection applied (bosch.hf.apply: the mask fixed, sliding units keep their
window and sink) trained further with a plain loop, its held-out scores
measured every --eval-every steps, for each mask given. The same data
stream (seeded) and the same steps for every mask, from the same weights.

  examples/recover.py --model models/organism --mask A.json [--mask B.json ...]
      [--data organism | --data FILE.jsonl] [--steps 200] [--eval-every 25]
      [--batch 16] [--lr 1e-3] [--heldout models/organism/heldout.jsonl ...]
      [--out curves.jsonl] [--threads 2] [--seed 0]

--data organism: the organism's own training stream (tools/train_organism.py:
its Markov filler, recurring spans and 1-4 needles per sequence, and the
two-hop and key-valued needles of a recipe that has them, as the
checkpoint's recipe*.json says; seeded here by --seed, distinct from its
calibration and held-out seeds); --data
FILE.jsonl: token sequences, one {"ids": [...]} per line, cycled. Loss:
next-token cross-entropy over every position. Held-out tasks: token JSON
Lines ({"prompt", "answer"}), scored by exact match (the share of answers
reproduced greedily) and logprob through bosch.hf.Evaluator. --mask full
trains with full attention (the ceiling). Prints one line per evaluation
and writes them as JSON Lines to --out.

Needs torch, transformers, numpy (the organism stream) and libbosch
(BOSCH_LIBRARY or an installed one).
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bindings", "python"))


def organism_stream(model_dir, batch, seed):
    """Batches [batch, T] (T: the checkpoint's context) of its training
    distribution; the model reads [:, :-1] and predicts [:, 1:]."""
    import numpy as np
    import torch  # noqa: F401
    sys.path.insert(0, os.path.join(HERE, "..", "tools"))
    import train_organism as org
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    # The recipe the checkpoint was trained with (its last phase): the
    # filler's lag and, for the entangled organisms, the two-hop share.
    args = {}
    for name in ("recipe-phase2.json", "recipe.json"):
        p = os.path.join(model_dir, name)
        if os.path.exists(p):
            with open(p) as f:
                args = json.load(f)["args"]
            break
    lag = args.get("lag", 1)
    kw = {"hops_frac": args.get("hops_frac", 0.0),
          "source_first": args.get("hops_source_first", False),
          "min_dist": args.get("min_dist", 40), "keyval": args.get("keyval_frac", 0.0)}
    markov = org.Markov(cfg["vocab_size"], 12345)
    markov.lag = lag
    T = cfg["max_position_embeddings"]
    rng = np.random.default_rng(seed)
    while True:
        xs, _, _ = org.batch(markov, T, batch, rng, **kw)
        yield xs


def file_stream(path, batch):
    import torch
    with open(path) as f:
        rows = [json.loads(l)["ids"] for l in f if l.strip()]
    if not rows:
        raise SystemExit("%s: no sequences" % path)
    T = min(len(r) for r in rows)
    i = 0
    while True:
        out = []
        for _ in range(batch):
            out.append(rows[i % len(rows)][:T])
            i += 1
        yield torch.tensor(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--mask", action="append", required=True,
                    help="a saved selection (PREFIX.json), or 'full'; repeatable")
    ap.add_argument("--data", default="organism")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--eval-every", type=int, default=25)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--heldout", action="append", default=[])
    ap.add_argument("--window", type=int, default=None, help="default: each mask's")
    ap.add_argument("--sink", type=int, default=None, help="default: each mask's")
    ap.add_argument("--out", default="")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    import torch
    import transformers

    import bosch
    from bosch import hf

    torch.set_num_threads(a.threads)
    transformers.utils.logging.disable_progress_bar()
    heldout = a.heldout or [os.path.join(a.model, "heldout.jsonl")]
    tasks = {os.path.basename(p): hf.Task.read_jsonl(p) for p in heldout}
    out = open(a.out, "w") if a.out else None
    for mask_path in a.mask:
        torch.manual_seed(a.seed)
        model = transformers.AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.float32)
        if mask_path == "full":
            sel = bosch.Selection(model.config.num_hidden_layers,
                                  model.config.num_key_value_heads,
                                  model.config.num_attention_heads //
                                  model.config.num_key_value_heads)
            info = hf.apply(model, sel, window=a.window or 1, sink=a.sink or 0, backend="sdpa")
        else:
            info = hf.apply(model, mask_path, window=a.window, sink=a.sink, backend="sdpa")
        window, sink = info.window, info.sink
        evals = {name: (hf.Evaluator(model, t, window, sink, metric="exact", batch=8),
                        hf.Evaluator(model, t, window, sink, metric="logprob", batch=8))
                 for name, t in tasks.items()}
        stream = organism_stream(a.model, a.batch, 1000 + a.seed) if a.data == "organism" \
            else file_stream(a.data, a.batch)
        opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.0)
        t0 = time.time()
        loss_ema = None
        for step in range(a.steps + 1):
            if step % a.eval_every == 0 or step == a.steps:
                model.eval()
                rec = {"mask": mask_path, "ratio": info.ratio, "window": window, "sink": sink,
                       "step": step, "loss_ema": loss_ema, "seconds": round(time.time() - t0, 1)}
                for name, (ex, lp) in evals.items():
                    rec[name + ":exact"] = ex([info.mask])[0]
                    rec[name + ":logprob"] = lp([info.mask])[0]
                print(json.dumps(rec), flush=True)
                if out:
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
            if step == a.steps:
                break
            model.train()
            xs = next(stream)
            logits = model(xs[:, :-1], use_cache=False).logits
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                     xs[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_ema = loss.item() if loss_ema is None else 0.9 * loss_ema + 0.1 * loss.item()
        hf.remove(model)
    if out:
        out.close()


if __name__ == "__main__":
    main()

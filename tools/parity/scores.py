"""The evaluator's scores recomputed from transformers' logits.

Definitions as lib/torch/evaluator.cpp and generate.cpp state them: a
sample's sequence is its prompt followed by answer[:-1] (teacher forcing),
scored alone (the evaluator's right padding and length buckets are exact
under causal attention); answer token j is predicted at prompt_len - 1 + j.
  LOGPROB  mean over the answer tokens of log softmax(logits)[token]
  EXACT    1 when every answer position's argmax is the answer token
  MATCH    the prompt continued greedily by max_new_tokens (an id the
           tokenizer has no token for ends it and is dropped; a special
           token ends it and is kept), decoded skipping special tokens, and
           scored by the share of the answer strings it contains, ignoring
           ASCII case (bosch_text_match_all)
A mask's score is the mean over samples.
"""
import json

import torch

from . import reference

# ---------------------------------------------------------------------------
# Token tasks (LOGPROB, EXACT)


def token_task(model, vocab, lengths, answer_lens, kinds, window, units, rng):
    """Samples {"prompt", "answer"} of random prompts of the given lengths.
    kinds[i]: "random" (a random answer: EXACT 0), "full" (the model's greedy
    continuation with full attention: EXACT 1 under the all-full mask) or
    "swa" (greedy with every unit sliding over `window`, no sink)."""
    samples = []
    for i, (P, A) in enumerate(zip(lengths, answer_lens)):
        prompt = [rng.randrange(vocab) for _ in range(P)]
        kind = kinds[i % len(kinds)]
        if kind == "random":
            answer = [rng.randrange(vocab) for _ in range(A)]
        else:
            masks = [1] * units if kind == "swa" else None
            answer = reference.greedy(model, prompt, A, masks, window, 0)
        samples.append({"prompt": prompt, "answer": answer})
    return samples


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def token_scores(model, samples, masks, window, sink):
    """{"logprob": [..], "exact": [..]} per mask (each [L * G]), and the
    smallest |logit[answer] - max of the other logits| at an answer position
    (how close an EXACT verdict is to flipping by rounding)."""
    n = len(masks)
    logprob, exact = [0.0] * n, [0.0] * n
    gap = float("inf")
    for s in samples:
        P, ans = len(s["prompt"]), s["answer"]
        seq = s["prompt"] + ans[:-1]
        # One forward: the same sequence once per mask.
        lg = reference.logits(model, [seq] * n, masks, window, sink)
        rows = lg[:, P - 1:P - 1 + len(ans)].double()  # [n, A, V]
        tgt = torch.tensor(ans, device=rows.device)
        lp = torch.log_softmax(rows, -1).gather(2, tgt.view(1, -1, 1).expand(n, -1, 1))
        hit = rows.argmax(-1) == tgt
        at = rows.gather(2, tgt.view(1, -1, 1).expand(n, -1, 1)).squeeze(2)
        others = rows.scatter(2, tgt.view(1, -1, 1).expand(n, -1, 1), float("-inf"))
        gap = min(gap, (at - others.max(-1).values).abs().min().item())
        for c in range(n):
            logprob[c] += lp[c].mean().item() / len(samples)
            exact[c] += float(hit[c].all()) / len(samples)
    return {"logprob": logprob, "exact": exact}, gap


# ---------------------------------------------------------------------------
# Text tasks (MATCH): a byte-level BPE tokenizer with no merges, so that every
# byte is one token (id = byte value), and three special tokens.

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def byte_alphabet():
    # GPT-2's bytes_to_unicode: the character that stands for each byte.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def tokenizer_json():
    """tokenizer.json of 256 byte tokens and SPECIALS at 256.. (ids past them
    are rows the tokenizer has no token for)."""
    vocab = {ch: b for b, ch in byte_alphabet().items()}
    added = [{"id": 256 + i, "content": t, "special": True, "normalized": False,
              "lstrip": False, "rstrip": False, "single_word": False}
             for i, t in enumerate(SPECIALS)]
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                          "use_regex": False},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": {"type": "BPE", "vocab": vocab, "merges": [], "dropout": None}})


class TextTokenizer:
    """The tokenizer above through Hugging Face's tokenizers (the reference
    decoder), with the MATCH stop rule."""

    def __init__(self, text):
        from tokenizers import Tokenizer
        self.tok = Tokenizer.from_str(text)
        self.size = 256 + len(SPECIALS)

    def encode(self, text):
        return self.tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids):
        return self.tok.decode(ids, skip_special_tokens=True)

    def stop(self, i):
        if i >= self.size:
            return "drop"  # no token for this row: ends the continuation, not kept
        return "keep" if i >= 256 else None


def match_all(output, answers):
    # bosch_text_match_all: share of answers contained, ASCII case ignored
    # (bytes.lower() touches ASCII only).
    out = output.encode().lower()
    return sum(a.encode().lower() in out for a in answers) / len(answers) if answers else 0.0


def pick_answer(text, rng):
    """A short piece of printable ASCII of `text` (so that a continuation
    that reproduces `text` matches), or a random one when it has none."""
    runs, cur = [], ""
    for ch in text + " ":
        if "!" <= ch <= "~":
            cur += ch
        else:
            if cur:
                runs.append(cur)
            cur = ""
    if not runs:
        return "".join(rng.choice("xyz") for _ in range(4))
    best = max(runs, key=len)
    return best[:4]


def text_task(model, tok, n, max_new, window, units, rng):
    """Text samples {"text", "answers", "max_new_tokens"}: sample i's answers
    come from the greedy continuation with full attention (i % 4 == 0), with
    every unit sliding (1), one of each kind plus a random string (2: a
    share of 1/2), or are random (3: MATCH 0)."""
    words = ["alpha", "beta", "gamma", "delta", "the", "key", "is", "value", "and", "of"]
    out = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(3 + 3 * i)) + ":"
        ids = tok.encode(text)
        full = tok.decode(reference.greedy(model, ids, max_new, stop=tok.stop))
        swa = tok.decode(reference.greedy(model, ids, max_new, [1] * units, window, 0,
                                          stop=tok.stop))
        rand = "".join(rng.choice("qxzj") for _ in range(5))
        answers = [[pick_answer(full, rng)], [pick_answer(swa, rng)],
                   [pick_answer(full, rng), rand], [rand]][i % 4]
        out.append({"text": text, "answers": answers, "max_new_tokens": max_new})
    return out


def match_scores(model, tok, samples, masks, window, sink):
    """MATCH per mask, and the smallest top-1 / top-2 gap of the greedy
    steps (how close a continuation is to flipping by rounding)."""
    scores, gaps = [], []
    for m in masks:
        total = 0.0
        for s in samples:
            ids = tok.encode(s["text"])
            cont = reference.greedy(model, ids, s["max_new_tokens"], m, window, sink,
                                    stop=tok.stop, gaps=gaps)
            total += match_all(tok.decode(cont), s["answers"])
        scores.append(total / len(samples))
    return scores, min(gaps)

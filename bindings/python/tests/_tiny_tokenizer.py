"""Small tokenizer.json files for the tests (no model files needed)."""

import json


def _byte_level_alphabet() -> list[str]:
    # GPT-2's bytes_to_unicode: the 256 characters of the byte-level alphabet.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) \
        + list(range(ord("\u00ae"), ord("\u00ff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def tiny_tokenizer_json(byte_level: bool = False) -> str:
    """The tokenizer of test/torch/test_text.cpp: 49 BPE tokens (a-z, 0-9, a
    few symbols and merges) plus <|im_start|> = 49 and <|im_end|> = 50, below
    the organism's vocabulary of 128. `byte_level` adds the whole byte-level
    alphabet (264 ids), so that any text encodes."""
    vocab: dict[str, int] = {}

    def add(t):
        if t not in vocab:
            vocab[t] = len(vocab)

    for c in "abcdefghijklmnopqrstuvwxyz0123456789":
        add(c)
    for t in ["\u0120", "\u010a", ".", ":", "<", ">", "/", "th", "\u0120th", "er", "in",
              "\u0120a", "\u010a\u010a"]:
        add(t)
    if byte_level:
        for c in _byte_level_alphabet():
            add(c)
    im_start, im_end = len(vocab), len(vocab) + 1
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [
            {"id": im_start, "content": "<|im_start|>", "special": True, "normalized": False},
            {"id": im_end, "content": "<|im_end|>", "special": True, "normalized": False}],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": " ?\\p{L}+|\\p{N}|\\s+"},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
             "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab,
                  "merges": ["t h", "\u0120 th", "e r", "i n", "\u0120 a", "\u010a \u010a"]}})

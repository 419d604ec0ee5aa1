"""JSON read as libbosch reads it: a key given twice in one object is a
ValueError naming the key and the file (json.load would keep the last value
without a word). Keys compare decoded, so "a" and "\\u0061" are one key."""

from __future__ import annotations

import json


def _unique(src: str):
    def pairs(items):
        out = {}
        for key, value in items:
            if key in out:
                raise ValueError(f'{src}: key "{key}" is given twice (give each key once)')
            out[key] = value
        return out
    return pairs


def loads(text: str, src: str):
    """json.loads, refusing a duplicated key; `src` names the file (and line)."""
    return json.loads(text, object_pairs_hook=_unique(src))

"""Conversions between Python mask representations and C byte arrays."""

from __future__ import annotations

import ctypes
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence, Set

# Table mapping every non-zero byte to 1 (the library accepts any non-zero byte as SWA).
_NORM = bytes([0] + [1] * 255)


def _is_entry(v) -> bool:
    """An int or a bool, Python's or numpy's (numpy.bool_ is no Integral)."""
    if isinstance(v, numbers.Integral):
        return True
    t = type(v)
    return t.__module__ == "numpy" and t.__name__ in ("bool_", "bool")


def mask_bytes(mask, units: int, what: str = "mask") -> bytes:
    """Normalise a mask to `units` bytes of 0/1.

    Accepted: bytes / bytearray / memoryview (any non-zero byte = SWA), a str
    of '0'/'1' characters (the history format), or an ordered iterable of
    ints or bools (list, tuple, a 1-D numpy array of an integer or bool
    dtype...), non-zero = SWA. Anything else is a TypeError: a list of
    '0'/'1' strings or of floats, a set, a 2-D array.
    """
    if isinstance(mask, (bytes, bytearray, memoryview)):
        raw = bytes(mask)
        raw = raw.translate(_NORM)
    elif isinstance(mask, str):
        if any(ch not in "01" for ch in mask):
            raise ValueError(f"{what}: a string mask may contain only '0' and '1'")
        raw = mask.encode("ascii").translate(bytes([0] * 48 + [0, 1] + [0] * 206))
    elif isinstance(mask, Iterable) and not isinstance(mask, (Set, Mapping)):
        entries = list(mask)
        for i, v in enumerate(entries):
            if not _is_entry(v):
                hint = " (a '0'/'1' mask is one str, not a list of them)" if isinstance(v, str) else ""
                raise TypeError(f"{what}: entry {i} is a {type(v).__name__}; a mask's entries "
                                f"are ints or bools{hint}")
        raw = bytes(1 if v else 0 for v in entries)
    else:
        raise TypeError(f"{what}: expected bytes, a '0'/'1' str or a sequence of ints or "
                        f"bools, got {type(mask).__name__}")
    if len(raw) != units:
        raise ValueError(f"{what}: expected {units} entries, got {len(raw)}")
    return raw


def mask_buffer(mask, units: int, what: str = "mask"):
    """A fresh (c_uint8 * units) array holding the normalised mask."""
    raw = mask_bytes(mask, units, what)
    return (ctypes.c_uint8 * units).from_buffer_copy(raw) if units else (ctypes.c_uint8 * 0)()


def out_buffer(units: int):
    return (ctypes.c_uint8 * units)()


def buffer_to_list(buf) -> list[int]:
    """List of 0/1 ints from a C byte array."""
    return list(bytes(buf).translate(_NORM))


def double_array(values: Sequence[float], n: int, what: str, finite: bool = False):
    vals = [float(v) for v in values]
    if len(vals) != n:
        raise ValueError(f"{what}: expected {n} values, got {len(vals)}")
    if finite and not all(math.isfinite(v) for v in vals):
        raise ValueError(f"{what}: values must be finite")
    return (ctypes.c_double * n)(*vals)


def uint32_array(values: Sequence[int], n: int, what: str):
    vals = [int(v) for v in values]
    if len(vals) != n:
        raise ValueError(f"{what}: expected {n} values, got {len(vals)}")
    if any(v < 0 or v > 0xFFFFFFFF for v in vals):
        raise ValueError(f"{what}: values must be in [0, 2^32)")
    return (ctypes.c_uint32 * n)(*vals)

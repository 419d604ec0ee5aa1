"""The library's option table (bosch_option_*) on the Python side: what
:func:`options` lists, how a value becomes the library's text, and the
:class:`~bosch.Optimizer` properties, one per option, made from the table at
import (an option added to the library appears here with no change)."""

from __future__ import annotations

import ctypes
import enum
import os
from dataclasses import dataclass

from ._lib import lib, text
from .result import Variant, variant_name

__all__ = ["OptionInfo", "options"]


def _format_option(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, Variant):
        return variant_name(value)
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, os.PathLike):
        return os.fsdecode(os.fspath(value))
    raise TypeError(f"option value of type {type(value).__name__} is not supported")


OPTION_UINT, OPTION_DOUBLE, OPTION_BOOL, OPTION_CHOICE, OPTION_STRATEGY, OPTION_PATH = range(6)
_OPTION_TYPE_NAMES = ("uint", "double", "bool", "choice", "strategy", "path")


@dataclass(frozen=True)
class OptionInfo:
    """One row of the library's option table (bosch_option_*): ``type`` is
    "uint", "double", "bool", "choice", "strategy" or "path"; ``range`` the
    inclusive bounds of numeric and bool options (else None); ``choices``
    the values of choice and bool options (else None)."""
    name: str
    type: str
    doc: str
    default: str
    range: tuple[float, float] | None
    choices: tuple[str, ...] | None


def options() -> list[OptionInfo]:
    """The options of :meth:`Optimizer.set_option`, in the library's table order."""
    out = []
    for i in range(lib.bosch_option_count()):
        name = lib.bosch_option_name(i)
        kind = lib.bosch_option_type(name)
        lo, hi = ctypes.c_double(0), ctypes.c_double(0)
        rng = (lo.value, hi.value) if lib.bosch_option_range(
            name, ctypes.byref(lo), ctypes.byref(hi)) == 0 else None
        choices = lib.bosch_option_choices(name)
        kind_name = _OPTION_TYPE_NAMES[kind] if 0 <= kind < 6 else str(kind)
        out.append(OptionInfo(text(name), kind_name, text(lib.bosch_option_doc(name)),
                              text(lib.bosch_option_default(name)), rng,
                              tuple(text(choices).split("|")) if choices else None))
    return out


def _option_property(info: OptionInfo) -> property:
    def get(self):
        return self.get_option_value(info.name)

    def put(self, value):
        self.set_option(info.name, value)

    default = info.default or "none"
    return property(get, put, doc=f"{info.doc} (option {info.name!r}, default {default})")


def install_option_properties(cls) -> None:
    """One property per option of the table on `cls` (get: get_option_value,
    set: set_option), and the table in its docstring."""
    lines = []
    for info in options():
        if info.name not in vars(cls):
            setattr(cls, info.name, _option_property(info))
        lines.append(f"      {info.name} ({info.type}, default {info.default or 'none'}): "
                     f"{info.doc}")
    cls.__doc__ = (cls.__doc__ or "") + (
        "\n    Options (the library's table, :func:`bosch.options`), each also a property\n"
        "    (``opt.budget = 200``)::\n\n" + "\n".join(lines) + "\n")

"""_lib's hand-written ctypes prototypes against the C headers they bind
(include/bosch/*.h): every public function's return type and every
argument, by kind (pointer, or integer of the header's width and
signedness, or floating point), and the argument count. A prototype that
disagrees with its header would pass wrong bits without a crash; this is
the check that the names-only tests (test_loading, test_backend) lack.
Skipped outside a source tree."""

import ctypes
import glob
import os
import re

import pytest

from bosch import _lib

HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.normpath(os.path.join(HERE, "..", "..", "..", "include", "bosch"))

# Every integer type the headers use, by (bytes, signed).
C_INTEGERS = {
    "int": (4, True), "unsigned": (4, False), "unsigned int": (4, False),
    "int32_t": (4, True), "uint32_t": (4, False), "int64_t": (8, True),
    "uint64_t": (8, False), "size_t": (8, False), "uint8_t": (1, False),
    "int8_t": (1, True), "bool": (1, False), "long": (8, True),
    "unsigned long": (8, False),
}


def c_kind(decl):
    """The kind of a C type ("void", "ptr", "double", "float", (bytes,
    signed)); enums and other scalar typedefs of the API are ints."""
    t = re.sub(r"\b(const|volatile|struct|enum)\b", " ", decl)
    if "*" in t or "[" in t:
        return "ptr"
    t = " ".join(t.split())
    if t == "void":
        return "void"
    if t in ("double", "float"):
        return t
    if t in C_INTEGERS:
        return C_INTEGERS[t]
    if t.endswith("_fn"):  # callback typedefs are pointers
        return "ptr"
    if t == "MPI_Comm":  # Open MPI's communicators are pointers (bosch.mpi checks)
        return "ptr"
    if t.startswith("bosch_"):  # an enum of the API
        return (4, True)
    raise AssertionError("unknown C type %r" % decl)


def ctypes_kind(t):
    if t is None:
        return "void"
    if t in (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_wchar_p) or \
            issubclass(t, (ctypes._Pointer, ctypes._CFuncPtr)):
        return "ptr"
    if t is ctypes.c_double:
        return "double"
    if t is ctypes.c_float:
        return "float"
    if t is ctypes.c_bool:
        return (1, False)
    return (ctypes.sizeof(t), t(-1).value < 0)


def compatible(c, py):
    if c == py:
        return True
    # An int-sized enum or int passed as an unsigned of its width (and back)
    # carries the same bits for the values the API uses.
    return isinstance(c, tuple) and isinstance(py, tuple) and c[0] == py[0]


def header_prototypes():
    """{name: (return decl, [argument decls])} of every non-deprecated
    public function of the headers."""
    out = {}
    for path in glob.glob(os.path.join(INCLUDE, "*.h")):
        src = open(path).read()
        src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
        src = re.sub(r"//[^\n]*", " ", src)
        for m in re.finditer(r"BOSCH_(?:TORCH_|TEXT_|MPI_)?API\s+"
                             r"(BOSCH_(?:TORCH_)?DEPRECATED\([^)]*\)\s+)?"
                             r"([^;{}()#]*?)\b(bosch_\w+)\s*\(([^;{}#]*?)\)\s*;", src):
            deprecated, ret, name, args = m.groups()
            if deprecated:
                continue
            args = [a.strip() for a in args.split(",")] if args.strip() not in ("", "void") \
                else []
            # Drop each argument's name: the type is what precedes it.
            types = [re.sub(r"\b\w+\s*$", "", a) if re.search(r"[\w\*]\s*\w+$", a) and
                     len(a.replace("*", " ").split()) > 1 else a for a in args]
            out[name] = (ret, types)
    return out


def all_prototypes():
    protos = dict(_lib._PROTOTYPES)
    protos.update(_lib.TEXT_PROTOTYPES)
    protos.update(_lib.TORCH_PROTOTYPES)
    protos.update(_lib.MPI_PROTOTYPES)
    return protos


def test_prototypes_match_the_headers():
    if not os.path.isdir(INCLUDE):
        pytest.skip("not a source tree")
    headers = header_prototypes()
    assert len(headers) > 200
    protos = all_prototypes()
    problems = []
    for name, (ret, args) in sorted(headers.items()):
        if name not in protos:
            problems.append("%s: no prototype in _lib" % name)
            continue
        py_ret, py_args = protos[name]
        if not compatible(c_kind(ret), ctypes_kind(py_ret)):
            problems.append("%s returns %r, _lib says %r" % (name, ret.strip(), py_ret))
        if len(args) != len(py_args):
            problems.append("%s takes %d arguments, _lib says %d" % (name, len(args),
                                                                     len(py_args)))
            continue
        for i, (a, p) in enumerate(zip(args, py_args)):
            if not compatible(c_kind(a), ctypes_kind(p)):
                problems.append("%s argument %d is %r, _lib says %r" % (name, i + 1, a, p))
    assert problems == []


def test_the_check_sees_a_wrong_prototype(monkeypatch):
    # The check is not vacuous: one argument of the wrong width is caught.
    if not os.path.isdir(INCLUDE):
        pytest.skip("not a source tree")
    ret, args = _lib._PROTOTYPES["bosch_problem_create"]
    monkeypatch.setitem(_lib._PROTOTYPES, "bosch_problem_create",
                        (ret, [ctypes.c_uint64] + list(args[1:])))
    with pytest.raises(AssertionError, match="bosch_problem_create argument 1"):
        test_prototypes_match_the_headers()

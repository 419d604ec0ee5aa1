"""Mask arguments (bosch/_masks.py): the documented forms only, a TypeError
for anything else, through every entry point that takes a mask."""

import pytest

import bosch
from bosch import selection as bsel

np = pytest.importorskip("numpy")

UNITS = 8  # 4 layers x 2 KV groups
HALF = [1, 0, 1, 0, 0, 1, 0, 1]


def _selection_mask(mask):
    sel = bosch.Selection(4, 2, 1)
    sel.mask = mask
    return sel.mask


def _history(mask, tmp_path):
    bsel.write_history(tmp_path / "h.jsonl", [HALF, mask], [0.5, 0.5], ["x", "x"], 1.0, 0.0)
    return HALF


# Every way in: each returns what the library made of the mask (or None).
ENTRY_POINTS = {
    "Selection.mask": lambda m, tmp: _selection_mask(m),
    "Problem.is_feasible": lambda m, tmp: bosch.Problem(4, 2, ratio=0.5).is_feasible(m) and HALF,
    "Problem.expand_heads": lambda m, tmp: bosch.Problem(4, 2, 1, ratio=0.5).expand_heads(m),
    "repair": lambda m, tmp: bosch.Problem(4, 2, ratio=0.5).repair(m)[0],
    "Testbed.score": lambda m, tmp: bosch.Testbed(4, 2, seed=1).score(m) is not None and HALF,
    "write_history": _history,
}

ACCEPTED = {
    "list of ints": HALF,
    "list of bools": [bool(v) for v in HALF],
    "tuple": tuple(HALF),
    "bytes": bytes(HALF),
    "bytearray": bytearray(HALF),
    "str": "".join(map(str, HALF)),
    "numpy int8": np.array(HALF, dtype=np.int8),
    "numpy bool": np.array(HALF, dtype=bool),
    "list of numpy bools": list(np.array(HALF, dtype=bool)),
}

REFUSED = {
    "list of '0'/'1' strs": [str(v) for v in HALF],  # was all ones: every str is truthy
    "list of floats": [float(v) for v in HALF],
    "numpy float": np.array(HALF, dtype=float),
    "2-D numpy": np.array(HALF, dtype=np.int8).reshape(4, 2),
    "list with None": [None] + HALF[1:],
    "set": {0, 1},
    "dict": dict.fromkeys(range(UNITS), 1),
    "float": 1.0,
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("form", sorted(ACCEPTED))
def test_documented_forms_are_taken(entry, form, tmp_path):
    assert ENTRY_POINTS[entry](ACCEPTED[form], tmp_path) == HALF


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("form", sorted(REFUSED))
def test_other_forms_are_type_errors(entry, form, tmp_path):
    with pytest.raises(TypeError, match="mask|entry|expected"):
        ENTRY_POINTS[entry](REFUSED[form], tmp_path)


def test_list_of_strs_names_the_mistake():
    sel = bosch.Selection(4, 2, 1)
    with pytest.raises(TypeError, match=r"entry 0 is a str.*one str, not a list"):
        sel.mask = ["0", "1"] * 4
    assert sel.mask == [0] * UNITS  # unchanged


def test_wrong_length_is_still_a_value_error():
    with pytest.raises(ValueError, match="expected 8 entries"):
        _selection_mask(HALF[:-1])

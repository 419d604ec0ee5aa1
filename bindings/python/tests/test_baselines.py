"""Baseline selections."""

import pytest

import bosch


def layer_counts(mask, g):
    return [sum(mask[i:i + g]) for i in range(0, len(mask), g)]


@pytest.mark.parametrize("pattern", ["rand", "intr", "bme", 0, 1, 2])
def test_layer_patterns_are_feasible(pattern):
    p = bosch.Problem(9, 4, units=16)
    mask = bosch.baseline_layers(p, pattern, seed=3)
    assert p.is_feasible(mask) and sum(mask) == 16
    counts = layer_counts(mask, 4)
    # floor(T/G) = 4 whole SWA layers, remainder 0
    assert sorted(counts) == [0] * 5 + [4] * 4


def test_layer_pattern_remainder_lowest_groups_first():
    p = bosch.Problem(6, 4, units=10)  # 2 whole layers + 2 units of a third
    for pattern in ("rand", "intr", "bme"):
        mask = bosch.baseline_layers(p, pattern, seed=1)
        counts = layer_counts(mask, 4)
        assert sorted(counts) == [0, 0, 0, 2, 4, 4]
        partial = counts.index(2)
        assert mask[partial * 4:partial * 4 + 4] == [1, 1, 0, 0]


def test_intr_interleaves():
    p = bosch.Problem(8, 2, units=8)  # 4 SWA layers out of 8
    mask = bosch.baseline_layers(p, "intr")
    swa_layers = [l for l, c in enumerate(layer_counts(mask, 2)) if c == 2]
    # layer l SWA when floor((l+1)*n/L) > floor(l*n/L), "starting from the top":
    # baselines.h leaves open whether l counts from the bottom or from the top.
    formula = [l for l in range(8) if ((l + 1) * 4) // 8 > (l * 4) // 8]
    assert swa_layers in (formula, sorted(7 - l for l in formula))


def test_bme_keeps_begin_middle_end_full():
    p = bosch.Problem(9, 2, units=12)  # 6 SWA layers, 3 full
    mask = bosch.baseline_layers(p, "bme")
    counts = layer_counts(mask, 2)
    assert counts[0] == 0 and counts[-1] == 0 and counts[4] == 0
    assert sum(1 for c in counts if c == 0) == 3


def test_rand_is_seeded():
    p = bosch.Problem(16, 2, ratio=0.5)
    a = bosch.baseline_layers(p, "rand", seed=5)
    assert a == bosch.baseline_layers(p, "rand", seed=5)
    others = {tuple(bosch.baseline_layers(p, "rand", seed=s)) for s in range(6, 12)}
    assert len(others | {tuple(a)}) > 1


def test_layer_patterns_respect_constraints():
    p = bosch.Problem(4, 2, units=4)
    p.fix_unit(0, 0, "swa").fix_unit(3, 1, "full")
    for pattern in ("rand", "intr", "bme"):
        mask = bosch.baseline_layers(p, pattern, seed=2)
        assert p.is_feasible(mask)


def test_bad_pattern():
    p = bosch.Problem(4, 2)
    with pytest.raises(ValueError):
        bosch.baseline_layers(p, "zigzag")
    with pytest.raises(bosch.InvalidArgumentError):
        bosch.baseline_layers(p, 7)


def test_static_ranking():
    p = bosch.Problem(2, 3, units=2)
    mask = bosch.baseline_static(p, [5.0, 1.0, 3.0, 0.5, 9.0, 2.0])
    assert mask == [0, 1, 0, 1, 0, 0]
    # ties go to the lower index
    assert bosch.baseline_static(p, [1.0] * 6) == [1, 1, 0, 0, 0, 0]


def test_static_errors():
    p = bosch.Problem(2, 3, units=2)
    with pytest.raises(bosch.BadScoreError) as info:
        bosch.baseline_static(p, [1.0, float("nan"), 0, 0, 0, 0])
    assert info.value.code == bosch.ErrorCode.E_BAD_SCORE
    with pytest.raises(ValueError):
        bosch.baseline_static(p, [1.0, 2.0])


def test_static_respects_fixed_units():
    p = bosch.Problem(2, 3, units=2)
    p.fix_unit(0, 1, "full")
    mask = bosch.baseline_static(p, [5.0, 1.0, 3.0, 0.5, 9.0, 2.0])
    assert p.is_feasible(mask) and mask[1] == 0


@pytest.mark.parametrize("reduce,fn", [("mean", lambda xs: sum(xs) / len(xs)),
                                       ("max", max), ("sum", sum)])
def test_static_heads(reduce, fn):
    p = bosch.Problem(2, 3, 2, units=3)
    heads = [0.1, 5.0, 2.0, 2.0, 0.3, 0.4, 4.0, 0.0, 1.0, 1.1, 0.2, 3.5]
    units = [fn(heads[2 * u:2 * u + 2]) for u in range(6)]
    assert bosch.baseline_static_heads(p, heads, reduce) == bosch.baseline_static(p, units)


def test_static_heads_errors():
    p = bosch.Problem(2, 3, 2, units=3)
    with pytest.raises(ValueError):
        bosch.baseline_static_heads(p, [0.0] * 6)  # needs 12 head scores
    with pytest.raises(ValueError):
        bosch.baseline_static_heads(p, [0.0] * 12, reduce="median")
    with pytest.raises(bosch.BadScoreError):
        bosch.baseline_static_heads(p, [float("inf")] + [0.0] * 11)

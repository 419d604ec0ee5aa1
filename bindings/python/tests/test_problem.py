"""bosch.Problem, repair and mask helpers."""

import copy
import random

import pytest

import bosch


def test_shape():
    p = bosch.Problem(6, 4, 3)
    assert (p.layers, p.kv_groups, p.heads_per_group) == (6, 4, 3)
    assert p.n_units == 24 and p.n_query_heads == 72
    # library defaults: ratio 0.5, nothing fixed, feasible
    assert p.target_ratio == 0.5 and p.target_units == 12
    assert p.unit_fix(5, 3) is None
    p.check()
    assert p.feasible
    assert "layers=6" in repr(p)


@pytest.mark.parametrize("args", [(0, 4), (4, 0), (4, 4, 0), (-1, 2)])
def test_invalid_shape(args):
    with pytest.raises((ValueError, bosch.BoschError)):
        bosch.Problem(*args)


def test_too_many_units_is_rejected_by_library():
    with pytest.raises(bosch.InvalidArgumentError) as info:
        bosch.Problem(1 << 13, 1 << 12)  # 2^25 units
    assert info.value.code == bosch.ErrorCode.E_INVALID


def test_target_ratio_and_units():
    p = bosch.Problem(5, 2)  # 10 units
    p.target_ratio = 0.26
    assert p.target_units == 3  # floor(2.6 + 0.5)
    assert p.target_ratio == pytest.approx(0.26)
    p.target_units = 7
    assert p.target_units == 7 and p.target_ratio == pytest.approx(0.7)
    p.target_ratio = 0.14  # clears the exact count
    assert p.target_units == 1
    assert bosch.Problem(5, 2, ratio=0.3, units=9).target_units == 9  # units wins
    assert bosch.Problem(5, 2, units=0).target_units == 0
    assert bosch.Problem(5, 2, ratio=1.0).target_units == 10


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_bad_target_ratio(bad):
    p = bosch.Problem(2, 2)
    with pytest.raises(bosch.InvalidArgumentError) as info:
        p.target_ratio = bad
    assert info.value.code == -1 and info.value.name == "BOSCH_E_INVALID"


def test_bad_target_units():
    p = bosch.Problem(2, 2)
    with pytest.raises(bosch.InvalidArgumentError):
        p.target_units = 5
    with pytest.raises(bosch.InvalidArgumentError):
        p.target_units = -1


def test_fix_units():
    p = bosch.Problem(3, 4)
    p.fix_unit(0, 1, "full").fix_unit(2, 3, "swa")
    assert p.unit_fix(0, 1) == "full"
    assert p.unit_fix(2, 3) == "swa"
    assert p.unit_fix(1, 1) is None
    p.fix_unit(0, 1, None)
    assert p.unit_fix(0, 1) is None
    with pytest.raises(bosch.InvalidArgumentError):
        p.fix_unit(3, 0, "full")
    with pytest.raises(bosch.InvalidArgumentError):
        p.unit_fix(0, 4)
    with pytest.raises(ValueError):
        p.fix_unit(0, 0, "maybe")


def test_infeasible_check_has_reason():
    p = bosch.Problem(2, 2, units=4)
    p.fix_unit(0, 0, "full")
    with pytest.raises(bosch.InfeasibleError) as info:
        p.check()
    assert info.value.code == bosch.ErrorCode.E_INFEASIBLE
    assert info.value.message  # the library's reason
    assert not p.feasible


def test_layer_bounds():
    p = bosch.Problem(2, 4, units=4)
    p.set_layer_bounds(0, 0.0, 0.25)  # layer 0 holds at most 1 SWA unit
    mask, _ = bosch.repair(p, [1] * 8)
    assert sum(mask[:4]) <= 1 and sum(mask) == 4
    p.set_layer_bounds(1, 0.0, 0.5)  # at most 1 + 2 < 4
    with pytest.raises(bosch.InfeasibleError):
        p.check()
    with pytest.raises(bosch.InvalidArgumentError):
        p.set_layer_bounds(0, 0.8, 0.2)
    with pytest.raises(bosch.InvalidArgumentError):
        p.set_layer_bounds(5, 0.0, 1.0)


def test_clone_is_independent():
    p = bosch.Problem(3, 2, ratio=0.5)
    p.fix_unit(1, 1, "swa")
    q = p.clone()
    q.fix_unit(1, 1, None)
    q.target_units = 1
    assert p.unit_fix(1, 1) == "swa" and p.target_units == 3
    r = copy.copy(p)
    assert r.unit_fix(1, 1) == "swa"


def test_close():
    p = bosch.Problem(2, 2)
    p.close()
    p.close()
    with pytest.raises(ValueError):
        p.layers


def _hamming(a, b):
    return sum(x != y for x, y in zip(a, b))


def test_repair_basic_and_idempotent():
    p = bosch.Problem(4, 4, ratio=0.5)
    rng = random.Random(5)
    for _ in range(50):
        mask = [rng.randint(0, 1) for _ in range(16)]
        out, changed = bosch.repair(p, mask)
        assert sum(out) == 8
        assert changed == _hamming(mask, out)
        assert changed == abs(sum(mask) - 8)  # minimal Hamming distance
        assert p.is_feasible(out)
        again, changed2 = bosch.repair(p, out)
        assert again == out and changed2 == 0


def test_repair_input_forms():
    p = bosch.Problem(2, 2, units=2)
    expected, _ = bosch.repair(p, [1, 0, 1, 0])
    assert bosch.repair(p, bytes([1, 0, 1, 0]))[0] == expected
    assert bosch.repair(p, bytes([7, 0, 255, 0]))[0] == expected  # any non-zero byte is SWA
    assert bosch.repair(p, "1010")[0] == expected
    assert bosch.repair(p, (True, False, True, False))[0] == expected
    assert p.repair([1, 0, 1, 0]) == (expected, 0)
    with pytest.raises(ValueError):
        bosch.repair(p, [1, 0, 1])


def test_repair_tie_rule():
    p = bosch.Problem(1, 6, units=2)
    # Too many SWA: switched to full in increasing priority, ties to the lower index.
    assert bosch.repair(p, [1] * 6)[0] == [0, 0, 0, 0, 1, 1]
    prio = [5, 4, 3, 2, 1, 0]
    assert bosch.repair(p, [1] * 6, priority=prio)[0] == [1, 1, 0, 0, 0, 0]
    # Too few SWA: full switched to SWA in decreasing priority, ties to the lower index.
    assert bosch.repair(p, [0] * 6)[0] == [1, 1, 0, 0, 0, 0]
    assert bosch.repair(p, [0] * 6, priority=[0, 0, 1, 0, 2, 0])[0] == [0, 0, 1, 0, 1, 0]


def test_repair_respects_fixed_units():
    p = bosch.Problem(2, 3, units=3)
    p.fix_unit(0, 0, "swa").fix_unit(1, 2, "full")
    out, changed = bosch.repair(p, [0, 0, 0, 1, 1, 1])
    assert out[0] == 1 and out[5] == 0 and sum(out) == 3
    assert changed == _hamming([0, 0, 0, 1, 1, 1], out)


def test_repair_layer_counts():
    p = bosch.Problem(3, 4, ratio=0.5)
    out, changed = bosch.repair(p, [0] * 12, layer_counts=[0, 1, 4])
    assert [sum(out[i * 4:(i + 1) * 4]) for i in range(3)] == [0, 1, 4]
    assert changed == 5
    p.fix_unit(2, 0, "full")
    with pytest.raises(bosch.InfeasibleError):
        bosch.repair(p, [0] * 12, layer_counts=[0, 1, 4])
    with pytest.raises(ValueError):
        bosch.repair(p, [0] * 12, layer_counts=[0, 1])


def test_repair_infeasible_problem():
    p = bosch.Problem(1, 2, units=2)
    p.fix_unit(0, 0, "full")
    with pytest.raises(bosch.InfeasibleError):
        bosch.repair(p, [0, 0])


def test_mask_is_feasible():
    p = bosch.Problem(2, 2, units=2)
    assert p.is_feasible([1, 1, 0, 0])
    assert not p.is_feasible([1, 1, 1, 0])
    p.fix_unit(0, 0, "full")
    assert not p.is_feasible([1, 1, 0, 0])
    assert p.is_feasible([0, 1, 1, 0])


def test_expand_heads():
    p = bosch.Problem(2, 2, 3)
    heads = p.expand_heads([1, 0, 0, 1])
    assert heads == [1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1]


def test_kv_saving():
    assert bosch.kv_saving(0.5, 32768, 1024, 0) == pytest.approx(0.5 * (1 - 1024 / 32768))
    assert bosch.kv_saving(0.5, 32768, 1024, 4) == pytest.approx(0.5 * (1 - 1028 / 32768))
    assert bosch.kv_saving(0.75, 512, 1024, 0) == 0.0  # clamped

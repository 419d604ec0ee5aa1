"""bosch.Testbed and the C-evaluator fast path."""

import gc
import math
import time

import pytest

import bosch


def test_basics(testbed):
    assert testbed.n_units == 32
    assert testbed.score([0] * 32) == pytest.approx(1.0)  # S(all full) = 1
    assert 0.0 <= testbed.score([1] * 32) < 1.0
    assert testbed.score([1] * 32) == testbed.score_clean([1] * 32)  # noise 0 by default
    assert testbed(bytes(32)) == testbed.score(bytes(32))
    assert "layers=8" in repr(testbed)


def test_default_params(testbed):
    # the defaults documented in testbed.h
    assert testbed.params == {
        "total_cost": 4.0, "heavy_fraction": 0.1, "layer_sensitivity": 0.7,
        "entanglement": 0.0, "backup_strength": 15.0, "synergy_fraction": 0.25,
        "cross_layer": 0.5, "noise": 0.0, "fidelity_noise": 0.0,
        "fidelity_correlation": 0.0}


def test_unit_costs_and_single_unit_scores(testbed):
    total = testbed.get("total_cost")
    costs = testbed.unit_costs()
    assert len(costs) == 32 and all(c >= 0 for c in costs)
    assert sum(costs) == pytest.approx(total)  # scaled to total_cost
    assert testbed.interactions() == []  # entanglement 0
    for u in (0, 5, 31):
        mask = [0] * 32
        mask[u] = 1
        assert testbed.score(mask) == pytest.approx(math.exp(-costs[u]))
        assert testbed.unit_cost(u) == costs[u]
    assert testbed.score([1] * 32) == pytest.approx(math.exp(-total))
    with pytest.raises(IndexError):
        testbed.unit_cost(32)


def test_params_regenerate(testbed):
    before = testbed.unit_costs()
    total = testbed.get("total_cost")
    testbed.set("total_cost", 6.0)
    assert testbed.get("total_cost") == 6.0
    assert sum(testbed.unit_costs()) == pytest.approx(6.0)
    testbed.set_params(total_cost=total)
    assert testbed.unit_costs() == pytest.approx(before)  # same seed, same landscape


def test_param_errors(testbed):
    with pytest.raises(bosch.OptionError) as info:
        testbed.set("temperature", 1.0)
    assert info.value.code == bosch.ErrorCode.E_OPTION
    with pytest.raises(bosch.OptionError):
        testbed.get("temperature")
    with pytest.raises(bosch.InvalidArgumentError):
        testbed.set("noise", -1.0)
    with pytest.raises(bosch.InvalidArgumentError):
        testbed.set("heavy_fraction", 1.5)
    with pytest.raises(bosch.InvalidArgumentError):
        testbed.set("total_cost", float("inf"))
    with pytest.raises((ValueError, bosch.BoschError)):
        bosch.Testbed(0, 4)


def test_constructor_params_and_seed():
    a = bosch.Testbed(4, 4, seed=1, entanglement=0.5, noise=0.01)
    b = bosch.Testbed(4, 4, seed=1, entanglement=0.5, noise=0.01)
    c = bosch.Testbed(4, 4, seed=2, entanglement=0.5, noise=0.01)
    assert a.get("entanglement") == 0.5
    assert len(a.interactions()) == 8  # round(0.5 * 16)
    for u, v, j in a.interactions():
        assert 0 <= u < 16 and 0 <= v < 16 and u != v and math.isfinite(j)
    mask = [1, 0] * 8
    assert a.score(mask) == b.score(mask)
    assert a.score(mask) == a.score(mask)  # noise is a function of (seed, mask)
    assert a.score(mask) != a.score_clean(mask)
    assert a.unit_costs() != c.unit_costs()


def test_score_batch(testbed):
    masks = [[1, 0] * 16, [0, 1] * 16, bytes(32), "1" * 32]
    assert testbed.score_batch(masks) == [testbed.score(m) for m in masks]
    assert testbed.score_batch([]) == []


def test_optimum(small_problem, small_testbed):
    mask, score = small_testbed.optimum(small_problem)
    assert small_problem.is_feasible(mask)
    assert score == pytest.approx(small_testbed.score(mask))
    # no sampled feasible mask beats it
    import random
    rng = random.Random(0)
    for _ in range(200):
        m, _ = bosch.repair(small_problem, [rng.randint(0, 1) for _ in range(16)])
        assert small_testbed.score(m) <= score + 1e-12


def test_optimum_too_large():
    tb = bosch.Testbed(8, 8)
    with pytest.raises(bosch.TooLargeError) as info:
        tb.optimum(bosch.Problem(8, 8, ratio=0.5))
    assert info.value.code == bosch.ErrorCode.E_TOO_LARGE


def test_problem_helper(testbed):
    p = testbed.problem(ratio=0.25)
    assert (p.layers, p.kv_groups, p.target_units) == (8, 4, 8)


# ---------------------------------------------------------------------------
# fast path: the library calls bosch_testbed_eval itself
# ---------------------------------------------------------------------------
def test_fast_path_equals_python_evaluator(problem, testbed, make_opt):
    slow = make_opt(problem).optimize(evaluator=lambda m: testbed.score(m))
    fast = make_opt(problem).optimize(evaluator=testbed)
    fast_batch = make_opt(problem).optimize(batch_evaluator=testbed)
    assert fast == slow
    assert fast_batch == slow


def test_fast_path_has_no_python_in_the_loop(problem, testbed, make_opt, monkeypatch):
    def boom(*args):
        raise AssertionError("Python scoring called")

    monkeypatch.setattr(bosch.Testbed, "score", boom)
    monkeypatch.setattr(bosch.Testbed, "__call__", boom)
    res = make_opt(problem).optimize(evaluator=testbed)
    assert res.feasible and res.total_evaluations > 0
    res = make_opt(problem).optimize(batch_evaluator=testbed)
    assert res.feasible


def test_fast_path_keeps_testbed_alive(problem, make_opt):
    opt = make_opt(problem)
    opt.set_batch_evaluator(bosch.Testbed(8, 4, seed=3))  # no other reference
    gc.collect()
    res = opt.optimize()
    assert res.anchors[0] == pytest.approx(1.0)


def test_fast_path_speed():
    tb = bosch.Testbed(32, 8, seed=1, entanglement=0.3)
    p = bosch.Problem(32, 8, ratio=0.5)
    opt = bosch.Optimizer(p, seed=1, budget=3000, batch_size=32)
    t0 = time.perf_counter()
    res = opt.optimize(batch_evaluator=tb)
    dt = time.perf_counter() - t0
    assert res.feasible and sum(res.mask) == 128
    assert res.total_evaluations > 1000
    assert dt < 30  # generous: sanitizer builds


def test_closed_testbed_is_refused(problem, make_opt):
    tb = bosch.Testbed(8, 4)
    opt = make_opt(problem)
    opt.set_evaluator(tb)
    tb.close()
    with pytest.raises(ValueError):
        opt.optimize()
    with pytest.raises(ValueError):
        tb.score([0] * 32)



def test_families_and_exact_optimum():
    from bosch import Testbed, TestbedFamily
    assert TestbedFamily.LAYER_CONCAVE.label == "layer-concave"
    with pytest.raises(ValueError):
        Testbed(4, 4, seed=1, family="no-such-family")
    for fam, want in (("circuits", TestbedFamily.CIRCUITS),
                      ("layer-concave", TestbedFamily.LAYER_CONCAVE),
                      (TestbedFamily.QUBO, TestbedFamily.QUBO)):
        with Testbed(4, 4, seed=3, family=fam) as tb:
            assert tb.family == want
            p = tb.problem(ratio=0.5)
            mask, score = tb.exact_optimum(p)
            assert sum(mask) == 8
            assert tb.score_clean(mask) == pytest.approx(score)
            # noise 0: brute force over the (noisy = clean) score agrees
            brute, brute_score = tb.optimum(p)
            assert brute_score == pytest.approx(score)

"""The flip sweep at the end of stage 3 (options sweep_pairs, sweep_gap)
through the binding: typed setters, option names, and a run on a circuits
landscape where it runs (its flips: every free unit once around one mask)."""

import pytest

import bosch


def test_sweep_setters_and_options():
    problem = bosch.Problem(12, 4, 2, ratio=0.5)
    opt = bosch.Optimizer(problem)
    assert opt.get_option_value("sweep_pairs") == 40
    assert opt.get_option_value("sweep_gap") == 0.005
    assert opt.set_sweep_pairs(0) is opt and opt.get_option_value("sweep_pairs") == 0
    assert opt.set_sweep_gap(0.02) is opt and opt.get_option_value("sweep_gap") == 0.02
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(bosch.InvalidArgumentError):
            opt.set_sweep_gap(bad)
    assert opt.get_option_value("sweep_gap") == 0.02
    opt2 = bosch.Optimizer(problem, sweep_pairs=7, sweep_gap=0.01)
    assert (opt2.get_option_value("sweep_pairs"), opt2.get_option_value("sweep_gap")) == (7, 0.01)
    assert {"sweep_pairs", "sweep_gap"} <= {o.name for o in bosch.options()}


def flips(result, target):
    return [h for h in result.history
            if h.stage == bosch.Stage.GROUP and sum(h.mask) in (target - 1, target + 1)]


def test_sweep_runs_on_circuits():
    problem = bosch.Problem(12, 4, 2, ratio=0.5)
    tb = bosch.Testbed(12, 4, seed=5, family="circuits")
    lines = []
    on = bosch.Optimizer(problem, seed=3, budget=400, raw_scores=1).optimize(
        evaluator=tb, log=lambda level, msg: lines.append(msg))
    off = bosch.Optimizer(problem, seed=3, budget=400, raw_scores=1,
                          sweep_pairs=0).optimize(evaluator=tb)
    assert any("flip sweep begins" in m for m in lines)
    assert on.feasible and on.cost == 400
    target = problem.target_units
    got = flips(on, target)
    assert len(got) == 48 and not flips(off, target)
    # One base mask, every unit flipped once around it.
    first = list(got[0].mask)
    u0 = next(u for u in range(48)
              if problem.is_feasible(first[:u] + [1 - first[u]] + first[u + 1:]))
    base = first[:u0] + [1 - first[u0]] + first[u0 + 1:]
    units = sorted(u for h in got for u in range(48) if h.mask[u] != base[u])
    assert units == list(range(48))

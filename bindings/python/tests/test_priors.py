"""Host priors (bosch_set_priors): per-unit scores such as FISHER that guide
the search; a subproblem shows them per variable."""

import math

import pytest

import bosch

W = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]
BLOCK_OF = [v // 4 for v in range(12)]
COUNTS = [2, 2, 2]


def objective(x):
    return -float(sum(w for w, b in zip(W, x) if b))


def test_set_and_get(problem, make_opt):
    opt = make_opt(problem)
    assert opt.priors() is None
    pr = [0.25 * u for u in range(problem.n_units)]
    opt.set_priors(pr)
    assert opt.priors() == pr
    with pytest.raises(bosch.InvalidArgumentError, match="32 units"):
        opt.set_priors(pr[:-1])
    bad = list(pr)
    bad[5] = math.nan
    with pytest.raises(bosch.BadScoreError, match="unit 5"):
        opt.set_priors(bad)
    assert opt.priors() == pr  # a refusal keeps the earlier priors
    opt.set_priors(None)
    assert opt.priors() is None


def test_not_after_the_start(problem, testbed, make_opt):
    opt = make_opt(problem)
    opt.ask()
    with pytest.raises(bosch.StateError):
        opt.set_priors([1.0] * problem.n_units)


def test_strategy_sees_the_priors(problem, testbed, make_opt):
    seen = []

    class Reader:
        def __init__(self, sp):
            seen.append(sp.prior())
            self.sent = False

        def propose(self, sp, max_candidates):
            if self.sent:
                return []
            self.sent = True
            return [[sp.random_below(2) for _ in range(sp.n_vars)]]

        def observe(self, sp, candidates, values):
            pass

    pr = [float(u % 7) for u in range(problem.n_units)]
    s = bosch.Strategy.from_python("reader", Reader)
    make_opt(problem, group_strategy=s).set_priors(pr).optimize(evaluator=testbed)
    assert seen and all(p is not None for p in seen)
    # the polish covers every unit, one variable each: exactly the priors
    assert any(p == pr for p in seen)
    seen.clear()
    make_opt(problem, group_strategy=s).optimize(evaluator=testbed)
    assert seen and all(p is None for p in seen)


def test_model_starts_from_the_priors():
    first = []

    def f(x):
        if not first:
            first.append(bytes(x))
        return objective(x)

    # low prior = set to 1: the lightest weights, the optimum of `objective`
    r = bosch.solve_subproblem("model", BLOCK_OF, COUNTS, f, budget=4, batch=1, seed=1,
                               prior=W)
    best = max(objective(bytes(x)) for x in _feasible())
    assert objective(first[0]) == best
    assert r.best_value == best
    with pytest.raises(ValueError):
        bosch.solve_subproblem("model", BLOCK_OF, COUNTS, f, budget=4, prior=[1.0])


def _feasible():
    import itertools
    blocks = [list(itertools.combinations(range(4), 2))] * 3
    for pick in itertools.product(*blocks):
        x = [0] * 12
        for b, pair in enumerate(pick):
            for i in pair:
                x[4 * b + i] = 1
        yield x

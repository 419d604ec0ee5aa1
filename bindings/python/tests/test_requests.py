"""Evaluation requests (fidelity, draw): confirmation draws, multi-fidelity
screening, request evaluators (Python and the testbed's C ones), ask/tell
with candidate_request, and the request records of the history."""

import math
import statistics

import pytest

import bosch
from bosch import _lib

BUDGET = 300


@pytest.fixture
def noisy():
    """8 x 4 units, noise 0.02, fidelity noise 0.01."""
    return bosch.Testbed(8, 4, seed=3, noise=0.02, fidelity_noise=0.01)


def records_of(result, mask):
    return [h for h in result.history if h.mask == list(mask)]


# ---- prototypes -----------------------------------------------------------------------
def test_request_callback_types():
    assert _lib.REQUEST_EVAL_FN._argtypes_[2] is _lib.c_double
    assert _lib.REQUEST_EVAL_FN._argtypes_[3] is _lib.c_uint32
    assert len(_lib.REQUEST_BATCH_EVAL_FN._argtypes_) == 7
    for name in ("bosch_set_request_evaluator", "bosch_set_request_batch_evaluator",
                 "bosch_candidate_request", "bosch_result_history_request",
                 "bosch_testbed_score_request", "bosch_testbed_request_eval",
                 "bosch_testbed_request_batch_eval", "bosch_set_confirm",
                 "bosch_set_confirm_top", "bosch_set_screen_fidelity", "bosch_result_cost",
                 "bosch_result_confirmations", "bosch_result_search_score",
                 "bosch_result_score_stderr"):
        assert name in _lib._PROTOTYPES and name not in bosch.missing_symbols
    assert "bosch_torch_request_batch_eval" in _lib.TORCH_PROTOTYPES


# ---- testbed --------------------------------------------------------------------------
def test_testbed_score_request(noisy):
    units = noisy.n_units
    masks = [bytes(units), b"\x01" * units, bytes([1, 0] * (units // 2)), "01" * (units // 2)]
    for m in masks:
        assert noisy.score_request(m, 1.0, 0) == noisy.score(m)
        assert noisy.score_request(m) == noisy.score(m)
        # a request always scores the same; other draws and fidelities differ
        d1 = noisy.score_request(m, 1.0, 1)
        assert d1 == noisy.score_request(m, 1.0, 1)
        assert d1 != noisy.score(m) and d1 != noisy.score_request(m, 1.0, 2)
        assert noisy.score_request(m, 0.25, 0) != noisy.score(m)
    assert noisy.get("fidelity_noise") == 0.01
    for bad in (0.0, -0.5, 1.5, math.nan, math.inf):
        with pytest.raises(bosch.InvalidArgumentError):
            noisy.score_request(masks[0], bad, 0)
    with pytest.raises(ValueError):
        noisy.score_request(masks[0], 1.0, -1)
    with pytest.raises(ValueError):
        noisy.score_request([0] * (units - 1), 1.0, 0)


def test_testbed_fidelity_noise_scale():
    # without fidelity_noise a screened score equals the full one; with it the
    # extra spread grows as fidelity_noise * sqrt(1/f - 1)
    tb = bosch.Testbed(8, 4, seed=5, noise=0.0)
    m = [1, 0] * 16
    assert tb.score_request(m, 0.1, 0) == tb.score_clean(m)
    tb.set("fidelity_noise", 0.05)
    diffs = [tb.score_request(m, 0.2, d) - tb.score_clean(m) for d in range(400)]
    assert statistics.mean(diffs) == pytest.approx(0.0, abs=0.02)
    assert statistics.stdev(diffs) == pytest.approx(0.05 * math.sqrt(1 / 0.2 - 1), rel=0.2)


def test_testbed_score_requests_batch(noisy):
    units = noisy.n_units
    masks = [bytes(units), [1, 0] * (units // 2), "1" * units]
    fids, draws = [1.0, 0.25, 0.5], [0, 3, 1]
    assert noisy.score_requests(masks, fids, draws) == [
        noisy.score_request(m, f, d) for m, f, d in zip(masks, fids, draws)]
    assert noisy.score_requests([], [], []) == []
    with pytest.raises(bosch.InvalidArgumentError):
        noisy.score_requests(masks, [1.0, 0.0, 1.0], draws)
    with pytest.raises(ValueError):
        noisy.score_requests(masks, [1.0], draws)


# ---- options --------------------------------------------------------------------------
def test_typed_setters_and_options(problem):
    opt = bosch.Optimizer(problem)
    assert opt.get_option_value("confirm") == 0
    assert opt.get_option_value("confirm_top") == 1
    assert opt.get_option_value("screen_fidelity") == 1.0
    assert opt.set_confirm(12) is opt and opt.get_option_value("confirm") == 12
    opt.set_confirm_top(3)
    assert opt.get_option_value("confirm_top") == 3
    opt.set_screen_fidelity(0.25)
    assert opt.get_option_value("screen_fidelity") == 0.25
    opt2 = bosch.Optimizer(problem, confirm=4, confirm_top=2, screen_fidelity=0.5)
    assert (opt2.get_option("confirm"), opt2.get_option_value("confirm_top"),
            opt2.get_option_value("screen_fidelity")) == ("4", 2, 0.5)
    for bad in (0.0, 1.5, -1.0):
        with pytest.raises(bosch.InvalidArgumentError):
            opt.set_screen_fidelity(bad)
    with pytest.raises(bosch.InvalidArgumentError):
        opt.set_confirm_top(0)
    names = {o.name for o in bosch.options()}
    assert {"confirm", "confirm_top", "screen_fidelity"} <= names


# ---- confirmation draws ---------------------------------------------------------------
@pytest.mark.parametrize("how", ["testbed-batch", "testbed", "python", "python-batch"])
def test_confirm_reports_the_mean_of_fresh_draws(problem, noisy, how):
    opt = bosch.Optimizer(problem, seed=1, budget=BUDGET, confirm=12)
    if how == "testbed-batch":
        result = opt.optimize(request_batch_evaluator=noisy)
    elif how == "testbed":
        result = opt.optimize(request_evaluator=noisy)
    elif how == "python":
        result = opt.optimize(request_evaluator=lambda m, f, d: noisy.score_request(m, f, d))
    else:
        result = opt.optimize(request_batch_evaluator=lambda ms, fs, ds: noisy.score_requests(
            ms, fs, ds))
    assert result.ok and result.feasible
    assert result.confirmations == 12
    recs = records_of(result, result.mask)
    fresh = [h.score for h in recs if h.draw >= 1]
    assert sorted(h.draw for h in recs if h.draw >= 1) == list(range(1, 13))
    assert all(h.fidelity == 1.0 for h in recs)
    assert result.score == pytest.approx(statistics.mean(fresh), rel=1e-12, abs=1e-12)
    [first] = [h for h in recs if h.draw == 0]
    assert result.search_score == first.score
    assert result.score_stderr == pytest.approx(statistics.stdev(fresh) / math.sqrt(12),
                                                rel=1e-9)
    # the search's score is the luckiest of many noisy draws: fresh draws are lower
    assert result.score < result.search_score
    assert result.total_evaluations <= BUDGET and result.cost == result.total_evaluations
    assert result.normalized_score == pytest.approx(
        (result.score - result.anchors[1]) / (result.anchors[0] - result.anchors[1]))
    # every draw of the history is scored independently of draw 0
    for h in result.history:
        assert h.score == noisy.score_request(h.mask, h.fidelity, h.draw)


def test_same_results_from_every_kind_of_request_evaluator(problem, noisy):
    def run(**kw):
        return bosch.Optimizer(problem, seed=2, budget=BUDGET, confirm=4, confirm_top=2,
                               screen_fidelity=0.5).optimize(**kw)

    ref = run(request_batch_evaluator=noisy)
    assert run(request_evaluator=noisy) == ref
    assert run(request_evaluator=noisy.score_request) == ref
    assert run(request_batch_evaluator=noisy.score_requests) == ref


def test_confirm_off_and_plain_evaluators(problem, noisy):
    result = bosch.Optimizer(problem, seed=1, budget=BUDGET).optimize(batch_evaluator=noisy)
    assert result.confirmations == 0 and math.isnan(result.score_stderr)
    assert result.search_score == result.score
    assert result.cost == result.total_evaluations
    assert all(h.fidelity == 1.0 and h.draw == 0 for h in result.history)
    # a plain evaluator gets the confirmation draws too (it cannot tell them apart)
    result = bosch.Optimizer(problem, seed=1, budget=BUDGET, confirm=3).optimize(
        evaluator=noisy)
    assert result.confirmations == 3
    assert result.score == pytest.approx(result.search_score)  # same score for every draw


# ---- multi-fidelity screening ---------------------------------------------------------
def test_screen_fidelity_with_a_python_request_evaluator(problem, noisy):
    seen = []

    def ev(mask, fidelity, draw):
        assert isinstance(mask, bytes) and isinstance(fidelity, float)
        assert isinstance(draw, int)
        seen.append((fidelity, draw))
        return noisy.score_request(mask, fidelity, draw)

    opt = bosch.Optimizer(problem, seed=1, budget=BUDGET)
    opt.set_screen_fidelity(0.25)
    result = opt.optimize(request_evaluator=ev)
    assert result.ok and result.feasible
    screened = [h for h in result.history if h.fidelity == 0.25]
    assert screened and all(h.stage_name == "group" for h in screened)
    assert {h.fidelity for h in result.history} == {0.25, 1.0}
    assert seen == [(h.fidelity, h.draw) for h in result.history]
    assert result.cost == pytest.approx(sum(h.fidelity for h in result.history))
    assert result.cost <= BUDGET
    assert result.total_evaluations == len(result.history) > result.cost
    # only full-fidelity scores become the result
    full = [h for h in records_of(result, result.mask) if h.fidelity == 1.0]
    assert result.search_score in [h.score for h in full]


def test_screen_fidelity_refuses_a_plain_evaluator(problem, noisy):
    for kw in ({"evaluator": noisy}, {"batch_evaluator": noisy},
               {"evaluator": noisy.score}, {"batch_evaluator": noisy.score_batch}):
        opt = bosch.Optimizer(problem, seed=1, budget=BUDGET, screen_fidelity=0.5)
        with pytest.raises(bosch.InvalidArgumentError, match="screen_fidelity"):
            opt.optimize(**kw)
        assert opt.result().total_evaluations == 0


def test_one_evaluator_at_a_time(problem, noisy):
    with pytest.raises(ValueError, match="one evaluator"):
        bosch.Optimizer(problem).optimize(evaluator=noisy, request_evaluator=noisy)
    with pytest.raises(TypeError):
        bosch.Optimizer(problem).set_request_evaluator(42)
    with pytest.raises(TypeError):
        bosch.Optimizer(problem).set_request_batch_evaluator("x")
    # a request evaluator replaces a plain one, and the other way round
    opt = bosch.Optimizer(problem, seed=1, budget=BUDGET, screen_fidelity=0.5)
    opt.set_evaluator(noisy)
    opt.set_request_batch_evaluator(noisy)
    assert opt.optimize().ok
    opt = bosch.Optimizer(problem, seed=1, budget=BUDGET, screen_fidelity=0.5)
    opt.set_request_evaluator(noisy)
    opt.set_batch_evaluator(noisy)
    with pytest.raises(bosch.InvalidArgumentError):
        opt.optimize()


def test_closed_testbed_as_request_evaluator(problem):
    tb = bosch.Testbed(8, 4, seed=1)
    opt = bosch.Optimizer(problem, seed=1, budget=BUDGET)
    opt.set_request_batch_evaluator(tb)
    tb.close()
    with pytest.raises(ValueError, match="closed"):
        opt.optimize()


def test_threads_do_not_change_results(problem, noisy):
    def run(threads):
        opt = bosch.Optimizer(problem, seed=4, budget=BUDGET, threads=threads, confirm=3,
                              screen_fidelity=0.25)
        return opt.optimize(request_evaluator=noisy.score_request, evaluator_thread_safe=True)

    assert run(4) == run(1)


# ---- ask/tell -------------------------------------------------------------------------
def test_ask_tell_with_candidate_request(problem, noisy):
    opt = bosch.Optimizer(problem, seed=3, budget=BUDGET, confirm=5, screen_fidelity=0.25)
    with pytest.raises(bosch.BoschError):
        opt.candidate_request(0)  # no pending batch
    requests = []
    while batch := opt.ask():
        with pytest.raises(bosch.InvalidArgumentError):
            opt.candidate_request(len(batch))
        for i, mask in enumerate(batch):
            fidelity, draw = opt.candidate_request(i)
            requests.append((fidelity, draw))
            opt.tell(i, noisy.score_request(mask, fidelity, draw))
    result = opt.result()
    assert result.ok and result.confirmations == 5
    assert 0.25 in {f for f, _ in requests} and max(d for _, d in requests) == 5
    assert requests == [(h.fidelity, h.draw) for h in result.history]
    ref = bosch.Optimizer(problem, seed=3, budget=BUDGET, confirm=5,
                          screen_fidelity=0.25).optimize(request_batch_evaluator=noisy)
    assert result == ref


def test_candidate_request_defaults(problem, noisy):
    opt = bosch.Optimizer(problem, seed=3, budget=40)
    while batch := opt.ask():
        for i, mask in enumerate(batch):
            assert opt.candidate_request(i) == (1.0, 0)
            opt.tell(i, noisy.score(mask))
    assert opt.result().cost == opt.result().total_evaluations


# ---- failures -------------------------------------------------------------------------
def test_request_evaluator_exception(problem, noisy):
    exc = RuntimeError("the GPU fell over")
    calls = []

    def my_failing_request_evaluator(mask, fidelity, draw):
        calls.append(mask)
        if len(calls) == 60:
            raise exc
        return noisy.score_request(mask, fidelity, draw)

    opt = bosch.Optimizer(problem, seed=1, budget=BUDGET, confirm=4)
    with pytest.raises(RuntimeError) as info:
        opt.optimize(request_evaluator=my_failing_request_evaluator)
    assert info.value is exc
    assert len(calls) == 60  # the run stopped at once
    assert opt.status == bosch.ErrorCode.E_EVALUATOR
    assert opt.evaluator_status == bosch.PYTHON_EXCEPTION_STATUS
    res = opt.result()  # best so far kept
    assert res.status == bosch.ErrorCode.E_EVALUATOR
    assert res.total_evaluations in (59, 60)
    assert res.feasible and res.confirmations == 0
    best = max(h.score for h in res.history if sum(h.mask) == problem.target_units)
    assert res.score == res.search_score == best
    assert res.mask in [h.mask for h in res.history]


def test_request_batch_evaluator_exception_and_bad_results(problem, noisy):
    class Boom(Exception):
        pass

    def batch(masks, fidelities, draws):
        raise Boom("batch")

    opt = bosch.Optimizer(problem, seed=1, budget=BUDGET)
    with pytest.raises(Boom):
        opt.optimize(request_batch_evaluator=batch)
    assert opt.result().status == bosch.ErrorCode.E_EVALUATOR
    with pytest.raises(ValueError, match="scores"):
        bosch.Optimizer(problem).optimize(request_batch_evaluator=lambda ms, fs, ds: [0.5])
    with pytest.raises(TypeError):
        bosch.Optimizer(problem).optimize(request_evaluator=lambda m, f, d: None)
    with pytest.raises(bosch.BadScoreError):
        bosch.Optimizer(problem).optimize(request_evaluator=lambda m, f, d: math.nan)
    with pytest.raises(KeyboardInterrupt):
        def interrupted(m, f, d):
            raise KeyboardInterrupt
        bosch.Optimizer(problem).optimize(request_evaluator=interrupted)


def test_history_file_carries_the_requests(problem, noisy, tmp_path):
    import json
    result = bosch.Optimizer(problem, seed=1, budget=BUDGET, confirm=3,
                             screen_fidelity=0.25).optimize(request_batch_evaluator=noisy)
    path = tmp_path / "h.jsonl"
    result.write_history(path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == len(result.history)
    for row, h in zip(rows, result.history):
        assert row.get("fidelity", 1.0) == pytest.approx(h.fidelity)
        assert row.get("draw", 0) == h.draw

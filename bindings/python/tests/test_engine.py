"""Evaluation engine: concurrent evaluation (threads), journal and exact resume,
progress rate/ETA/replayed, history wall times, the journal errors."""

import math
import os
import threading
import time

import pytest

import bosch


def _opt(problem, **options):
    opts = dict(seed=7, budget=160, batch_size=8)
    opts.update(options)
    return bosch.Optimizer(problem, **opts)


def _key(result):
    return (result.status, result.feasible, result.mask, result.score, result.total_evaluations,
            result.evaluations,
            [(h.index, h.stage, h.score, h.mask) for h in result.history])


def assert_same(a, b):
    assert a.mask == b.mask
    assert a.score == b.score
    assert a.total_evaluations == b.total_evaluations
    assert a.evaluations == b.evaluations
    assert len(a.history) == len(b.history)
    for ha, hb in zip(a.history, b.history):
        assert (ha.stage, ha.score, ha.mask) == (hb.stage, hb.score, hb.mask), ha.index
    assert _key(a) == _key(b)


class Counting:
    """Thread-safe evaluator wrapper: counts calls, tracks concurrency."""

    def __init__(self, fn, sleep=0.0, stop_after=None, opt=None):
        self.fn = fn
        self.sleep = sleep
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.threads = set()
        self.stop_after = stop_after
        self.opt = opt
        self.lock = threading.Lock()

    def __call__(self, mask):
        with self.lock:
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.threads.add(threading.get_ident())
            n = self.calls
        try:
            if self.sleep:
                time.sleep(self.sleep)  # releases the GIL, like a GPU or I/O wait
            return self.fn(mask)
        finally:
            with self.lock:
                self.in_flight -= 1
            if self.stop_after is not None and n >= self.stop_after:
                self.opt.force_stop()


# ----------------------------------------------------------------------------
# threads
# ----------------------------------------------------------------------------
def test_threads_option_roundtrip(problem):
    opt = _opt(problem, threads=4)
    assert opt.get_option("threads") == "4"
    opt.set_threads(2)
    assert opt.get_option("threads") == "2"
    with pytest.raises(bosch.BoschError):
        opt.set_threads(0)
    with pytest.raises(bosch.BoschError):
        opt.set_option("threads", "257")


def test_threads_1_vs_4_identical_python_evaluator(problem, testbed):
    r1 = _opt(problem, threads=1).optimize(evaluator=testbed.score)
    ev = Counting(testbed.score)
    r4 = _opt(problem, threads=4).optimize(evaluator=ev, evaluator_thread_safe=True)
    assert_same(r1, r4)
    assert ev.calls == r4.total_evaluations
    assert ev.max_in_flight <= 4


def test_threads_1_vs_4_identical_not_thread_safe(problem, testbed):
    # Not declared thread-safe: calls are serialised, results unchanged.
    r1 = _opt(problem).optimize(evaluator=testbed.score)
    ev = Counting(testbed.score, sleep=0.001)
    r4 = _opt(problem, threads=4).optimize(evaluator=ev)
    assert_same(r1, r4)
    assert ev.max_in_flight == 1


def test_threads_identical_with_testbed_and_batch_evaluators(problem, testbed):
    ref = _opt(problem).optimize(evaluator=testbed.score)
    for threads in (1, 3, 8):
        assert_same(ref, _opt(problem, threads=threads).optimize(evaluator=testbed))
        assert_same(ref, _opt(problem, threads=threads).optimize(batch_evaluator=testbed))


def test_threads_evaluate_concurrently(problem, testbed):
    ev = Counting(testbed.score, sleep=0.005)
    res = _opt(problem, threads=4, budget=64).optimize(evaluator=ev, evaluator_thread_safe=True)
    assert res.total_evaluations == ev.calls
    assert 2 <= ev.max_in_flight <= 4


def test_exception_on_worker_thread_is_reraised(problem, testbed):
    raised = []

    def evaluator(mask):
        time.sleep(0.002)
        with lock:
            count[0] += 1
            n = count[0]
        if n == 20:
            exc = ValueError(f"boom on call {n}")
            raised.append((exc, threading.get_ident()))
            raise exc
        return testbed.score(mask)

    lock = threading.Lock()
    count = [0]
    opt = _opt(problem, threads=4)
    with pytest.raises(ValueError, match="boom on call 20") as info:
        opt.optimize(evaluator=evaluator, evaluator_thread_safe=True)
    assert info.value is raised[0][0]          # the original object, traceback kept
    assert info.value.__traceback__ is not None
    res = opt.result()                         # best so far still available
    assert res.status == bosch.ErrorCode.E_EVALUATOR
    assert 0 < res.total_evaluations < 160
    assert opt.evaluator_status != 0


def test_exception_in_every_worker_keeps_first(problem):
    def evaluator(mask):
        time.sleep(0.001)
        raise KeyError(threading.get_ident())

    opt = _opt(problem, threads=4)
    with pytest.raises(KeyError):
        opt.optimize(evaluator=evaluator, evaluator_thread_safe=True)
    # a later run on a fresh optimizer is unaffected
    assert _opt(problem).optimize(evaluator=lambda m: 1.0 - 0.01 * sum(m)).ok


# ----------------------------------------------------------------------------
# journal and resume
# ----------------------------------------------------------------------------
def test_journal_create_then_full_resume_identical(problem, testbed, tmp_path):
    path = tmp_path / "run.journal"
    ev1 = Counting(testbed.score)
    opt1 = _opt(problem).set_journal(path, mode="create")
    r1 = opt1.optimize(evaluator=ev1)
    assert path.exists() and path.stat().st_size > 0
    assert r1.replayed == 0
    assert ev1.calls == r1.total_evaluations
    assert all(math.isfinite(h.wall_s) and h.wall_s >= 0 for h in r1.history)

    ev2 = Counting(testbed.score)
    seen = []
    opt2 = _opt(problem).set_journal(path, mode="resume")
    r2 = opt2.optimize(evaluator=ev2, progress=seen.append)
    assert ev2.calls == 0
    assert_same(r1, r2)
    assert r2.replayed == r2.total_evaluations
    assert [h.wall_s for h in r2.history] == [h.wall_s for h in r1.history]
    assert seen and seen[-1].replayed == r2.total_evaluations


def test_journal_resume_after_stop_identical(problem, testbed, tmp_path):
    ref = _opt(problem).optimize(evaluator=testbed.score)
    path = tmp_path / "stopped.journal"
    opt1 = _opt(problem, threads=4).set_journal(path)
    ev1 = Counting(testbed.score, sleep=0.001, stop_after=50, opt=opt1)
    r1 = opt1.optimize(evaluator=ev1, evaluator_thread_safe=True)
    assert r1.status == bosch.StopReason.FORCED_STOP
    assert r1.total_evaluations < ref.total_evaluations

    ev2 = Counting(testbed.score)
    r2 = _opt(problem, threads=2).set_journal(path, "auto").optimize(
        evaluator=ev2, evaluator_thread_safe=True)
    assert_same(ref, r2)
    assert r2.replayed == r1.total_evaluations
    assert ev2.calls == r2.total_evaluations - r2.replayed


def test_journal_via_options(problem, testbed, tmp_path):
    path = tmp_path / "opts.journal"
    opt = _opt(problem, threads=4, journal=str(path), journal_sync=True)
    assert opt.get_option("journal") == str(path)
    assert opt.get_option("journal_sync") == "1"
    r1 = opt.optimize(evaluator=testbed)
    assert path.exists()
    # same options again: mode AUTO resumes
    ev = Counting(testbed.score)
    r2 = _opt(problem, threads=1, journal=path).optimize(evaluator=ev)
    assert ev.calls == 0
    assert_same(r1, r2)
    # journal=None disables it
    opt3 = _opt(problem, journal=None)
    r3 = opt3.optimize(evaluator=testbed)
    assert r3.replayed == 0


def test_journal_ask_tell_resume(problem, testbed, tmp_path):
    path = tmp_path / "asktell.journal"
    opt1 = _opt(problem).set_journal(path, "create")
    while batch := opt1.ask():
        for i in reversed(range(len(batch))):
            opt1.tell(i, testbed.score(batch[i]))
    r1 = opt1.result()

    opt2 = _opt(problem).set_journal(path, "resume")
    assert opt2.ask() == []          # everything answered from the journal
    r2 = opt2.result()
    assert_same(r1, r2)
    assert r2.replayed == r1.total_evaluations


def test_journal_mismatch_raises(problem, testbed, tmp_path):
    path = tmp_path / "m.journal"
    _opt(problem, seed=7).set_journal(path, "create").optimize(evaluator=testbed)
    opt = _opt(problem, seed=8).set_journal(path, "resume")
    with pytest.raises(bosch.JournalMismatchError) as info:
        opt.optimize(evaluator=testbed)
    err = info.value
    assert isinstance(err, bosch.BoschError)
    assert err.code == bosch.ErrorCode.E_MISMATCH == -14
    assert err.name == "BOSCH_E_MISMATCH"
    assert "seed" in err.message
    # other shape: also a mismatch
    other = bosch.Problem(8, 4, ratio=0.25)
    with pytest.raises(bosch.JournalMismatchError):
        _opt(other).set_journal(path, "auto").optimize(evaluator=testbed.score)


def test_journal_threads_and_time_limit_may_differ(problem, testbed, tmp_path):
    path = tmp_path / "t.journal"
    r1 = _opt(problem, threads=1).set_journal(path).optimize(evaluator=testbed)
    r2 = _opt(problem, threads=4, time_limit=100.0).set_journal(path).optimize(
        evaluator=testbed)
    assert_same(r1, r2)


def test_journal_corrupt_raises(problem, testbed, tmp_path):
    path = tmp_path / "c.journal"
    _opt(problem).set_journal(path, "create").optimize(evaluator=testbed)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(bosch.JournalCorruptError) as info:
        _opt(problem).set_journal(path, "resume").optimize(evaluator=testbed)
    assert info.value.code == bosch.ErrorCode.E_CORRUPT == -13
    assert info.value.name == "BOSCH_E_CORRUPT"

    path.write_bytes(b"definitely not a journal, but long enough to have a header" * 4)
    with pytest.raises(bosch.JournalCorruptError):
        _opt(problem).set_journal(path, "resume").optimize(evaluator=testbed)


def test_journal_cut_short_tail_is_redone(problem, testbed, tmp_path):
    path = tmp_path / "cut.journal"
    r1 = _opt(problem).set_journal(path, "create").optimize(evaluator=testbed)
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size - 5)               # the last frame cut short, as by a crash
    ev = Counting(testbed.score)
    r2 = _opt(problem).set_journal(path, "resume").optimize(evaluator=ev)
    assert ev.calls == 1
    assert r2.replayed == r1.total_evaluations - 1
    assert_same(r1, r2)


def test_journal_resume_missing_file_is_io_error(problem, testbed, tmp_path):
    with pytest.raises(bosch.BoschIOError):
        _opt(problem).set_journal(tmp_path / "nope.journal", "resume").optimize(
            evaluator=testbed)


def test_set_journal_arguments(problem, tmp_path):
    opt = _opt(problem)
    with pytest.raises(ValueError):
        opt.set_journal(tmp_path / "x", mode="append")
    opt.set_journal(tmp_path / "x", mode=bosch.JournalMode.CREATE, sync=True)
    assert opt.get_option("journal_sync") == "1"
    opt.set_journal(None)
    assert not (tmp_path / "x").exists()


# ----------------------------------------------------------------------------
# progress and history
# ----------------------------------------------------------------------------
def test_progress_rate_eta_replayed(problem, testbed):
    seen = []
    res = _opt(problem).optimize(evaluator=testbed.score, progress=seen.append)
    assert seen
    last = seen[-1]
    assert last.replayed == 0
    assert math.isfinite(last.rate) and last.rate > 0
    for p in seen:
        assert math.isnan(p.eta) or p.eta >= 0
        assert math.isnan(p.rate) or p.rate >= 0
    assert res.replayed == 0


def test_history_wall_s_measures_evaluator(problem, testbed):
    def slow(mask):
        time.sleep(0.003)
        return testbed.score(mask)

    res = _opt(problem, budget=24).optimize(evaluator=slow)
    walls = [h.wall_s for h in res.history]
    assert len(walls) == res.total_evaluations
    assert all(w >= 0.002 for w in walls), walls
    assert all(w < 5 for w in walls)


def test_new_error_codes():
    assert bosch.ErrorCode.E_CORRUPT == -13
    assert bosch.ErrorCode.E_MISMATCH == -14
    assert bosch.err_name(-13) == "BOSCH_E_CORRUPT"
    assert bosch.err_name(-14) == "BOSCH_E_MISMATCH"
    from bosch.errors import error_for_status
    assert isinstance(error_for_status(-13), bosch.JournalCorruptError)
    assert isinstance(error_for_status(-14), bosch.JournalMismatchError)


def test_busy_journal_and_journal_failed_codes(tmp_path, problem, testbed):
    # The Python enums follow the C table, and a second optimizer on a
    # journal another one holds raises JournalBusyError.
    assert bosch.ErrorCode.E_BUSY == -15
    assert bosch.err_name(-15) == "BOSCH_E_BUSY"
    assert bosch.StopReason.JOURNAL_FAILED == 6
    assert bosch.err_name(6) == "BOSCH_JOURNAL_FAILED"
    path = tmp_path / "j.bin"
    a = _opt(problem).set_journal(path, mode="auto")
    calls, refused = [], []

    def probe(mask):
        calls.append(1)
        if len(calls) == 5:  # mid-run: the journal is open and locked
            with pytest.raises(bosch.JournalBusyError, match="in use by another run") as e:
                _opt(problem).set_journal(path, mode="auto").optimize(evaluator=testbed.score)
            refused.append(e.value)
            a.force_stop()
        return testbed.score(mask)

    a.optimize(evaluator=probe)
    assert refused
    # `a` has stopped (not closed): the journal is free again
    b = _opt(problem).set_journal(path, mode="auto")
    res = b.optimize(evaluator=testbed.score)
    assert res.replayed >= 5


# ----------------------------------------------------------------------------
# more contract checks
# ----------------------------------------------------------------------------
def test_batch_evaluator_gets_whole_batch_with_threads(problem, testbed):
    sizes = []
    busy = [0, 0]
    lock = threading.Lock()

    def batch_eval(masks):
        with lock:
            busy[0] += 1
            busy[1] = max(busy[1], busy[0])
        sizes.append(len(masks))
        try:
            return [testbed.score(m) for m in masks]
        finally:
            with lock:
                busy[0] -= 1

    ref = _opt(problem).optimize(batch_evaluator=testbed)
    res = _opt(problem, threads=4).optimize(batch_evaluator=batch_eval)
    assert_same(ref, res)
    assert sum(sizes) == res.total_evaluations
    assert max(sizes) <= 8 and busy[1] == 1


def test_set_threads_after_start_is_state_error(problem, testbed):
    opt = _opt(problem)
    opt.ask()
    with pytest.raises(bosch.StateError):
        opt.set_threads(4)
    with pytest.raises(bosch.StateError):
        opt.set_journal("/nonexistent/should-not-matter")


def test_journal_ask_tell_partial_batch_resume(problem, testbed, tmp_path):
    ref = _opt(problem).optimize(evaluator=testbed)
    path = tmp_path / "partial.journal"
    opt1 = _opt(problem).set_journal(path, "create")
    told = 0
    for k in range(40):                       # complete batches until one has 4+ candidates
        batch = opt1.ask()
        if k >= 3 and len(batch) >= 4:
            break
        for i, m in enumerate(batch):
            opt1.tell(i, testbed.score(m))
        told += len(batch)
    assert len(batch) >= 4
    for i in (0, 2):                          # tell two candidates of that batch, then "crash"
        opt1.tell(i, testbed.score(batch[i]))
    told += 2
    opt1.close()

    opt2 = _opt(problem).set_journal(path, "resume")
    again = opt2.ask()
    assert again == [batch[i] for i in range(len(batch)) if i not in (0, 2)]
    for i, m in enumerate(again):
        opt2.tell(i, testbed.score(m))
    while b := opt2.ask():
        for i, m in enumerate(b):
            opt2.tell(i, testbed.score(m))
    res = opt2.result()
    assert res.replayed == told
    assert_same(ref, res)


def test_journal_resume_after_evaluator_exception(problem, testbed, tmp_path):
    ref = _opt(problem).optimize(evaluator=testbed)
    path = tmp_path / "exc.journal"
    calls = [0]
    lock = threading.Lock()

    def flaky(mask):
        with lock:
            calls[0] += 1
            n = calls[0]
        if n == 40:
            raise RuntimeError("GPU fell over")
        return testbed.score(mask)

    with pytest.raises(RuntimeError, match="GPU fell over"):
        _opt(problem, threads=4).set_journal(path).optimize(evaluator=flaky,
                                                            evaluator_thread_safe=True)
    ev = Counting(testbed.score)
    res = _opt(problem, threads=4).set_journal(path).optimize(evaluator=ev,
                                                              evaluator_thread_safe=True)
    assert_same(ref, res)
    assert 0 < res.replayed < res.total_evaluations
    assert ev.calls == res.total_evaluations - res.replayed


def test_empty_journal_file_is_a_new_journal(problem, testbed, tmp_path):
    path = tmp_path / "empty.journal"
    path.write_bytes(b"")
    ev = Counting(testbed.score)
    res = _opt(problem).set_journal(path, "resume").optimize(evaluator=ev)
    assert res.replayed == 0 and ev.calls == res.total_evaluations
    assert path.stat().st_size > 0


def test_journal_in_missing_directory_is_io_error(problem, testbed, tmp_path):
    with pytest.raises(bosch.BoschIOError):
        _opt(problem).set_journal(tmp_path / "no" / "such" / "dir.journal", "create").optimize(
            evaluator=testbed)


def test_mismatch_names_every_field(problem, testbed, tmp_path):
    path = tmp_path / "fields.journal"
    _opt(problem).set_journal(path, "create").optimize(evaluator=testbed)
    with pytest.raises(bosch.JournalMismatchError) as info:
        _opt(problem, seed=99, budget=150, alpha=2.0).set_journal(path, "resume").optimize(
            evaluator=testbed)
    msg = info.value.message
    for name in ("seed", "budget", "alpha"):
        assert name in msg, msg


def test_history_wall_s_ask_tell(problem, testbed):
    opt = _opt(problem, budget=16)
    while batch := opt.ask():
        time.sleep(0.003)
        for i, m in enumerate(batch):
            opt.tell(i, testbed.score(m))
    walls = [h.wall_s for h in opt.result().history]
    assert walls and all(w >= 0.002 for w in walls), walls

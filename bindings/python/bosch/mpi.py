"""bosch.mpi: libbosch-mpi (bosch/mpi.h) through mpi4py - a search's
evaluations over the ranks of an MPI job, with the same result as one
process (docs/mpi.md).

Rank 0 makes a :class:`Coordinator` and gives it to the optimizer as its
request batch evaluator; every other rank calls :func:`serve`. The
evaluators are C ones, called by the library with no Python in the loop: a
:class:`bosch.backend.Evaluator` (its model on this rank's device) or a
:class:`bosch.Testbed`.

    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    ev = ...                                    # this rank's evaluator
    if comm.rank == 0:
        with bosch.mpi.Coordinator(comm, ev) as c:
            result = bosch.Optimizer(problem, seed=0).optimize(request_batch_evaluator=c)
    else:
        bosch.mpi.serve(comm, ev)

``mpirun -np 4 python3 bindings/python/examples/mpi_search.py`` runs one.
The binding supports Open MPI (whose communicators are pointers); mpi4py
initialises MPI with MPI_THREAD_MULTIPLE, which lets rank 0 evaluate too.
"""

from __future__ import annotations

import ctypes

from . import _lib
from ._handle import Handle
from ._lib import text as _str
from ._masks import mask_bytes
from .errors import ErrorCode, check_status, error_for_status
from .testbed import Testbed

mlib, library_path = _lib.load_mpi()

__all__ = ["Coordinator", "serve", "library_path", "ROOT_IDLE"]

#: Coordinator flag: rank 0 only hands out.
ROOT_IDLE = 1


def _comm(comm) -> ctypes.c_void_p:
    from mpi4py import MPI
    if MPI._sizeof(MPI.Comm) != ctypes.sizeof(ctypes.c_void_p):
        raise TypeError("this MPI's communicators are not pointers (MPICH?); the Python "
                        "binding of libbosch-mpi supports Open MPI")
    return ctypes.c_void_p(MPI._handleof(comm))


def _c_evaluator(evaluator, parts: bool, follow=None):
    """(struct bosch_mpi_evaluator, units, what to keep alive) of a C
    evaluator: whole requests, and with `parts` a torch evaluator's requests
    in parts (set to one sample per forward, so that parts score exactly as
    whole); `follow`: the evaluator's reference callback (a worker follows
    the root's incumbent)."""
    ev = _lib.MpiEvaluator()
    ev.struct_size = ctypes.sizeof(ev)
    keep = []
    if isinstance(evaluator, Testbed):
        ev.eval = _lib.testbed_request_batch_eval_pointer()
        ev.user = evaluator._handle
        return ev, evaluator.n_units, [evaluator, ev.eval]
    hook = getattr(evaluator, "_c_request_batch_evaluator", None)
    if hook is None:
        raise TypeError("the evaluator must be a bosch.backend.Evaluator or a bosch.Testbed "
                        "(evaluated in C on every rank)")
    fn, user = hook()
    ev.eval, ev.user, ev.error = fn, user, _lib.torch_evaluator_error_pointer()
    keep += [evaluator, fn, ev.error]
    if parts and hasattr(evaluator, "_c_sample_evaluator"):
        evaluator.set_forward_samples(1)
        ev.samples, ev.sample_eval = evaluator._c_sample_evaluator()
        keep += [ev.samples, ev.sample_eval]
    if follow and hasattr(evaluator, "set_reference"):
        def reference(mask, n, _user):
            try:
                evaluator.set_reference(ctypes.string_at(mask, n))
                return 0
            except Exception:  # a hint: the rank goes on without it
                return int(ErrorCode.E_EVALUATOR)
        ev.reference = _lib.REFERENCE_FN(reference)
        keep.append(ev.reference)
    return ev, evaluator.units, keep


def _readiness(evaluator, error):
    """(status, reason) of this rank for the handshake."""
    if error is None and evaluator is not None:
        return 0, None
    why = str(error) if error is not None else "no evaluator"
    return int(ErrorCode.E_IO), why.encode()


class Coordinator(Handle):
    """Rank 0's side (bosch_mpi_coordinator_open): collective with
    :func:`serve` on every other rank. `evaluator`: rank 0's own (None with
    ``root_idle=True``); `error`: why this rank could not open one (an
    exception or text; the job is then refused). With ``parts=True`` (the
    default) and torch evaluators on every rank, a batch of fewer requests
    than ranks is cut into parts of a request's samples (each evaluator is
    set to one sample per forward, so parts score exactly as whole); a
    Testbed scores whole requests. Raises the library's error when a rank is
    not ready, naming it. Pass it to
    ``Optimizer.optimize(request_batch_evaluator=...)``; closing it (or
    leaving ``with``) lets the other ranks return."""

    _kind = "coordinator"

    def __init__(self, comm, evaluator=None, *, units: int | None = None,
                 root_idle: bool = False, error=None, parts: bool = True):
        status, why = _readiness(evaluator if not root_idle else True, error)
        ev, keep = None, []
        if evaluator is not None and error is None:
            ev, units, keep = _c_evaluator(evaluator, parts, follow=True)
            if root_idle:
                ev.eval = _lib.REQUEST_BATCH_EVAL_FN()  # plans parts, evaluates nothing
                ev.sample_eval = _lib.SAMPLE_EVAL_FN()
        if units is None:
            raise ValueError("units must be given when rank 0 has no evaluator")
        h = mlib.bosch_mpi_coordinator_open(_comm(comm), int(units),
                                            ctypes.byref(ev) if ev is not None else None,
                                            status, why, ROOT_IDLE if root_idle else 0)
        if not h:
            raise error_for_status(mlib.bosch_mpi_create_status(),
                                   _str(mlib.bosch_mpi_create_error()))
        super().__init__(h)
        self._keep = (ev, keep)
        self.units = int(units)

    def set_reference(self, mask) -> None:
        """Passes `mask` (e.g. the search's incumbent) to every rank's
        evaluator as its prefix cache's reference
        (bosch_mpi_coordinator_set_reference): rank 0's now, the others'
        before their next request. Between batches; scores do not change."""
        raw = mask_bytes(mask, self.units)
        buf = (ctypes.c_uint8 * len(raw)).from_buffer_copy(raw)
        check_status(mlib.bosch_mpi_coordinator_set_reference(self._handle, buf, len(raw)),
                     lambda: self.last_error)

    def _free(self, h) -> None:
        mlib.bosch_mpi_coordinator_free(h)

    @property
    def last_error(self) -> str:
        return _str(mlib.bosch_mpi_coordinator_last_error(self._h)) if self._h else ""

    def stats(self) -> list[int]:
        """Pieces (requests, or parts of requests) each rank scored so far
        (rank 0 first)."""
        ranks = ctypes.c_int()
        check_status(mlib.bosch_mpi_coordinator_stats(self._handle, ctypes.byref(ranks), None, 0))
        counts = (ctypes.c_uint64 * max(1, ranks.value))()
        check_status(mlib.bosch_mpi_coordinator_stats(self._handle, None, counts, ranks.value))
        return [int(c) for c in counts[:ranks.value]]

    # Hooks of Optimizer.set_request_batch_evaluator: the C function, its user data.
    def _c_request_batch_evaluator(self):
        return _lib.mpi_request_batch_eval_pointer(), self._handle

    def _c_last_error(self) -> str:
        return self.last_error

    def __repr__(self) -> str:
        return "bosch.mpi.Coordinator(closed)" if self.closed else \
            f"bosch.mpi.Coordinator(units={self.units}, evaluations={self.stats()})"


def serve(comm, evaluator=None, *, error=None, parts: bool = True) -> None:
    """Every rank but 0 (bosch_mpi_worker_serve): the handshake, then the
    evaluation of what rank 0 hands out (whole requests, or parts of them:
    see :class:`Coordinator`) until it closes its coordinator. `error`: why
    this rank could not open its evaluator (the job is refused, naming this
    rank). Raises InvalidArgumentError when the job was refused."""
    status, why = _readiness(evaluator, error)
    ev, units, keep = None, 0, []
    if evaluator is not None and error is None:
        ev, units, keep = _c_evaluator(evaluator, parts, follow=True)
    check_status(mlib.bosch_mpi_worker_serve(_comm(comm), units,
                                             ctypes.byref(ev) if ev is not None else None,
                                             status, why),
                 lambda: "the job was refused (rank 0 says why)")
    del keep

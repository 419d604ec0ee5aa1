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

__all__ = ["Coordinator", "serve", "identity_of", "library_path", "ROOT_IDLE", "NO_IDENTITY"]

#: Coordinator flag: rank 0 only hands out.
ROOT_IDLE = 1
#: Coordinator flag: ranks whose evaluator gives no identity may join.
NO_IDENTITY = 2


def _comm(comm) -> ctypes.c_void_p:
    from mpi4py import MPI
    if MPI._sizeof(MPI.Comm) != ctypes.sizeof(ctypes.c_void_p):
        raise TypeError("this MPI's communicators are not pointers (MPICH?); the Python "
                        "binding of libbosch-mpi supports Open MPI")
    return ctypes.c_void_p(MPI._handleof(comm))


def identity_of(evaluator) -> str:
    """What `evaluator` evaluates, as every rank proves it in the handshake
    ("key=value" lines): a torch evaluator's from libbosch-torch
    (bosch_torch_evaluator_identity: model and weights digest, task digest,
    metric, window, sink, dtype, samples per forward, ...), a Testbed's
    from its family, shape, seed and parameters."""
    if isinstance(evaluator, Testbed):
        fields = {"testbed.family": evaluator.family.label,
                  "testbed.shape": f"{evaluator.layers}x{evaluator.kv_groups}",
                  "testbed.seed": str(evaluator.seed)}
        fields.update({f"testbed.{k}": repr(float(v)) for k, v in evaluator.params.items()})
        return "".join(f"{k}={v}\n" for k, v in fields.items())
    hook = getattr(evaluator, "_c_request_batch_evaluator", None)
    if hook is None:
        raise TypeError("the evaluator must be a bosch.backend.Evaluator or a bosch.Testbed")
    text = _lib.load_torch()[0].bosch_torch_evaluator_identity(hook()[1])
    if text is None:
        raise MemoryError("bosch_torch_evaluator_identity failed")
    return text.decode()


def _identity_callback(text: str | None):
    """A bosch_mpi_identity_fn returning `text` (None: gives none), and the
    buffer it points into (to keep alive)."""
    if text is None:
        return _lib.IDENTITY_FN(), None
    if not isinstance(text, str):
        raise TypeError(f"identity must be a str, got {type(text).__name__}")
    buf = ctypes.create_string_buffer(text.encode())
    address = ctypes.addressof(buf)
    return _lib.IDENTITY_FN(lambda _user: address), buf


def _c_evaluator(evaluator, parts: bool, follow=None, identity=None):
    """(struct bosch_mpi_evaluator, units, what to keep alive) of a C
    evaluator: whole requests, and with `parts` a torch evaluator's requests
    in parts (set to one sample per forward, so that parts score exactly as
    whole); `follow`: the evaluator's reference callback (a worker follows
    the root's incumbent)."""
    ev = _lib.MpiEvaluator()
    ev.struct_size = ctypes.sizeof(ev)
    keep = []
    if identity is not False and (identity is not None or isinstance(evaluator, Testbed)):
        ev.identity, buf = _identity_callback(identity if identity is not None
                                              else identity_of(evaluator))
        keep += [ev.identity, buf]
    if isinstance(evaluator, Testbed):
        ev.eval = _lib.testbed_request_batch_eval_pointer()
        ev.user = evaluator._handle
        return ev, evaluator.n_units, keep + [evaluator, ev.eval]
    hook = getattr(evaluator, "_c_request_batch_evaluator", None)
    if hook is None:
        raise TypeError("the evaluator must be a bosch.backend.Evaluator or a bosch.Testbed "
                        "(evaluated in C on every rank)")
    fn, user = hook()
    ev.eval, ev.user, ev.error = fn, user, _lib.torch_evaluator_error_pointer()
    keep += [evaluator, fn, ev.error]
    if identity is None:  # asked in the handshake, after the settings below
        ev.identity = _lib.torch_evaluator_identity_pointer()
        keep.append(ev.identity)
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
    not ready, naming it. Every rank proves what it evaluates
    (:func:`identity_of`, computed after ``parts`` has set one sample per
    forward; `identity`: a text of "key=value" lines of your own instead,
    ``False``: none): a rank that differs from rank 0 in any field refuses
    the job, naming the rank and the field. ``check_identity=False`` lets
    ranks that give no identity join (BOSCH_MPI_NO_IDENTITY). Pass it to
    ``Optimizer.optimize(request_batch_evaluator=...)``; closing it (or
    leaving ``with``) lets the other ranks return."""

    _kind = "coordinator"

    def __init__(self, comm, evaluator=None, *, units: int | None = None,
                 root_idle: bool = False, error=None, parts: bool = True, identity=None,
                 check_identity: bool = True):
        status, why = _readiness(evaluator if not root_idle else True, error)
        ev, keep = None, []
        if evaluator is not None and error is None:
            ev, units, keep = _c_evaluator(evaluator, parts, follow=True, identity=identity)
            if root_idle:
                ev.eval = _lib.REQUEST_BATCH_EVAL_FN()  # plans parts, evaluates nothing
                ev.sample_eval = _lib.SAMPLE_EVAL_FN()
        if units is None:
            raise ValueError("units must be given when rank 0 has no evaluator")
        h = mlib.bosch_mpi_coordinator_open(_comm(comm), int(units),
                                            ctypes.byref(ev) if ev is not None else None,
                                            status, why, (ROOT_IDLE if root_idle else 0) |
                                            (0 if check_identity else NO_IDENTITY))
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


def serve(comm, evaluator=None, *, error=None, parts: bool = True, identity=None) -> None:
    """Every rank but 0 (bosch_mpi_worker_serve): the handshake, then the
    evaluation of what rank 0 hands out (whole requests, or parts of them:
    see :class:`Coordinator`) until it closes its coordinator. `error`: why
    this rank could not open its evaluator (the job is refused, naming this
    rank); `identity`: as for :class:`Coordinator`. Raises
    InvalidArgumentError when the job was refused (another identity than
    rank 0's, named on rank 0)."""
    status, why = _readiness(evaluator, error)
    ev, units, keep = None, 0, []
    if evaluator is not None and error is None:
        ev, units, keep = _c_evaluator(evaluator, parts, follow=True, identity=identity)
    check_status(mlib.bosch_mpi_worker_serve(_comm(comm), units,
                                             ctypes.byref(ev) if ev is not None else None,
                                             status, why),
                 lambda: "the job was refused (rank 0 says why)")
    del keep

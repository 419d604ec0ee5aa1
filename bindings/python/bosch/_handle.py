"""Owned C handles of the optional libraries (bosch.text, bosch.backend).

A handle is freed exactly once: by ``close()``, by leaving a ``with`` block,
or by garbage collection (``__del__``). Handles that the C library keeps by
reference (a torch task borrowing its tokenizer, an evaluator borrowing its
model and task) register as *dependents*: they hold a Python reference to
what they borrow, so garbage collection can never free it first, and an
explicit ``close()`` of the borrowed handle closes its dependents before it.
A handle *lent* by another (a checkpoint's model, task and tokenizer) is
never freed by its wrapper: closing it only stops its use; the lender frees
the C object.

Handles still open when the interpreter exits are closed by an ``atexit``
hook, while the libraries' wrappers still work: left to the interpreter's
teardown, a model could outlive the module that frees it, and libtorch's
own teardown then ran with it alive (a Python script that never closed its
evaluator died at exit with "The futex facility returned an unexpected
error code", 2 runs in 3).
"""

from __future__ import annotations

import atexit
import weakref

_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_live() -> None:
    """Closes every handle still open (each closes its dependents first)."""
    for h in list(_LIVE):
        try:
            h.close()
        except Exception:  # pragma: no cover - best effort at exit
            pass


class Handle:
    """Base of the binding's owning wrappers. Subclasses set ``_kind`` (a
    name for messages) and implement ``_free(h)``."""

    _kind = "handle"

    def __init__(self, h, borrows=()):
        self._h = h
        self._dependents: weakref.WeakSet = weakref.WeakSet()
        self._borrows = tuple(b for b in borrows if b is not None)
        for b in self._borrows:
            b._dependents.add(self)
        _LIVE.add(self)

    def _free(self, h) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def closed(self) -> bool:
        return not getattr(self, "_h", None)

    def close(self) -> None:
        """Free the C object now (after closing what borrows it); idempotent."""
        h = getattr(self, "_h", None)
        if not h:
            return
        for d in list(getattr(self, "_dependents", ())):
            d.close()
        self._h = None
        if not getattr(self, "_lent", False):  # lent by another handle, which frees it
            self._free(h)

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def _handle(self):
        h = getattr(self, "_h", None)
        if not h:
            raise ValueError(f"the {self._kind} has been closed")
        return h

"""Status codes of libbosch and the exceptions they become."""

from __future__ import annotations

import enum

from ._lib import lib, text

__all__ = [
    "ErrorCode", "StopReason", "BoschError", "InvalidArgumentError", "NoMemoryError",
    "InfeasibleError", "StateError", "BadScoreError", "EvaluatorError", "OptionError",
    "BoschIOError", "StrategyError", "AnchorsError", "TooLargeError", "NotFoundError",
    "JournalCorruptError", "JournalMismatchError", "JournalBusyError", "strerror", "err_name", "is_error", "error_for_status", "check_status",
]


class ErrorCode(enum.IntEnum):
    """enum bosch_error (negative statuses)."""
    OK = 0
    E_INVALID = -1
    E_NOMEM = -2
    E_INFEASIBLE = -3
    E_STATE = -4
    E_BAD_SCORE = -5
    E_EVALUATOR = -6
    E_OPTION = -7
    E_IO = -8
    E_STRATEGY = -9
    E_ANCHORS = -10
    E_TOO_LARGE = -11
    E_NOT_FOUND = -12
    E_CORRUPT = -13
    E_MISMATCH = -14
    E_BUSY = -15


class StopReason(enum.IntEnum):
    """enum bosch_stop (positive statuses: the search ended normally)."""
    DONE = 1
    BUDGET_REACHED = 2
    TIME_REACHED = 3
    FORCED_STOP = 4
    CONVERGED = 5
    JOURNAL_FAILED = 6
    PLATEAU = 7


def strerror(status: int) -> str:
    """Human-readable description of any status (bosch_strerror)."""
    return text(lib.bosch_strerror(int(status)))


def err_name(status: int) -> str:
    """Symbolic name of any status, e.g. 'BOSCH_E_INVALID' (bosch_err_name)."""
    return text(lib.bosch_err_name(int(status)))


def is_error(status: int) -> bool:
    return bool(lib.bosch_is_error(int(status)))


class BoschError(Exception):
    """A libbosch call failed.

    Attributes: ``code`` (the negative status), ``name`` (its symbolic name,
    from bosch_err_name) and ``message`` (bosch_optimizer_last_error of the handle when
    there is one, else bosch_strerror). ``result`` is set to the
    :class:`bosch.Result` snapshot when the error ended a search.
    """

    def __init__(self, code: int, message: str | None = None):
        self.code = int(code)
        self.name = err_name(self.code)
        self.message = message if message else strerror(self.code)
        self.result = None
        super().__init__(f"{self.name}: {self.message}")


class InvalidArgumentError(BoschError, ValueError):
    """BOSCH_E_INVALID"""


class NoMemoryError(BoschError, MemoryError):
    """BOSCH_E_NOMEM"""


class InfeasibleError(BoschError):
    """BOSCH_E_INFEASIBLE: the constraints admit no mask."""


class StateError(BoschError):
    """BOSCH_E_STATE: call not allowed in the handle's current state."""


class BadScoreError(BoschError, ValueError):
    """BOSCH_E_BAD_SCORE: a score was NaN or infinite."""


class EvaluatorError(BoschError):
    """BOSCH_E_EVALUATOR: the evaluator reported a failure.

    ``evaluator_status`` holds the host status (bosch_evaluator_status) when known.
    """

    def __init__(self, code: int, message: str | None = None):
        super().__init__(code, message)
        self.evaluator_status = None


class OptionError(BoschError, ValueError):
    """BOSCH_E_OPTION: unknown option name or unparsable value."""


class BoschIOError(BoschError, OSError):
    """BOSCH_E_IO: a file could not be opened, written or read."""


class StrategyError(BoschError):
    """BOSCH_E_STRATEGY: a search strategy failed or misbehaved."""


class AnchorsError(BoschError, ValueError):
    """BOSCH_E_ANCHORS: S_full <= S_allSWA."""


class TooLargeError(BoschError):
    """BOSCH_E_TOO_LARGE: instance too large for an exact method."""


class NotFoundError(BoschError, LookupError):
    """BOSCH_E_NOT_FOUND: no such item."""


class JournalCorruptError(BoschError):
    """BOSCH_E_CORRUPT: the journal is damaged (not merely cut short) or is
    not a libbosch journal; the message gives the frame's offset."""


class JournalMismatchError(BoschError, ValueError):
    """BOSCH_E_MISMATCH: the journal was written with other settings (shape,
    constraints, options) or another library version; the message names
    every field that differs."""


class JournalBusyError(BoschError):
    """BOSCH_E_BUSY: another run holds the journal open (it is locked)."""


_CLASSES = {
    ErrorCode.E_INVALID: InvalidArgumentError,
    ErrorCode.E_NOMEM: NoMemoryError,
    ErrorCode.E_INFEASIBLE: InfeasibleError,
    ErrorCode.E_STATE: StateError,
    ErrorCode.E_BAD_SCORE: BadScoreError,
    ErrorCode.E_EVALUATOR: EvaluatorError,
    ErrorCode.E_OPTION: OptionError,
    ErrorCode.E_IO: BoschIOError,
    ErrorCode.E_STRATEGY: StrategyError,
    ErrorCode.E_ANCHORS: AnchorsError,
    ErrorCode.E_TOO_LARGE: TooLargeError,
    ErrorCode.E_NOT_FOUND: NotFoundError,
    ErrorCode.E_CORRUPT: JournalCorruptError,
    ErrorCode.E_MISMATCH: JournalMismatchError,
    ErrorCode.E_BUSY: JournalBusyError,
}


def error_for_status(status: int, message: str | None = None) -> BoschError:
    """The exception object for a negative status (not raised)."""
    cls = _CLASSES.get(status, BoschError)
    return cls(status, message)


def check_status(status: int, message_source=None) -> int:
    """Raise the matching BoschError when `status` is negative; return it otherwise.

    `message_source` is an optional zero-argument callable giving the
    handle's last error message (used when non-empty).
    """
    if status < 0:
        msg = None
        if message_source is not None:
            try:
                msg = message_source()
            except Exception:  # pragma: no cover - defensive
                msg = None
        raise error_for_status(status, msg or None)
    return status

"""Python binding of libbosch (pure ctypes): training-free selection of
sliding-window attention heads (BOSCH).

libbosch is loaded at import: ``BOSCH_LIBRARY`` (a full path), else
``BOSCH_LIBRARY_DIR``, ``ctypes.util.find_library('bosch')``, the standard
library directories and the soname ``libbosch.so.0`` (``bosch._lib`` has the
details; a failure raises :class:`LibraryNotFoundError` listing every
candidate). The optional libraries are loaded on first use:
:mod:`bosch.text` (libbosch-text: tokenizer, chat format, text and RULER
tasks) and :mod:`bosch.backend` (libbosch-torch: Qwen3 models, tasks,
evaluators, static scores). ``import bosch`` never needs them.

Masks: one entry per decision unit (layer, KV group), unit u = (u // kv_groups,
u % kv_groups); 1 = sliding-window (SWA), 0 = full attention. Inputs accept
bytes, sequences of ints/bools or one '0'/'1' string (anything else is a
TypeError); results are lists of 0/1;
candidates handed to evaluators and returned by ``Optimizer.ask()`` are bytes.
"""

from __future__ import annotations

from . import _lib
from ._lib import (LibraryNotFoundError, lib as _clib, library_file, library_path,
                   missing_symbols, text as _text)
from .baselines import (LAYER_PATTERNS, REDUCTIONS, baseline_layers, baseline_static,
                        baseline_static_heads)
from .errors import (AnchorsError, BadScoreError, BoschError, BoschIOError, ErrorCode,
                     EvaluatorError, InfeasibleError, InvalidArgumentError, JournalCorruptError,
                     JournalBusyError, JournalMismatchError, NoMemoryError, NotFoundError,
                     OptionError, StateError, StopReason, StrategyError, TooLargeError, err_name, is_error, strerror)
from .optimizer import (STAGES, HistoryRecord, JournalMode, LogLevel, OptionInfo, Optimizer,
                        Progress, Result, Stage, Variant, options, stage_name, variant_name)
from .problem import FIX_FULL, FIX_NONE, FIX_SWA, Problem, kv_saving, repair
from .selection import SCORE_KINDS, ScoreKind, Selection, read_selection, write_history
from .strategy import (PYTHON_EXCEPTION_STATUS, SolveResult, Strategy, Subproblem,
                       builtin_strategies, solve_subproblem)
from .testbed import TESTBED_PARAMS, Family as TestbedFamily, Testbed

#: Version of the loaded library (bosch_version_string).
__version__ = _text(_clib.bosch_version_string())
#: BOSCH_VERSION_NUMBER of the loaded library (major*10000 + minor*100 + patch).
version_number = int(_clib.bosch_version_number())

if version_number // 10000 != _lib.SUPPORTED_MAJOR:
    raise ImportError(f"libbosch {__version__} at {library_path} has an unsupported major "
                      f"version (this binding supports {_lib.SUPPORTED_MAJOR}.x)")



def _optional(name: str) -> bool:
    try:
        {"text": _lib.load_text, "backend": _lib.load_torch}[name]()
        return True
    except LibraryNotFoundError:
        return False


def text_available() -> bool:
    """Whether libbosch-text can be loaded (then ``bosch.text`` imports)."""
    return _optional("text")


def backend_available() -> bool:
    """Whether libbosch-torch can be loaded (then ``bosch.backend`` imports)."""
    return _optional("backend")


def __getattr__(name):
    # bosch.text and bosch.backend are imported on first access, so that
    # `import bosch` works without the optional libraries.
    if name in ("text", "backend"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "__version__", "version_number", "library_path", "library_file", "missing_symbols",
    "LibraryNotFoundError", "text_available", "backend_available",
    # problem / masks
    "Problem", "repair", "kv_saving", "FIX_NONE", "FIX_FULL", "FIX_SWA",
    # optimizer
    "Optimizer", "Result", "Progress", "HistoryRecord", "Stage", "Variant", "LogLevel",
    "JournalMode",
    "STAGES", "stage_name", "variant_name", "options", "OptionInfo",
    # strategies
    "Strategy", "Subproblem", "builtin_strategies", "solve_subproblem", "SolveResult",
    "PYTHON_EXCEPTION_STATUS",
    # result files
    "Selection", "ScoreKind", "SCORE_KINDS", "read_selection", "write_history",
    # baselines
    "baseline_layers", "baseline_static", "baseline_static_heads", "LAYER_PATTERNS",
    "REDUCTIONS",
    # testbed
    "Testbed", "TESTBED_PARAMS", "TestbedFamily",
    # errors
    "BoschError", "InvalidArgumentError", "NoMemoryError", "InfeasibleError", "StateError",
    "BadScoreError", "EvaluatorError", "OptionError", "BoschIOError", "StrategyError",
    "AnchorsError", "TooLargeError", "NotFoundError", "JournalCorruptError",
    "JournalBusyError", "JournalMismatchError", "ErrorCode", "StopReason", "strerror",
    "err_name", "is_error",
]

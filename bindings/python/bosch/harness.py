"""Scoring a selection with lm-evaluation-harness (PyPI ``lm-eval``).

Two ways, both through :func:`bosch.hf.apply` (transformers' own modeling
code, the selection's sliding windows in its attention):

* the model type ``bosch-hf``: lm-eval's ``HFLM`` with the selection applied
  after loading. Every ``HFLM`` argument works as for ``--model hf``; three
  are added: ``selection`` (a saved PREFIX.json; none: the model as it is),
  ``window`` and ``sink`` (default: the selection's own)::

      python -m bosch.harness --model bosch-hf \\
          --model_args pretrained=DIR,selection=sel.json,device=cpu,dtype=float32 \\
          --tasks niah_local --include_path tasks/

  ``python -m bosch.harness`` is lm-eval's own command line (``lm-eval``)
  with ``bosch-hf`` registered; nothing else changes, so ``--tasks ruler``
  or ``longbench`` run as they do with ``--model hf``;
* from Python: ``lm = bosch.harness.HFLM(pretrained=model, selection=...)``
  for ``lm_eval.simple_evaluate(model=lm, ...)``, or ``register()`` then
  ``simple_evaluate(model="bosch-hf", model_args=...)``.

The selection must have the model's shape (hf.apply checks it). Importing
this module needs neither lm-eval nor torch; the class is made on first use.
"""
from __future__ import annotations

import sys

__all__ = ["HFLM", "register", "main"]

_CLASS = None


def _make_class():
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    try:
        from lm_eval.api.registry import register_model
        from lm_eval.models.huggingface import HFLM as _HFLM
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("bosch.harness needs lm-evaluation-harness: pip install lm-eval") from e
    from . import hf

    @register_model("bosch-hf")
    class BoschHFLM(_HFLM):
        """lm-eval's HFLM with a libbosch selection applied (bosch.hf.apply)."""

        def __init__(self, selection=None, window=None, sink=None, **kwargs):
            super().__init__(**kwargs)
            self.bosch_selection = None
            if selection is not None and str(selection) != "":
                w = None if window in (None, "") else int(window)
                s = None if sink in (None, "") else int(sink)
                self.bosch_selection = hf.apply(self.model, selection, window=w, sink=s)

    _CLASS = BoschHFLM
    return _CLASS


def register():
    """Registers the model type ``bosch-hf`` with lm-eval; returns its class."""
    return _make_class()


def HFLM(**kwargs):  # noqa: N802 - named after the class it makes
    """lm-eval's HFLM with ``selection`` (and ``window``, ``sink``) applied."""
    return _make_class()(**kwargs)


def main(argv=None):
    """lm-eval's command line with ``bosch-hf`` registered."""
    register()
    from lm_eval.__main__ import cli_evaluate
    if argv is not None:
        sys.argv = [sys.argv[0]] + list(argv)
    cli_evaluate()


if __name__ == "__main__":
    main()

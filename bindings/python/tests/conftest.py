"""Shared fixtures of the binding tests.

The binding is imported from the source tree (meson sets PYTHONPATH and
BOSCH_LIBRARY); running pytest by hand works the same way:

    BOSCH_LIBRARY=build/lib/libbosch.so.0 PYTHONPATH=bindings/python \
        python3 -m pytest bindings/python/tests
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)
if PKG_ROOT not in sys.path:
    sys.path.insert(0, PKG_ROOT)

import bosch  # noqa: E402


@pytest.fixture
def problem():
    """8 layers x 4 KV groups (32 units), target 16 SWA units."""
    return bosch.Problem(8, 4, ratio=0.5)


@pytest.fixture
def testbed():
    return bosch.Testbed(8, 4, seed=3)


@pytest.fixture
def small_problem():
    """4 layers x 4 KV groups (16 units), target 8 SWA units."""
    return bosch.Problem(4, 4, ratio=0.5)


@pytest.fixture
def small_testbed():
    return bosch.Testbed(4, 4, seed=11)


def _make_optimizer(problem, **options):
    opts = dict(seed=7, budget=120, batch_size=8)
    opts.update(options)
    return bosch.Optimizer(problem, **opts)


@pytest.fixture
def make_opt():
    """Factory: Optimizer with small defaults (seed 7, budget 120, batch 8)."""
    return _make_optimizer

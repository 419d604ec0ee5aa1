"""Library loading, version and status/error plumbing."""

import os
import subprocess
import sys

import pytest

import bosch
from bosch import _lib


def test_library_loaded_from_env_var():
    env = os.environ.get("BOSCH_LIBRARY")
    if env:
        assert bosch.library_path == env
    assert bosch.library_path


def test_every_public_symbol_is_exported():
    assert bosch.missing_symbols == []


def test_prototypes_declared():
    # Every function of the C API has explicit argtypes/restype.
    for name in _lib._PROTOTYPES:
        fn = getattr(_lib.lib, name)
        assert fn.argtypes is not None, name


def test_version():
    assert bosch.__version__ == "0.1.0"
    major, minor, patch = (int(x) for x in bosch.__version__.split("."))
    assert bosch.version_number == major * 10000 + minor * 100 + patch


def test_bad_library_path_gives_import_error(tmp_path):
    code = ("try:\n    import bosch\nexcept ImportError as e:\n"
            "    print(type(e).__mro__[1].__name__, e)\n")
    env = dict(os.environ, BOSCH_LIBRARY=str(tmp_path / "nope.so"))
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(bosch.__file__)))
    env["PYTHONPATH"] = pkg_root
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ImportError") and "BOSCH_LIBRARY" in proc.stdout


@pytest.mark.parametrize("code", list(bosch.ErrorCode))
def test_error_names_and_messages(code):
    name = bosch.err_name(code)
    if code == 0:
        assert name == "BOSCH_OK"
        assert not bosch.is_error(code)
    else:
        assert name == "BOSCH_" + code.name
        assert bosch.is_error(code)
    assert bosch.strerror(code)


@pytest.mark.parametrize("code", list(bosch.StopReason))
def test_stop_names(code):
    assert bosch.err_name(code) == "BOSCH_" + code.name
    assert not bosch.is_error(code)
    assert bosch.strerror(code)


def test_unknown_status_has_text():
    assert bosch.strerror(-12345)
    assert bosch.err_name(-12345)


@pytest.mark.parametrize("code,cls", [
    (bosch.ErrorCode.E_INVALID, bosch.InvalidArgumentError),
    (bosch.ErrorCode.E_NOMEM, bosch.NoMemoryError),
    (bosch.ErrorCode.E_INFEASIBLE, bosch.InfeasibleError),
    (bosch.ErrorCode.E_STATE, bosch.StateError),
    (bosch.ErrorCode.E_BAD_SCORE, bosch.BadScoreError),
    (bosch.ErrorCode.E_EVALUATOR, bosch.EvaluatorError),
    (bosch.ErrorCode.E_OPTION, bosch.OptionError),
    (bosch.ErrorCode.E_IO, bosch.BoschIOError),
    (bosch.ErrorCode.E_STRATEGY, bosch.StrategyError),
    (bosch.ErrorCode.E_ANCHORS, bosch.AnchorsError),
    (bosch.ErrorCode.E_TOO_LARGE, bosch.TooLargeError),
    (bosch.ErrorCode.E_NOT_FOUND, bosch.NotFoundError),
])
def test_error_classes(code, cls):
    from bosch.errors import check_status, error_for_status
    err = error_for_status(code)
    assert type(err) is cls
    assert isinstance(err, bosch.BoschError)
    assert err.code == code
    assert err.name == bosch.err_name(code)
    assert err.message == bosch.strerror(code)
    with pytest.raises(cls) as info:
        check_status(code, lambda: "handle message")
    assert info.value.message == "handle message"
    assert "handle message" in str(info.value)
    assert check_status(0) == 0 and check_status(2) == 2


def test_stage_and_variant_names():
    assert [bosch.stage_name(s) for s in range(4)] == list(bosch.STAGES)
    assert bosch.stage_name(99) == "unknown"
    assert [bosch.variant_name(v) for v in bosch.Variant] == [
        "full", "probe-only", "group-only", "layer-level"]
    assert bosch.variant_name(17) is None


def test_every_public_function_of_the_core_headers_is_declared():
    # Each non-deprecated BOSCH_API function of include/bosch/*.h (the core's
    # headers; torch.h and text.h: test_backend.py) has a prototype in _lib.
    import glob
    import re
    inc = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(bosch.__file__)))), "..", "include", "bosch")
    headers = [h for h in glob.glob(os.path.join(inc, "*.h"))
               if os.path.basename(h) not in ("torch.h", "text.h")]
    if not headers:
        pytest.skip("not a source tree")
    public = set()
    for h in headers:
        for deprecated, name in re.findall(r"BOSCH_API\s+(BOSCH_DEPRECATED\([^)]*\)\s+)?"
                                           r"[\w\s\*]*?\b(bosch_\w+)\s*\(", open(h).read()):
            if not deprecated:
                public.add(name)
    assert len(public) > 150
    assert public - set(_lib._PROTOTYPES) == set()
    assert set(_lib._PROTOTYPES) - public == set()


def test_option_table():
    table = bosch.options()
    names = [o.name for o in table]
    assert {"seed", "budget", "variant", "strategy", "journal", "threads"} <= set(names)
    by = {o.name: o for o in table}
    assert by["seed"].type == "uint" and by["probe_fraction"].type == "double"
    assert by["probe_fraction"].range == (0.0, 1.0)
    assert by["variant"].type == "choice" and "layer-level" in by["variant"].choices
    assert by["journal"].type == "path" and by["journal"].range is None
    assert all(o.doc for o in table)
    opt = bosch.Optimizer(bosch.Problem(2, 2), seed=5, probe_fraction=0.25, variant="group-only")
    assert opt.get_option_value("seed") == 5
    assert opt.get_option_value("probe_fraction") == 0.25
    assert opt.get_option_value("variant") == "group-only"
    with pytest.raises(bosch.OptionError):
        opt.get_option_value("no_such_option")

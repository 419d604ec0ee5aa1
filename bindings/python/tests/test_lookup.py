"""Library lookup (bosch._lib.library_candidates) and its errors; the
optional libraries are loaded lazily."""

import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

import bosch
from bosch import _lib

PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(bosch.__file__)))
LIB_DIR = os.path.dirname(_lib.library_file)


def run_python(code: str, **env_changes) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter importing the binding from the source
    tree, with the BOSCH_* variables of this process replaced by env_changes
    (None removes one)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOSCH_")}
    env["PYTHONPATH"] = PKG_ROOT
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def no_find_library(monkeypatch):
    monkeypatch.setattr(_lib.ctypes.util, "find_library", lambda name: f"/found/lib{name}.so.0")


def test_explicit_path_is_the_only_candidate():
    for name, var in (("bosch", "BOSCH_LIBRARY"), ("bosch-text", "BOSCH_TEXT_LIBRARY"),
                      ("bosch-torch", "BOSCH_TORCH_LIBRARY")):
        env = {var: "/x/lib.so", "BOSCH_LIBRARY_DIR": "/d"}
        assert _lib.library_candidates(name, "/loaded", env) == (["/x/lib.so"], True)


def test_candidate_order_of_libbosch(no_find_library):
    env = {"BOSCH_LIBRARY_DIR": os.pathsep.join(["/a", "/b"])}
    cands, explicit = _lib.library_candidates("bosch", None, env)
    assert not explicit
    assert cands[:4] == ["/a/libbosch.so.0", "/a/libbosch.so", "/b/libbosch.so.0",
                         "/b/libbosch.so"]
    assert cands[4] == "/found/libbosch.so.0"
    std = [os.path.join(d, "libbosch.so.0") for d in _lib.standard_dirs()]
    assert cands[5:5 + len(std)] == std
    assert cands[-2:] == ["libbosch.so.0", "libbosch.so"]
    assert len(cands) == len(set(cands))


def test_candidate_order_of_the_optional_libraries(no_find_library):
    env = {"BOSCH_LIBRARY_DIR": "/a"}
    cands, _ = _lib.library_candidates("bosch-torch", "/usr/local/lib/x", env)
    assert cands[:6] == [
        "/a/libbosch-torch.so.0", "/a/libbosch-torch.so", "/a/torch/libbosch-torch.so.0",
        # beside the loaded libbosch: an install, then a build tree's lib/torch
        "/usr/local/lib/x/libbosch-torch.so.0", "/usr/local/lib/x/libbosch-torch.so",
        "/usr/local/lib/x/torch/libbosch-torch.so.0"]
    assert cands[6] == "/found/libbosch-torch.so.0"
    assert cands[-2:] == ["libbosch-torch.so.0", "libbosch-torch.so"]
    cands, _ = _lib.library_candidates("bosch-text", "/L", {})
    assert cands[:3] == ["/L/libbosch-text.so.0", "/L/libbosch-text.so",
                         "/L/text/libbosch-text.so.0"]


def test_standard_dirs():
    ma = _lib.multiarch()
    if sysconfig.get_config_var("MULTIARCH"):
        assert ma == sysconfig.get_config_var("MULTIARCH")
    dirs = _lib.standard_dirs()
    # /usr/local, /usr, then the interpreter's prefixes (a venv, conda)
    first = ([f"lib/{ma}"] if ma else []) + ["lib64", "lib"]
    assert dirs[:len(first) * 2] == [os.path.join(p, s) for p in ("/usr/local", "/usr")
                                     for s in first]
    assert os.path.join(sys.prefix, "lib") in dirs
    assert os.path.join(sys.base_prefix, "lib") in dirs
    assert len(dirs) == len(set(dirs))


def test_library_dir_finds_libbosch(tmp_path):
    shutil.copy(_lib.library_file, tmp_path / "libbosch.so.0")
    proc = run_python("import bosch; print(bosch.library_file)", BOSCH_LIBRARY_DIR=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "libbosch.so.0")


def test_library_dir_of_a_build_tree_finds_the_optional_libraries():
    # BOSCH_LIBRARY_DIR=build/lib: libbosch there, the others in lib/text, lib/torch
    code = """
from bosch import _lib
for load in (_lib.load_text, _lib.load_torch):
    try:
        print(load()[1])
    except ImportError:
        print("-")
"""
    proc = run_python(code, BOSCH_LIBRARY_DIR=LIB_DIR)
    assert proc.returncode == 0, proc.stderr
    for line, sub, soname in zip(proc.stdout.split(), ("text", "torch"),
                                 ("libbosch-text.so.0", "libbosch-torch.so.0")):
        if os.path.exists(os.path.join(LIB_DIR, sub, soname)):
            assert line.startswith(os.path.join(LIB_DIR, sub) + os.sep), line


def test_bad_explicit_path_names_the_variable(tmp_path):
    code = ("import bosch\n")
    proc = run_python(code, BOSCH_LIBRARY=tmp_path / "nope.so")
    assert proc.returncode != 0
    assert "LibraryNotFoundError" in proc.stderr and "BOSCH_LIBRARY=" in proc.stderr
    assert str(tmp_path / "nope.so") in proc.stderr
    code = ("try:\n    import bosch\nexcept ImportError as e:\n"
            "    print(type(e).__name__, e.library, len(e.tried))\n")
    proc = run_python(code, BOSCH_LIBRARY=tmp_path / "nope.so")
    assert proc.stdout.split() == ["LibraryNotFoundError", "bosch", "1"]


INSTALLED = """
import ctypes.util, sys
if ctypes.util.find_library({name!r}):
    print("installed")
    sys.exit(0)
"""


def test_not_found_lists_every_candidate(tmp_path):
    code = INSTALLED.format(name="bosch") + \
        "try:\n    import bosch\nexcept ImportError as e:\n    print(e)\n"
    proc = run_python(code, BOSCH_LIBRARY_DIR=tmp_path, LD_LIBRARY_PATH="")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    if out.strip() == "installed":
        pytest.skip("a libbosch is installed on this system")
    assert "libbosch (libbosch.so.0) could not be loaded" in out
    for d in [str(tmp_path)] + _lib.standard_dirs():
        assert os.path.join(d, "libbosch.so.0") + ": no such file" in out
    assert "  libbosch.so.0: " in out and "  libbosch.so: " in out


def test_import_bosch_without_the_optional_libraries(tmp_path):
    code = """
import bosch
print(bosch.__version__, bosch.text_available(), bosch.backend_available())
try:
    import bosch.backend
except ImportError as e:
    print(type(e).__name__, e.library)
    print(e)
"""
    proc = run_python(code, BOSCH_LIBRARY=_lib.library_file,
                      BOSCH_TORCH_LIBRARY=tmp_path / "none.so")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[2] == "False"
    assert lines[1] == "LibraryNotFoundError bosch-torch"
    assert f"BOSCH_TORCH_LIBRARY={tmp_path / 'none.so'}" in proc.stdout
    assert "-Dtorch=enabled" in proc.stdout


def test_optional_lookup_lists_what_was_tried(tmp_path):
    # libbosch alone in a folder: libbosch-text is looked for beside it, then elsewhere
    shutil.copy(_lib.library_file, tmp_path / "libbosch.so.0")
    code = INSTALLED.format(name="bosch-text") + """
import bosch
try:
    bosch.text.Tokenizer
except ImportError as e:
    print(e)
"""
    proc = run_python(code, BOSCH_LIBRARY=tmp_path / "libbosch.so.0", LD_LIBRARY_PATH="")
    assert proc.returncode == 0, proc.stderr
    if proc.stdout.strip() == "installed":
        pytest.skip("a libbosch-text is installed on this system")
    assert "libbosch-text (libbosch-text.so.0) could not be loaded" in proc.stdout
    assert str(tmp_path / "libbosch-text.so.0") + ": no such file" in proc.stdout
    assert str(tmp_path / "text" / "libbosch-text.so.0") + ": no such file" in proc.stdout

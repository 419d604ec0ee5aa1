"""The package: one version source, a wheel and an sdist built by Debian's
setuptools with nothing downloaded, and a real ``pip install`` into a
temporary venv (offline: --no-index --no-build-isolation), imported from
outside the source tree. Builds run on a copy of the package folder, so the
source tree gets no build/ or egg-info."""

import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

import bosch

PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(bosch.__file__)))
SOURCE_ROOT = os.path.normpath(os.path.join(PKG_ROOT, "..", ".."))

if not os.path.isfile(os.path.join(PKG_ROOT, "pyproject.toml")):
    pytest.skip("not run from the source tree", allow_module_level=True)
if importlib.util.find_spec("setuptools") is None:
    pytest.skip("setuptools not installed (Debian: python3-setuptools)", allow_module_level=True)

ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_FIND_LINKS")}
ENV["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"


def _version():
    with open(os.path.join(SOURCE_ROOT, "VERSION")) as f:
        return f.read().strip()


def _copy(tmp_path):
    """The package folder, links resolved (VERSION), without caches."""
    dst = tmp_path / "src"
    shutil.copytree(PKG_ROOT, dst, symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    return dst


def _build(kind, src, out):
    """setuptools.build_meta.build_<kind> in `src`, as pip calls it."""
    code = (f"import setuptools.build_meta as b; print(b.build_{kind}({str(out)!r}))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=src, env=ENV, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_version_has_one_source():
    # VERSION is read by meson.build's project() and by setuptools; the
    # library built from this tree reports it at run time
    with open(os.path.join(PKG_ROOT, "VERSION")) as f:
        assert f.read().strip() == _version()
    with open(os.path.join(SOURCE_ROOT, "meson.build")) as f:
        assert "version : files('VERSION')" in f.read()
    assert bosch.__version__ == _version()


def test_wheel(tmp_path):
    name = _build("wheel", _copy(tmp_path), tmp_path)
    version = _version()
    assert name == f"libbosch-{version}-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / name) as z:
        names = set(z.namelist())
        modules = {f"bosch/{f}" for f in os.listdir(os.path.join(PKG_ROOT, "bosch"))
                   if f.endswith(".py") or f == "py.typed"}
        assert "bosch/py.typed" in modules  # PEP 561: typed
        di = f"libbosch-{version}.dist-info"
        assert modules <= names
        assert {n for n in names if not n.startswith(di)} == modules  # nothing else
        meta = z.read(f"{di}/METADATA").decode()
        assert "Name: libbosch\n" in meta and f"Version: {version}\n" in meta
        assert "Requires-Python: >=3.11" in meta and "Provides-Extra: numpy" in meta
        assert "Root-Is-Purelib: true" in z.read(f"{di}/WHEEL").decode()


def test_sdist_builds_a_wheel_of_the_same_version(tmp_path):
    name = _build("sdist", _copy(tmp_path), tmp_path)
    with tarfile.open(tmp_path / name) as t:
        t.extractall(tmp_path / "x")  # our own archive
    root = tmp_path / "x" / name[:-len(".tar.gz")]
    for f in ("PKG-INFO", "VERSION", "bosch/_lib.py", "examples/search_organism.py"):
        assert (root / f).is_file(), f
    # built from the unpacked sdist (no meson.build, no link): same version
    out = tmp_path / "wheel"
    out.mkdir()
    assert _build("wheel", root, out) == f"libbosch-{_version()}-py3-none-any.whl"


def _venv_available() -> bool:
    return importlib.util.find_spec("venv") is not None and \
        importlib.util.find_spec("ensurepip") is not None


@pytest.mark.install
@pytest.mark.skipif(not _venv_available(), reason="venv/ensurepip not available")
def test_pip_install_into_a_venv(tmp_path):
    """README's command: pip install of the source folder into a fresh venv
    that sees Debian's setuptools, no index, no build isolation; the package
    is imported from outside the tree."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=120)
    py = str(venv / "bin" / "python")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    src = _copy(tmp_path)
    cmd = [py, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--quiet", str(src)]
    proc = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=300, cwd=outside)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code = ("import bosch, importlib.metadata as m; "
            "print(bosch.__version__, m.version('libbosch'), bosch.__file__)")
    proc = subprocess.run([py, "-c", code], env=dict(ENV, BOSCH_LIBRARY=bosch.library_file),
                          capture_output=True, text=True, cwd=outside, timeout=60)
    assert proc.returncode == 0, proc.stderr
    version, dist_version, path = proc.stdout.split()
    assert version == dist_version == _version()
    assert path.startswith(str(venv)) and "site-packages" in path

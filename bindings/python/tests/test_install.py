"""The package: version from one place, the in-tree build backend's wheel and
sdist, and a real ``pip install`` into a temporary venv (offline: --no-index),
imported from outside the source tree."""

import base64
import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import tarfile
import zipfile

import pytest

import bosch

PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(bosch.__file__)))
SOURCE_ROOT = os.path.normpath(os.path.join(PKG_ROOT, "..", ".."))
BACKEND = os.path.join(PKG_ROOT, "_build", "bosch_build.py")

if not os.path.isfile(os.path.join(PKG_ROOT, "pyproject.toml")):
    pytest.skip("not run from the source tree", allow_module_level=True)


def _backend():
    spec = importlib.util.spec_from_file_location("bosch_build", BACKEND)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _meson_version():
    text = open(os.path.join(SOURCE_ROOT, "meson.build")).read()
    return re.search(r"project\([^)]*?version\s*:\s*'([^']+)'", text, re.S).group(1)


def test_version_has_one_source():
    # the package's version is meson.build's, which is the library's
    assert _backend().project_version() == _meson_version() == bosch.__version__


def test_wheel(tmp_path):
    b = _backend()
    assert b.get_requires_for_build_wheel() == []  # nothing to download
    name = b.build_wheel(str(tmp_path))
    version = _meson_version()
    assert name == f"libbosch-{version}-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / name) as z:
        names = set(z.namelist())
        modules = {f"bosch/{f}" for f in os.listdir(os.path.join(PKG_ROOT, "bosch"))
                   if f.endswith(".py")}
        di = f"libbosch-{version}.dist-info"
        assert modules | {f"{di}/METADATA", f"{di}/WHEEL", f"{di}/RECORD",
                          f"{di}/top_level.txt"} == names
        meta = z.read(f"{di}/METADATA").decode()
        assert "Name: libbosch\n" in meta and f"Version: {version}\n" in meta
        assert "Requires-Python: >=3.11" in meta and 'extra == "numpy"' in meta
        assert "Root-Is-Purelib: true" in z.read(f"{di}/WHEEL").decode()
        for line in z.read(f"{di}/RECORD").decode().splitlines():
            path, digest, size = line.split(",")
            if path.endswith("RECORD"):
                continue
            data = z.read(path)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + want.decode() and int(size) == len(data), path


def test_sdist_builds_a_wheel_of_the_same_version(tmp_path):
    name = _backend().build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as t:
        t.extractall(tmp_path / "x")  # our own archive
    root = tmp_path / "x" / name[:-len(".tar.gz")]
    assert (root / "PKG-INFO").is_file() and (root / "bosch" / "_lib.py").is_file()
    # built from the unpacked sdist (no meson.build): the version of PKG-INFO
    code = (f"import sys; sys.path.insert(0, {str(root / '_build')!r}); import bosch_build; "
            f"print(bosch_build.build_wheel({str(tmp_path)!r}))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"libbosch-{_meson_version()}-py3-none-any.whl"


def _venv_available() -> bool:
    return importlib.util.find_spec("venv") is not None and \
        importlib.util.find_spec("ensurepip") is not None


@pytest.mark.install
@pytest.mark.skipif(not _venv_available(), reason="venv/ensurepip not available")
def test_pip_install_into_a_venv(tmp_path):
    """pip install of the source folder into a fresh venv (no system
    packages, no index), with build isolation and then without; the package
    is imported from outside the tree."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_FIND_LINKS")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for extra in ([], ["--no-build-isolation", "--force-reinstall"]):
        cmd = [py, "-m", "pip", "install", "--no-index", "--quiet", *extra, PKG_ROOT]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        code = ("import bosch, importlib.metadata as m; "
                "print(bosch.__version__, m.version('libbosch'), bosch.__file__)")
        proc = subprocess.run([py, "-c", code], env=dict(env, BOSCH_LIBRARY=bosch.library_file),
                              capture_output=True, text=True, cwd=outside, timeout=60)
        assert proc.returncode == 0, proc.stderr
        version, dist_version, path = proc.stdout.split()
        assert version == dist_version == _meson_version()
        assert path.startswith(str(venv)) and "site-packages" in path

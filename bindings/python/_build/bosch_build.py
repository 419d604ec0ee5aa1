"""In-tree PEP 517 build backend of the libbosch Python binding.

Standard library only (Python >= 3.11: tomllib), so a build needs nothing
from a package index: ``pip install ./bindings/python`` works offline with
pip's default build isolation as well as with ``--no-build-isolation``.

It builds a pure-Python wheel (py3-none-any) of the packages listed in
[tool.bosch-build] packages, an sdist, and PEP 660 editable wheels (a .pth
file pointing at this folder). Metadata comes from [project] of
pyproject.toml; the version from the top-level meson.build (project(...,
version : 'X.Y.Z')), or from PKG-INFO when building from an sdist.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import tomllib
import zipfile

__all__ = ["build_wheel", "build_sdist", "build_editable", "get_requires_for_build_wheel",
           "get_requires_for_build_sdist", "get_requires_for_build_editable",
           "prepare_metadata_for_build_wheel", "prepare_metadata_for_build_editable",
           "project_version"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_KNOWN = {"name", "dynamic", "description", "readme", "requires-python", "license",
          "classifiers", "optional-dependencies", "dependencies", "urls"}
_EPOCH = 315532800  # 1980-01-01, the earliest zip time


def _pyproject() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def project_version(root: str = ROOT) -> str:
    """The library's version: the Version of PKG-INFO (an unpacked sdist),
    else project()'s `version` in ../../meson.build (the source tree)."""
    pkg_info = os.path.join(root, "PKG-INFO")
    if os.path.isfile(pkg_info):
        with open(pkg_info, encoding="utf-8") as f:
            for line in f:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    meson = os.path.join(root, "..", "..", "meson.build")
    if os.path.isfile(meson):
        with open(meson, encoding="utf-8") as f:
            text = f.read()
        m = re.search(r"\bproject\s*\((.*?)\)", text, re.S)
        v = m and re.search(r"\bversion\s*:\s*'([^']+)'", m.group(1))
        if not v:
            raise RuntimeError(f"no version in project() of {meson}")
        return v.group(1)
    raise RuntimeError("cannot determine the version: neither ../../meson.build nor PKG-INFO")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _metadata() -> tuple[str, str, str]:
    """(distribution name, version, METADATA text)."""
    proj = _pyproject()["project"]
    unknown = set(proj) - _KNOWN
    if unknown:
        raise RuntimeError(f"bosch_build: unsupported [project] keys {sorted(unknown)}")
    if proj.get("dynamic", []) != ["version"] or "version" in proj:
        raise RuntimeError("bosch_build: the version must be dynamic (it is meson.build's)")
    name, version = proj["name"], project_version()
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if "description" in proj:
        lines.append(f"Summary: {proj['description']}")
    if "requires-python" in proj:
        lines.append(f"Requires-Python: {proj['requires-python']}")
    lic = proj.get("license", {})
    if "text" in lic:
        lines.append(f"License: {lic['text']}")
    for c in proj.get("classifiers", []):
        lines.append(f"Classifier: {c}")
    for label, url in proj.get("urls", {}).items():
        lines.append(f"Project-URL: {label}, {url}")
    for dep in proj.get("dependencies", []):
        lines.append(f"Requires-Dist: {dep}")
    for extra, deps in proj.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for dep in deps:
            lines.append(f'Requires-Dist: {dep}; extra == "{extra}"')
    body = ""
    readme = proj.get("readme")
    if readme:
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = f.read()
        lines.append("Description-Content-Type: text/markdown")
    return name, version, "\n".join(lines) + "\n\n" + body


def _package_files() -> list[tuple[str, str]]:
    """(archive name, path) of every .py file of the packages."""
    out = []
    for pkg in _pyproject().get("tool", {}).get("bosch-build", {}).get("packages", []):
        base = os.path.join(ROOT, pkg)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for fn in sorted(filenames):
                if fn.endswith((".py", ".typed")):
                    full = os.path.join(dirpath, fn)
                    out.append((os.path.relpath(full, ROOT).replace(os.sep, "/"), full))
    if not out:
        raise RuntimeError("bosch_build: no package files ([tool.bosch-build] packages)")
    return out


def _dist_info_files(name: str, version: str, metadata: str) -> dict[str, bytes]:
    di = f"{_norm(name)}-{version}.dist-info"
    wheel = ("Wheel-Version: 1.0\nGenerator: bosch_build\nRoot-Is-Purelib: true\n"
             "Tag: py3-none-any\n")
    tops = sorted({a.split("/")[0] for a, _ in _package_files()})
    return {f"{di}/METADATA": metadata.encode(), f"{di}/WHEEL": wheel.encode(),
            f"{di}/top_level.txt": ("\n".join(tops) + "\n").encode()}


def _zip_time() -> tuple:
    t = max(int(os.environ.get("SOURCE_DATE_EPOCH", _EPOCH)), _EPOCH)
    return time.gmtime(t)[:6]


def _write_wheel(directory: str, entries: dict[str, bytes], name: str, version: str) -> str:
    filename = f"{_norm(name)}-{version}-py3-none-any.whl"
    di = f"{_norm(name)}-{version}.dist-info"
    record = []
    stamp = _zip_time()
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for arc in sorted(entries):
            data = entries[arc]
            info = zipfile.ZipInfo(arc, stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{arc},sha256={digest.decode()},{len(data)}")
        record.append(f"{di}/RECORD,,")
        info = zipfile.ZipInfo(f"{di}/RECORD", stamp)
        info.external_attr = 0o644 << 16
        z.writestr(info, "\n".join(record) + "\n")
    return filename


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# -- PEP 517 hooks -------------------------------------------------------------
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version, metadata = _metadata()
    files = _dist_info_files(name, version, metadata)
    for arc, data in files.items():
        path = os.path.join(metadata_directory, *arc.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return f"{_norm(name)}-{version}.dist-info"


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version, metadata = _metadata()
    entries = {arc: _read(path) for arc, path in _package_files()}
    entries.update(_dist_info_files(name, version, metadata))
    return _write_wheel(wheel_directory, entries, name, version)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel holding a .pth file that puts this folder on sys.path."""
    name, version, metadata = _metadata()
    entries = {f"{_norm(name)}.pth": (ROOT + "\n").encode()}
    entries.update(_dist_info_files(name, version, metadata))
    return _write_wheel(wheel_directory, entries, name, version)


def build_sdist(sdist_directory, config_settings=None):
    name, version, metadata = _metadata()
    base = f"{_norm(name)}-{version}"
    filename = f"{base}.tar.gz"
    members = {"PKG-INFO": metadata.encode(), "pyproject.toml":
               _read(os.path.join(ROOT, "pyproject.toml")),
               "_build/bosch_build.py": _read(os.path.abspath(__file__))}
    for extra in ("README.md",):
        if os.path.isfile(os.path.join(ROOT, extra)):
            members[extra] = _read(os.path.join(ROOT, extra))
    for arc, path in _package_files():
        members[arc] = _read(path)
    for sub in ("tests", "examples"):
        d = os.path.join(ROOT, sub)
        for fn in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if fn.endswith(".py"):
                members[f"{sub}/{fn}"] = _read(os.path.join(d, fn))
    mtime = max(int(os.environ.get("SOURCE_DATE_EPOCH", _EPOCH)), _EPOCH)
    path = os.path.join(sdist_directory, filename)
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as t:
        for arc in sorted(members):
            data = members[arc]
            info = tarfile.TarInfo(f"{base}/{arc}")
            info.size, info.mtime, info.mode = len(data), mtime, 0o644
            t.addfile(info, io.BytesIO(data))
    return filename

"""A PEP 517/660 build backend for the ``tiffin`` package, standard library only, so that
``pip install clients/python`` needs no network (no setuptools download into the build environment).

It packs ``tiffin/**/*.py`` and the metadata from ``pyproject.toml`` into a pure-Python wheel
(``tiffin-<version>-py3-none-any.whl``); ``build_editable`` makes a wheel whose ``.pth`` file points at
this directory; ``build_sdist`` packs the sources. Thread-safety: not applicable (called once by pip).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def _project() -> dict:
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _names():
    p = _project()
    return p["name"], p["version"]


def _metadata() -> str:
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p.get('description', '')}", f"Requires-Python: {p.get('requires-python', '>=3')}"]
    lic = p.get("license", {}).get("text")
    if lic:
        lines.append(f"License: {lic}")
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    readme = os.path.join(HERE, p.get("readme", "README.md"))
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _wheel_file() -> str:
    return "Wheel-Version: 1.0\nGenerator: tiffin-build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _sources():
    """(archive name, path) of every package source file."""
    root = os.path.join(HERE, "tiffin")
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(d, f)
                yield os.path.relpath(path, HERE).replace(os.sep, "/"), path


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _write_wheel(directory: str, files: list) -> str:
    name, version = _names()
    dist_info = f"{name}-{version}.dist-info"
    wheel = f"{name}-{version}-py3-none-any.whl"
    files = files + [(f"{dist_info}/METADATA", _metadata().encode()), (f"{dist_info}/WHEEL", _wheel_file().encode()),
                     (f"{dist_info}/top_level.txt", b"tiffin\n")]
    record = [f"{arc},{_digest(data)},{len(data)}" for arc, data in files] + [f"{dist_info}/RECORD,,"]
    with zipfile.ZipFile(os.path.join(directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
        z.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")
    return wheel


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version = _names()
    dist_info = f"{name}-{version}.dist-info"
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(metadata_directory, dist_info, "WHEEL"), "w") as f:
        f.write(_wheel_file())
    return dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = []
    for arc, path in _sources():
        with open(path, "rb") as f:
            files.append((arc, f.read()))
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [("tiffin_editable.pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    name, version = _names()
    base = f"{name}-{version}"
    out = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, out), "w:gz") as t:
        for rel in ("pyproject.toml", "_tiffin_build.py", "README.md"):
            if os.path.exists(os.path.join(HERE, rel)):
                t.add(os.path.join(HERE, rel), f"{base}/{rel}")
        for arc, path in _sources():
            t.add(path, f"{base}/{arc}")
        pkg_info = _metadata().encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        t.addfile(info, io.BytesIO(pkg_info))
    return out

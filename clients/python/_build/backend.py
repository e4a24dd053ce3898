"""The build backend of the indexd package (PEP 517, in the source tree:
pyproject.toml's backend-path), written with the standard library only.

Why not setuptools: `pip install ./clients/python` must work with no
package index reachable, and setuptools builds wheels only with the
`wheel` package (before setuptools 70.1), which a machine may lack; pip
cannot fetch either for its isolated build environment then. This
backend needs nothing: it packs the indexd directory (modules, tools.json,
py.typed) into a pure-Python wheel, with the metadata of pyproject.toml's
[project] table. It builds wheels, editable wheels (pip install -e) and
source archives.

The wheel format: PEP 427 (a zip of the package and NAME-VERSION.dist-info
holding METADATA, WHEEL and RECORD); the editable wheel holds a .pth file
naming this directory (PEP 660).
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "indexd"
TAG = "py3-none-any"
# Files' times in the archives, so that a build is the same every time
# (SOURCE_DATE_EPOCH overrides it); zip cannot hold times before 1980.
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))


def _project():
    """pyproject.toml's [project] table: read with tomllib where Python
    has it (3.11), else the flat subset this project's file uses (keys
    with string values, one a line)."""
    path = os.path.join(ROOT, "pyproject.toml")
    try:
        import tomllib
    except ImportError:
        tomllib = None
    if tomllib is not None:
        with open(path, "rb") as f:
            return tomllib.load(f)["project"]
    table, out = None, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                table = line
                continue
            m = re.match(r'([A-Za-z0-9_-]+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(#.*)?$', line)
            if table == "[project]" and m:
                out[m.group(1)] = m.group(2).encode().decode("unicode_escape")
    return out


def _names():
    p = _project()
    return p["name"], p["version"], re.sub(r"[-_.]+", "_", p["name"]).lower()


def _metadata():
    """The METADATA (PKG-INFO) text: core metadata 2.1."""
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % p["name"],
        "Version: %s" % p["version"],
        "Summary: %s" % p.get("description", ""),
        "Requires-Python: %s" % p.get("requires-python", ">=3"),
    ]
    body = ""
    readme = p.get("readme")
    if isinstance(readme, str):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _package_files():
    """The package's files, relative to ROOT, in a stable order (compiled
    files left out)."""
    out = []
    for d, dirs, files in os.walk(os.path.join(ROOT, PACKAGE)):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for name in sorted(files):
            if not name.endswith((".pyc", ".pyo")):
                out.append(os.path.relpath(os.path.join(d, name), ROOT))
    return out


class _Wheel:
    """A wheel being written, with its RECORD."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.record = []

    def add(self, name, data):
        info = zipfile.ZipInfo(name, date_time=_zip_time())
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append("%s,sha256=%s,%d" % (name, digest, len(data)))

    def close(self, dist_info):
        name = dist_info + "/RECORD"
        self.record.append(name + ",,")
        info = zipfile.ZipInfo(name, date_time=_zip_time())
        info.external_attr = 0o644 << 16
        self.zip.writestr(info, "\n".join(self.record) + "\n")
        self.zip.close()


def _zip_time():
    return time.gmtime(max(EPOCH, 315532800))[:6]


def _wheel_file():
    return "Wheel-Version: 1.0\nGenerator: indexd-build\nRoot-Is-Purelib: true\nTag: %s\n" % TAG


def _build(wheel_directory, editable):
    _, version, dist = _names()
    dist_info = "%s-%s.dist-info" % (dist, version)
    filename = "%s-%s-%s.whl" % (dist, version, TAG)
    w = _Wheel(os.path.join(wheel_directory, filename))
    if editable:
        w.add("__editable__.%s.pth" % dist, (ROOT + "\n").encode())
    else:
        for rel in _package_files():
            with open(os.path.join(ROOT, rel), "rb") as f:
                w.add(rel.replace(os.sep, "/"), f.read())
    w.add(dist_info + "/METADATA", _metadata().encode())
    w.add(dist_info + "/WHEEL", _wheel_file().encode())
    w.close(dist_info)
    return filename


# The PEP 517 and PEP 660 hooks.


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _, version, dist = _names()
    dist_info = "%s-%s.dist-info" % (dist, version)
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(metadata_directory, dist_info, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    return dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, editable=False)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, editable=True)


def build_sdist(sdist_directory, config_settings=None):
    """A source archive: pyproject.toml, the README, this backend and the
    package, under NAME-VERSION/, with PKG-INFO."""
    _, version, dist = _names()
    base = "%s-%s" % (dist, version)
    filename = base + ".tar.gz"
    files = ["pyproject.toml", "README.md", os.path.join("_build", "backend.py")] + _package_files()
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in files:
            with open(os.path.join(ROOT, rel), "rb") as f:
                _add(tar, base + "/" + rel.replace(os.sep, "/"), f.read())
        _add(tar, base + "/PKG-INFO", _metadata().encode())
    return filename


def _add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = EPOCH
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))

"""Loading packages: from a folder, .tgz or URL, or from file texts (an OperatorVersion), and back."""

from __future__ import annotations

import threading
from collections.abc import Mapping

from engine.errors import PackageInvalid, Problem
from engine.model import Package
from engine.package import dump, files, verify

__all__ = ["from_files", "load", "load_with_warnings", "read_files", "to_files"]

# Packages verified in this process, by their files' texts: `kplan run` verifies the folder it is given, then the
# runner rebuilds the same files from the OperatorVersion it recorded; a manager reads each OperatorVersion anew.
# A Package is a value, so one made from the same texts is the same package (the source names only where a
# package that does not verify was read, and those are not kept).
VERIFIED_KEPT = 32
_verified: dict[tuple[tuple[str, str], ...], tuple[Package, tuple[Problem, ...]]] = {}
_lock = threading.Lock()


def read_files(source: str) -> dict[str, str]:
    """The files of the package at `source` (folder, .tgz, http(s):// or file:// URL), unverified."""
    return files.read_source(source)


def load(source: str) -> Package:
    """The verified package at `source`; PackageInvalid carries every problem found."""
    return load_with_warnings(source)[0]


def load_with_warnings(source: str) -> tuple[Package, tuple[Problem, ...]]:
    return _checked(read_files(source), source)


def from_files(files: Mapping[str, str], source: str = "<memory>") -> Package:
    """A package from its file texts, keyed by path in the package (`operator.yaml`, `templates/x.yaml`)."""
    return _checked(files, source)[0]


def _checked(texts: Mapping[str, str], source: str) -> tuple[Package, tuple[Problem, ...]]:
    key = tuple(sorted(texts.items()))
    with _lock:
        found = _verified.get(key)
    if found is not None:
        return found
    pkg, problems = verify.verify(texts, source)
    if pkg is None:
        raise PackageInvalid(problems)
    with _lock:
        if len(_verified) >= VERIFIED_KEPT:
            del _verified[next(iter(_verified))]
        _verified[key] = (pkg, tuple(problems))
    return pkg, tuple(problems)


def to_files(pkg: Package) -> dict[str, str]:
    """The package's files: the texts it was read from, or, for a package built in code, a rendering of it."""
    if pkg.files:
        return dict(pkg.files)
    return dump.package_files(pkg)

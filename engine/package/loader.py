"""Loading packages: from a folder, .tgz or URL, or from file texts (an OperatorVersion), and back."""

from __future__ import annotations

from collections.abc import Mapping

from engine.errors import PackageInvalid, Problem
from engine.model import Package
from engine.package import dump, files, verify

__all__ = ["from_files", "load", "load_with_warnings", "read_files", "to_files"]


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
    pkg, problems = verify.verify(texts, source)
    if pkg is None:
        raise PackageInvalid(problems)
    return pkg, tuple(problems)


def to_files(pkg: Package) -> dict[str, str]:
    """The package's files: the texts it was read from, or, for a package built in code, a rendering of it."""
    if pkg.files:
        return dict(pkg.files)
    return dump.package_files(pkg)

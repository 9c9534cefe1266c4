"""kplan's CustomResourceDefinitions: crds/ in a checkout, else the copies packaged in engine/assets/crds."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import yaml

__all__ = ["FILES", "load", "packaged", "source"]

FILES = ("operator.yaml", "operatorversion.yaml", "instance.yaml")
"""In the order they are applied: Instances refer to OperatorVersions, which refer to Operators."""


def load(folder: Traversable | None = None) -> list[dict[str, Any]]:
    """The CRD objects, parsed, in the order of FILES (from `folder`, by default `source()`)."""
    folder = folder or source()
    return [yaml.safe_load(folder.joinpath(name).read_text(encoding="utf-8")) for name in FILES]


def source() -> Traversable:
    """crds/ of the checkout this module runs from, else the package data of an installed wheel."""
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "crds").is_dir():
        return checkout / "crds"
    return packaged()


def packaged() -> Traversable:
    """The copies shipped as package data (kept byte-identical to crds/ by a unit test)."""
    return resources.files("engine").joinpath("assets", "crds")

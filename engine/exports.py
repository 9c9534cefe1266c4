"""A package's names taken from its modules at their first use, so that importing one module of a package does not
import all the others (`from engine.planner import pipes` need not load the whole planner).

The package's module becomes a `Package` (a module's class may be set to a subclass of ModuleType, as the language
reference describes): a name of its table missing from it is imported from the submodule the table names and bound
in the package. The import system binds each submodule it loads in its package; where a submodule is named like
the name it exports (engine.planner.decide, whose function is engine.planner's `decide`), the package keeps that
name for the export, as an eager `from engine.planner.decide import decide` in its __init__ did.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Mapping
from typing import Any

__all__ = ["Package", "defer"]


def defer(package: str, homes: Mapping[str, str]) -> None:
    """Make each name of `homes` (name -> submodule) a name of `package`, imported at its first use."""
    module = sys.modules[package]
    module.__dict__["__homes__"] = dict(homes)
    module.__class__ = Package


class Package(types.ModuleType):
    """A package module whose exported names are imported from their submodules when first asked for."""

    def __getattr__(self, name: str) -> Any:
        home = self.__dict__.get("__homes__", {}).get(name)
        if home is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{self.__name__}.{home}"), name)
        self.__dict__[name] = value
        return value

    def __dir__(self) -> list[str]:
        return sorted({*self.__dict__, *self.__dict__.get("__homes__", {})})

    def __setattr__(self, name: str, value: Any) -> None:
        if (isinstance(value, types.ModuleType) and self.__dict__.get("__homes__", {}).get(name) == name
                and value.__name__ == f"{self.__name__}.{name}"):
            value = getattr(value, name)  # a submodule just loaded, named like its export: the export stays
        super().__setattr__(name, value)

"""networkx for the console script: the package kplan's graph code uses, without the hundreds of modules it does not.

`import networkx` runs networkx/__init__.py, which imports every subpackage and binds their names in `networkx`
(`from networkx.algorithms import *`, ...): generators, readwrite, algorithms, linalg and drawing are ~400 modules,
each function wrapped for backend dispatch, ~0.1 s of CPU — a fifth of `kplan run`'s start-up — when kplan calls
DiGraph and a few algorithms of dag, components and traversal (engine.graph, engine.planner.execute).

`install()` makes the first `import networkx` of the process run networkx's own __init__ with those five subpackages
registered as the packages they are (their own spec, path and loader) but their __init__ deferred, so its star
imports find nothing in them; then the modules in USED are imported and their names bound in `networkx` as its
star imports bind them. The first attribute anyone asks of `networkx`, or of a deferred subpackage, that is not
there yet runs the deferred __init__s and the star imports, in networkx's order: code that uses anything else sees
the whole package as always. The modules run are networkx's own files, unchanged; only when some of them run
differs.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # importlib.abc itself costs a third of `kplan version`'s imports: the classes below only quack
    from importlib.abc import Loader

__all__ = ["DEFERRED", "USED", "complete", "install"]

PACKAGE = "networkx"
# The subpackages networkx/__init__ star-imports after its classes, in its order.
DEFERRED = ("generators", "readwrite", "algorithms", "linalg", "drawing")
# What kplan's graph code calls (DiGraph comes with networkx.classes, which is not deferred), and what those
# functions call through `networkx.` in turn (descendants: bfs_edges; transitive_reduction: descendants, dfs_edges).
USED = ("networkx.algorithms.dag", "networkx.algorithms.components", "networkx.algorithms.traversal")

_lock = threading.RLock()
_deferred: dict[str, tuple[types.ModuleType, Loader]] = {}  # name -> (module, loader) not run yet
_original_getattr: Any = None  # networkx's own module __getattr__ (its messages for removed names)


def install() -> None:
    """Make the first `import networkx` of this process lean (see the module's doc); nothing when it is imported."""
    if PACKAGE not in sys.modules and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def complete() -> None:
    """Run the deferred __init__s and bind their names in `networkx`, as a plain `import networkx` does."""
    with _lock:
        if not _deferred:
            return
        root = sys.modules[PACKAGE]
        done = [_run(f"{PACKAGE}.{name}") for name in DEFERRED]
        for module in done:  # networkx/__init__'s star imports, in its order (a later one wins)
            if module is not None:
                root.__dict__.update(_public(module))
        root.__dict__.pop("__getattr__", None)
        if _original_getattr is not None:
            root.__dict__["__getattr__"] = _original_getattr


class _Finder:
    """Finds `networkx` once, as the path finders do, and loads it lean; then leaves sys.meta_path."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != PACKAGE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return spec  # not a package we know how to load lean: the plain import goes on
        spec.loader = cast("Loader", _LeanLoader(spec.loader))
        return spec


class _LeanLoader:
    """networkx's own loader, with the deferred subpackages registered while it runs networkx/__init__."""

    def __init__(self, loader: Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        global _original_getattr
        path = list(module.__spec__.submodule_search_locations or []) if module.__spec__ else []
        registered = [name for name in (_register(f"{PACKAGE}.{sub}", path) for sub in DEFERRED) if name]
        for name in registered:  # as the import system binds a loaded subpackage in its parent
            module.__dict__[name.rpartition(".")[2]] = sys.modules[name]
        try:
            self._loader.exec_module(module)  # networkx's own __init__; the star imports of the deferred find nothing
        except BaseException:
            for name in registered:
                sys.modules.pop(name, None)
                _deferred.pop(name, None)
            raise
        with _lock:
            _original_getattr = module.__dict__.get("__getattr__")
            module.__dict__["__getattr__"] = _root_getattr
        for name in USED:
            module.__dict__.update(_public(importlib.import_module(name)))


def _register(name: str, path: Sequence[str]) -> str | None:
    """Put package `name` in sys.modules with its __init__ deferred; its name, or None when it cannot be."""
    spec = importlib.machinery.PathFinder.find_spec(name, list(path))
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return None
    module = importlib.util.module_from_spec(spec)

    def __getattr__(attribute: str) -> Any:
        if attribute.startswith("__") or _is_submodule(spec, attribute):
            raise AttributeError(attribute)  # a dunder (the star import's __all__) or a submodule the import loads
        complete()
        if attribute in module.__dict__:
            return module.__dict__[attribute]
        raise AttributeError(f"module {name!r} has no attribute {attribute!r}")

    module.__dict__["__getattr__"] = __getattr__
    with _lock:
        _deferred[name] = (module, spec.loader)
    sys.modules[name] = module
    return name


def _is_submodule(spec: importlib.machinery.ModuleSpec, attribute: str) -> bool:
    locations = list(spec.submodule_search_locations or [])
    return importlib.machinery.PathFinder.find_spec(f"{spec.name}.{attribute}", locations) is not None


def _run(name: str) -> types.ModuleType | None:
    """Run the deferred __init__ of `name` (once); the module, or None when it was never deferred."""
    with _lock:
        found = _deferred.pop(name, None)
        if found is None:
            return sys.modules.get(name)
        module, loader = found
        module.__dict__.pop("__getattr__", None)
        loader.exec_module(module)
        return module


def _root_getattr(attribute: str) -> Any:
    """`networkx.<attribute>` that is not there yet: the whole package, then the attribute."""
    if attribute.startswith("__") and attribute != "__all__":
        raise AttributeError(attribute)
    complete()
    root = sys.modules[PACKAGE]
    if attribute in root.__dict__:
        return root.__dict__[attribute]
    if _original_getattr is not None:
        return _original_getattr(attribute)
    raise AttributeError(f"module {PACKAGE!r} has no attribute {attribute!r}")


def _public(module: types.ModuleType) -> dict[str, Any]:
    """What `from module import *` binds."""
    names = module.__dict__.get("__all__")
    if names is None:
        names = [n for n in module.__dict__ if not n.startswith("_")]
    return {n: getattr(module, n) for n in names}

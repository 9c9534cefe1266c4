"""The parts of the official client kplan uses, imported without running the `kubernetes` package's __init__.

`import kubernetes.client` first runs `kubernetes/__init__.py`, which imports every subpackage: config (with
oauthlib and requests), dynamic (kubernetes_validate and jsonschema), stream (websocket), watch, utils,
leaderelection and informer: 0.40-0.44 s of CPU, against 0.28-0.33 s for what kplan uses (load 7): the
client's ApiClient, Configuration, rest and exceptions, and the kubeconfig loader. When `kubernetes` is not
imported yet, it is registered here as the package it is (its own spec, path and loader) with its __init__
deferred: the first attribute it lacks (`kubernetes.__version__`, `kubernetes.dynamic`) runs that __init__, so
code that imports `kubernetes` afterwards sees the whole package as always. The modules imported are the
client's own files, unchanged; only the order of their imports differs.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from typing import Any

__all__ = ["ApiClient", "ApiException", "Configuration", "kube_config"]

_PACKAGE = "kubernetes"
_lock = threading.Lock()


def _deferred_package() -> None:
    """Register `kubernetes` with its __init__ deferred to the first attribute it does not have."""
    if _PACKAGE in sys.modules:
        return
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not a package we know how to defer: the plain import below runs its __init__
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def complete(name: str) -> Any:
        with _lock:
            if module.__dict__.pop("__getattr__", None) is not None:
                loader.exec_module(module)  # the package's own __init__, in its own module
        if name in module.__dict__:
            return module.__dict__[name]
        raise AttributeError(f"module {_PACKAGE!r} has no attribute {name!r}")

    module.__dict__["__getattr__"] = complete
    sys.modules[_PACKAGE] = module


_deferred_package()

import kubernetes.config as kube_config  # noqa: E402
from kubernetes.client.api_client import ApiClient  # noqa: E402
from kubernetes.client.configuration import Configuration  # noqa: E402
from kubernetes.client.exceptions import ApiException  # noqa: E402

"""The parts of the official client kplan uses, imported without what they do not need to start.

`import kubernetes.client` first runs `kubernetes/__init__.py`, which imports every subpackage: config (with
oauthlib and requests), dynamic (kubernetes_validate and jsonschema), stream (websocket), watch, utils,
leaderelection and informer: 0.40-0.44 s of CPU, against 0.28-0.33 s for what kplan uses (load 7): the
client's ApiClient, Configuration, rest and exceptions, and the kubeconfig loader. When `kubernetes` is not
imported yet, it is registered here as the package it is (its own spec, path and loader) with its __init__
deferred: the first attribute it lacks (`kubernetes.__version__`, `kubernetes.dynamic`) runs that __init__, so
code that imports `kubernetes` afterwards sees the whole package as always. `kubernetes.utils` (create_from_yaml,
metrics, duration: the rest layer reads only its retry and keepalive modules) is deferred the same way.

The kubeconfig loader imports OAuth2 support at its top (oauthlib.oauth2, requests_oauthlib and through it
requests and oauthlib.oauth1: ~0.1 s of CPU) for one use, refreshing an OIDC auth-provider's token. Here the
loader's `OAuth2Session` is a function that imports them when first called and makes the real session (the
loader reads `oauthlib.oauth2` only after that call, for the error a failed refresh raises). The modules
imported are the client's own files, unchanged; only the order and the moment of their imports differ.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ApiClient", "ApiException", "Configuration", "kube_config"]

_lock = threading.Lock()


def _deferred_package(name: str) -> None:
    """Register package `name` with its __init__ deferred to the first attribute it does not have."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not a package we know how to defer: the plain import below runs its __init__
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def complete(attribute: str) -> Any:
        with _lock:
            if module.__dict__.pop("__getattr__", None) is not None:
                loader.exec_module(module)  # the package's own __init__, in its own module
        if attribute in module.__dict__:
            return module.__dict__[attribute]
        raise AttributeError(f"module {name!r} has no attribute {attribute!r}")

    module.__dict__["__getattr__"] = complete
    sys.modules[name] = module


def _oauth2_session(*args: Any, **kwargs: Any) -> Any:
    """requests_oauthlib.OAuth2Session(*args, **kwargs), the OAuth2 modules imported at this first call."""
    import oauthlib.oauth2  # type: ignore[import-untyped]  # noqa: F401  (read by the loader after a failed refresh)
    from requests_oauthlib import OAuth2Session  # type: ignore[import-untyped]

    return OAuth2Session(*args, **kwargs)


@contextmanager
def _oauth2_deferred() -> Iterator[None]:
    """While the kubeconfig loader is imported, `import oauthlib.oauth2` finds a module standing in for it and
    `from requests_oauthlib import OAuth2Session` finds `_oauth2_session`; afterwards both names are free again,
    so whoever imports them (`_oauth2_session` first, on an OIDC refresh) gets the real packages."""
    stand_ins: dict[str, types.ModuleType] = {}
    for name, attributes in (("oauthlib.oauth2", {}), ("requests_oauthlib", {"OAuth2Session": _oauth2_session})):
        if name in sys.modules or importlib.util.find_spec(name) is None:
            continue  # loaded already, or missing: the loader's own import does what it always does
        stand_ins[name] = module = types.ModuleType(name, "stands in while the kubeconfig loader is imported")
        module.__dict__.update(attributes)
        sys.modules[name] = module
    try:
        yield
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
            parent, _, child = name.rpartition(".")
            if parent and getattr(sys.modules.get(parent), child, None) is module:
                delattr(sys.modules[parent], child)


_deferred_package("kubernetes")
_deferred_package("kubernetes.utils")
with _oauth2_deferred():
    import kubernetes.config as kube_config
from kubernetes.client.api_client import ApiClient  # noqa: E402
from kubernetes.client.configuration import Configuration  # noqa: E402
from kubernetes.client.exceptions import ApiException  # noqa: E402

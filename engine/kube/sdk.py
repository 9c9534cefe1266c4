"""The parts of the official client kplan uses, imported without what they do not need to start.

`import kubernetes.client` first runs `kubernetes/__init__.py`, which imports every subpackage: config (with
oauthlib and requests), dynamic (kubernetes_validate and jsonschema), stream (websocket), watch, utils,
leaderelection and informer: 0.40-0.44 s of CPU, against 0.28-0.33 s for what kplan uses (load 7): the
client's ApiClient, Configuration, rest and exceptions, and the kubeconfig loader. When `kubernetes` is not
imported yet, it is registered here as the package it is (its own spec, path and loader) with its __init__
deferred: the first attribute it lacks (`kubernetes.__version__`, `kubernetes.dynamic`) runs that __init__, so
code that imports `kubernetes` afterwards sees the whole package as always. `kubernetes.utils` (create_from_yaml,
metrics, duration: the rest layer reads only its retry and keepalive modules) is deferred the same way.

Some modules the client imports at its top serve only paths kplan does not take: the kubeconfig loader's OAuth2
support (oauthlib.oauth2, requests_oauthlib and through it requests and oauthlib.oauth1), for refreshing an OIDC
auth-provider's token; the ApiClient's pydantic (SecretStr in model bodies; ApiResponse, a pydantic model, for the
generated *Api classes) and dateutil's parser (dates in generated models): ~0.25 s of CPU together. While those
two modules are imported, the names they take from these find stand-ins (`_Later`) that import the real module
at their first use and hand it on, so an OIDC refresh, a generated *Api call or a SecretStr body works as
before; afterwards the modules are free for whoever imports them. The modules imported are the client's own
files, unchanged; only the order and the moment of their imports differ.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["ApiClient", "ApiException", "Configuration", "RESTResponse", "kube_config"]

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


class _Later:
    """Stands for `module.name` until it is used: a call, a subscript or an isinstance check reaches the real one.

    A call imports the module (the real object does the work); an isinstance check does not, for nothing can be an
    instance of a class whose module is not loaded; a subscript (an annotation read when a function is defined)
    stands for itself."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def real(self) -> Any:
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.real()(*args, **kwargs)

    def __instancecheck__(self, obj: object) -> bool:
        return self.module in sys.modules and isinstance(obj, self.real())

    def __getitem__(self, _item: object) -> _Later:
        return self

    def __repr__(self) -> str:
        return f"<{self.module}.{self.name}, imported at its first use>"


# What the client's ApiClient and kubeconfig loader import at their top but use only on paths kplan does not take,
# with the names they import from each: the stand-in modules they find while they are imported.
_LATER: dict[str, dict[str, Any]] = {
    # ApiClient: dates in generated models; SecretStr in model bodies; ApiResponse for the generated *Api classes.
    "dateutil.parser": {"parse": _Later("dateutil.parser", "parse")},
    "pydantic": {"SecretStr": _Later("pydantic", "SecretStr")},
    "kubernetes.client.api_response": {"ApiResponse": _Later("kubernetes.client.api_response", "ApiResponse"),
                                       "T": TypeVar("T")},
    # The kubeconfig loader: refreshing an OIDC auth-provider's token (it reads oauthlib.oauth2's errors only after
    # its OAuth2Session was made, which imported them).
    "oauthlib.oauth2": {},
    "requests_oauthlib": {"OAuth2Session": _Later("requests_oauthlib", "OAuth2Session")},
}


@contextmanager
def _imported_later(table: dict[str, dict[str, Any]]) -> Iterator[None]:
    """While the block runs, each module of `table` not loaded yet is a stand-in holding the names given; afterwards
    the names are free again, so whoever imports one of those modules (a stand-in's first use) gets the real one."""
    stand_ins: dict[str, types.ModuleType] = {}
    for name, attributes in table.items():
        if name in sys.modules or importlib.util.find_spec(name) is None:
            continue  # loaded already, or missing: the client's own import does what it always does
        stand_ins[name] = module = types.ModuleType(name, "stands in while the client's modules are imported")
        module.__dict__.update(attributes)
        sys.modules[name] = module
    try:
        yield
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
            parent, _, child = name.rpartition(".")
            holder = vars(sys.modules[parent]) if parent in sys.modules else {}
            if holder.get(child) is module:  # read, not getattr: a package's __getattr__ would import the real one
                del holder[child]


_deferred_package("kubernetes")
_deferred_package("kubernetes.utils")
with _imported_later(_LATER):
    import kubernetes.config as kube_config
    from kubernetes.client.api_client import ApiClient
from kubernetes.client.configuration import Configuration  # noqa: E402
from kubernetes.client.exceptions import ApiException  # noqa: E402
from kubernetes.client.rest import RESTResponse  # noqa: E402

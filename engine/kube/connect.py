"""connect: a Kube from a kubeconfig file, $KUBECONFIG, ~/.kube/config, or the in-cluster service account."""

from __future__ import annotations

import os
from pathlib import Path

from urllib3.util.retry import Retry

from engine.errors import PermanentError
from engine.kube.client import Kube
from engine.kube.clock import Clock
from engine.kube.metrics import CountingApiClient
from engine.kube.sdk import Configuration, kube_config

__all__ = ["connect"]

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
DEFAULT_KUBECONFIG = Path("~/.kube/config")
# Retry only connections that never reached the server; answers (429, 503 with Retry-After) come back to
# the caller, which backs off by its own rules, and every request sent is one the counters see.
POOL_SIZE = 32
CONNECT_RETRIES = Retry(total=3, connect=3, read=0, status=0, other=0, redirect=0, respect_retry_after_header=False)


def connect(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    namespace: str | None = None,
    clock: Clock | None = None,
    retry_for: float | None = None,
) -> Kube:
    """A Kube whose namespace is `namespace`, else the context's, else "default"; with `retry_for`, it retries
    transient failures for that many seconds from now (see engine.kube.retrying)."""
    path = kubeconfig or os.environ.get("KUBECONFIG") or existing(DEFAULT_KUBECONFIG)
    configuration = Configuration()
    configuration.retries = CONNECT_RETRIES
    # A manager holds a watch per kind and sends from several workers: room for all, so no connection is
    # discarded ("Connection pool is full") and reopened.
    configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize or 0, POOL_SIZE)
    try:
        if path:
            kube_config.load_kube_config(path, context, client_configuration=configuration, persist_config=False)  # type: ignore[no-untyped-call]
            found = namespace or context_namespace(path, context)
        else:
            kube_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
            found = namespace or service_account_namespace()
    except (kube_config.ConfigException, OSError, ValueError) as exc:
        if not path:
            raise PermanentError(
                "no cluster to talk to: give --kubeconfig or set KUBECONFIG (kplan devcluster starts a local one), "
                "or run inside a cluster"
            ) from exc
        raise PermanentError(f"cannot load kubeconfig {path}: {exc}") from exc
    return Kube(CountingApiClient(configuration), found or "default", clock=clock, retry_for=retry_for)


def existing(path: Path) -> str | None:
    expanded = path.expanduser()
    return str(expanded) if expanded.is_file() else None


def context_namespace(path: str, context: str | None) -> str | None:
    contexts, current = kube_config.list_kube_config_contexts(path)  # type: ignore[no-untyped-call]
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else current
    return ((chosen or {}).get("context") or {}).get("namespace")


def service_account_namespace() -> str | None:
    try:
        return SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or None
    except OSError:
        return None

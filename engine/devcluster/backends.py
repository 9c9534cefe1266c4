"""The two backends of `kplan devcluster` behind one surface: `new("dev" | "real", ...)` -> a Cluster."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from engine.devcluster.cluster import SIMULATED, DevCluster
from engine.devcluster.real import RealCluster

__all__ = ["BACKENDS", "DEFAULT_NODES", "Cluster", "new"]

BACKENDS = ("dev", "real")
# `kplan devcluster` without --nodes, and `kplan test` when a suite names no nodes: the nodes the shipped
# packages and their tests expect (hello-world and ml-workflow use two, redis and etcd three).
DEFAULT_NODES = ("node-1", "node-2", "node-3")


class Cluster(Protocol):
    """What callers of either backend use: its URL, a kubeconfig, in-process-style requests and change feeds."""

    backend: str
    url: str
    port: int
    nodes: tuple[str, ...]
    token: str | None
    runtime: str  # how pods run: "simulated", or "process" (their containers as local processes)
    runtime_problem: str  # with the process runtime: what this host lacks for it ("" when nothing)

    def start(self) -> Cluster: ...

    def stop(self) -> None: ...

    def __enter__(self) -> Cluster: ...

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def write_kubeconfig(self, path: str | Path, context: str = "kplan-dev") -> Path: ...

    def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None, body: Any = None,
                content_type: str = "application/json", user_agent: str = "devcluster") -> tuple[int, dict[str, Any]]:
        ...

    def subscribe(self, callback: Callable[[str, dict[str, Any]], None], *,
                  kinds: Collection[tuple[str, str]] | None = None, inline: bool = False) -> Callable[[], None]:
        """Committed changes (of the (apiVersion, kind) pairs of `kinds`, or all); `inline`: on the dev backend,
        called back in the writer's thread (a quick callback that never calls the cluster)."""
        ...


def new(backend: str, *, port: int = 0, simulate: bool = True, nodes: Sequence[str] = (),
        token: str | None = None, runtime: str = SIMULATED) -> Cluster:
    """A cluster of the backend, not started yet (use it as a context manager); `runtime="process"` runs pods'
    containers as local processes."""
    if backend == "real":
        if token is not None:
            raise ValueError("the real backend authenticates with client certificates, not a token")
        return RealCluster(port=port, simulate=simulate, nodes=nodes, runtime=runtime)
    return DevCluster(port=port, simulate=simulate, nodes=nodes, token=token, runtime=runtime)

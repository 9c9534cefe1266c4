"""The cluster tests and the demo run on: a dev cluster with simulators and a manager, both in this process."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from engine import crds
from engine.controller import Manager, ManagerSettings
from engine.devcluster import backends
from engine.devcluster.cluster import SIMULATED
from engine.errors import PermanentError
from engine.kube import Kube, connect
from engine.planner import Settings
from engine.testing.model import Node

__all__ = ["CONTEXT", "LocalCluster", "install_crds", "label_nodes"]

CONTEXT = "kplan-dev"
CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
CRD_TIMEOUT = 30.0
STOP_TIMEOUT = 30.0
# Retries a little faster than a production manager, so a test of a failing step does not wait a minute.
PLANNER = Settings(backoff_base=0.25, backoff_max=2.0)


def install_crds(kube: Kube) -> None:
    """Server-side apply kplan's CRDs and wait until each is Established."""
    for definition in crds.load():
        applied = kube.apply(definition)
        kube.wait_for(*CRD, str(applied["metadata"]["name"]), None, established, CRD_TIMEOUT, condition="Established")


def established(obj: Mapping[str, Any] | None) -> bool:
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def label_nodes(kube: Kube, nodes: Sequence[Node]) -> None:
    """Give each node its labels (other labels stay); nodes the cluster does not have are an error naming the
    command that starts a dev cluster with them (kplan creates no Node: only a kubelet can run its pods)."""
    missing = [node.name for node in nodes if kube.get("v1", "Node", node.name) is None]
    if missing:
        listed = ", ".join(repr(n) for n in missing)
        raise PermanentError(f"the tests need the nodes {listed}, which the cluster does not have; run them without "
                             "--kubeconfig (on a dev cluster of their own), or start one that has every node they "
                             f"need: kplan devcluster --nodes {','.join(n.name for n in nodes)}")
    for node in nodes:
        if node.labels:
            kube.patch("v1", "Node", node.name, None, {"metadata": {"labels": dict(node.labels)}})


class LocalCluster:
    """`with LocalCluster(nodes, folder) as local:` a simulating local cluster (`backend` dev or real) with these
    nodes and labels, kplan's CRDs, and a manager reconciling every namespace; `local.kubeconfig` (written in
    `folder`) reaches it. `runtime="process"` runs pods' containers as local processes."""

    def __init__(self, nodes: Sequence[Node], folder: Path, *, planner: Settings = PLANNER,
                 backend: str = "dev", runtime: str = SIMULATED) -> None:
        self.nodes = tuple(nodes) or tuple(Node(name) for name in backends.DEFAULT_NODES)
        self.kubeconfig = folder / "kubeconfig"
        self.cluster = backends.new(backend, simulate=True, nodes=[n.name for n in self.nodes], runtime=runtime)
        self._planner = planner
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._kube: Kube | None = None
        self._running = False

    def __enter__(self) -> LocalCluster:
        self.cluster.start()
        self._running = True
        try:
            self.cluster.write_kubeconfig(self.kubeconfig, CONTEXT)
            self._kube = connect(str(self.kubeconfig))
            install_crds(self._kube)
            label_nodes(self._kube, self.nodes)
            self._start_manager(self._kube)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _start_manager(self, kube: Kube) -> None:
        settings = ManagerSettings(workers=4, metrics_address=None, leader_elect=False, planner=self._planner,
                                   error_backoff_base=0.1, error_backoff_max=2.0)
        manager = Manager(kube, settings)
        self._thread = threading.Thread(target=manager.run, args=(self._stop,), name="kplan-manager", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the manager, then the cluster (safe to call twice)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(STOP_TIMEOUT)
            self._thread = None
        if self._kube is not None:
            self._kube.close()
            self._kube = None
        if self._running:
            self._running = False
            self.cluster.stop()

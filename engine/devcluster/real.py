"""RealCluster: the real control plane with kplan's kubelet and provisioner simulators, as one dev cluster.

    with RealCluster(nodes=("node-1",)) as c:    # same surface as DevCluster
        c.url, c.port, c.write_kubeconfig(path), c.request(...), c.subscribe(...)
        c.plane                                  # the ControlPlane, for fault tests and extra users

Everything but the kubelets and volume provisioning is the real components' work: ReplicaSets, Pods, Job
conditions, StatefulSet ordering, garbage collection and namespace deletion. The simulated kubelet serves its
HTTPS API (for pods/log) with a certificate of the plane's CA; `runtime="process"` runs pods' containers as
local processes, as on the dev backend.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from engine import simulators
from engine.controlplane import ControlPlane
from engine.devcluster import kubeconfig, kubelettls
from engine.devcluster.cluster import PROCESS, RUNTIMES, SIMULATED
from engine.devcluster.remote import RemoteApi
from engine.simulators.provisioner.pvcs import storage_class

__all__ = ["RealCluster"]

log = logging.getLogger(__name__)


class RealCluster:
    backend = "real"
    token: str | None = None

    def __init__(self, *, port: int = 0, simulate: bool = True, nodes: Sequence[str] = (),
                 runtime: str = SIMULATED, runtime_limits: Any = None) -> None:
        if runtime not in RUNTIMES:
            raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
        self.plane = ControlPlane(port=port, workloads=simulate)  # no simulators: the API server's tests
        self.simulate = simulate
        self.runtime = runtime  # "process": the simulated kubelet runs pods' containers as local processes
        self.runtime_limits = runtime_limits  # engine.simulators.Limits of each process (None: the defaults)
        self.runtime_problem = ""  # with the process runtime: what this host lacks for it ("" when nothing)
        self.nodes = tuple(nodes)
        self.port = port
        self.url = ""
        self._remote: RemoteApi | None = None
        self._stop_simulators: Callable[[], None] | None = None

    def start(self) -> RealCluster:
        self.plane.start()
        try:
            self.port, self.url = self.plane.port, self.plane.url
            admin = self.plane.admin
            self._remote = RemoteApi(self.url, ca=str(self.plane.ca.cert), cert=str(admin.cert), key=str(admin.key))
            if self.simulate:
                self._apply(storage_class())
                self._start_simulators(self._remote)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_simulators(self, remote: RemoteApi) -> None:
        runtime = None
        if self.runtime == PROCESS:
            limits = () if self.runtime_limits is None else (self.runtime_limits,)
            runtime = simulators.process_runtime(remote, *limits)
            self.runtime_problem = runtime.problem
        self._stop_simulators = simulators.start(remote, self.nodes, controllers=False, runtime=runtime,
                                                 kubelet_tls=kubelettls.kubelet_context(self.plane.ca))

    def _apply(self, obj: dict[str, Any]) -> None:
        path = f"/apis/storage.k8s.io/v1/storageclasses/{obj['metadata']['name']}"
        code, body = self.request("PATCH", path, query={"fieldManager": "devcluster", "force": "true"}, body=obj,
                                  content_type="application/apply-patch+yaml")
        if code >= 300:
            raise RuntimeError(f"could not create the simulated StorageClass: {body.get('message')}")

    def stop(self) -> None:
        if self._stop_simulators is not None:
            self._stop_simulators()
            self._stop_simulators = None
        if self._remote is not None:
            self._remote.close()
            self._remote = None
        self.plane.stop()

    def __enter__(self) -> RealCluster:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    @property
    def remote(self) -> RemoteApi:
        if self._remote is None:
            raise RuntimeError("the cluster is not running")
        return self._remote

    def write_kubeconfig(self, path: str | Path, context: str = "kplan-dev") -> Path:
        return kubeconfig.save(path, self.plane.kubeconfig(context))

    def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None, body: Any = None,
                content_type: str = "application/json", user_agent: str = "devcluster") -> tuple[int, dict[str, Any]]:
        return self.remote.request(method, path, query=query, body=body, content_type=content_type,
                                   user_agent=user_agent)

    def subscribe(self, callback: Callable[[str, dict[str, Any]], None], *,
                  kinds: Collection[tuple[str, str]] | None = None, inline: bool = False) -> Callable[[], None]:
        return self.remote.subscribe(callback, kinds=kinds, inline=inline)

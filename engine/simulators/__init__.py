"""Simulated kubelet, scheduler, volume provisioner and built-in controllers (like kwok).

They write the status the real components write, as ordinary API clients of any cluster that offers `request`
and `subscribe` (the in-memory dev cluster in process, or any API server over HTTP). On the dev backend they play
everything a cluster runs besides the API server; on the real backend (`controllers=False`) only what the real
control plane lacks: kubelets (Nodes, their Leases, Pod status on bound pods) and a dynamic volume provisioner.
See `steering` for how a test sets how long simulated work takes and whether it fails.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Sequence

from engine.simulators.api import (
    CONFIGMAP,
    DAEMONSET,
    DEPLOYMENT,
    JOB,
    NAMESPACE,
    NODE,
    POD,
    PV,
    PVC,
    REPLICASET,
    REPLICATIONCONTROLLER,
    SECRET,
    SERVICEACCOUNT,
    STATEFULSET,
    Api,
    ClusterApi,
)
from engine.simulators.cache import Cache
from engine.simulators.controllers.daemonsets import DaemonSetController
from engine.simulators.controllers.deployments import DeploymentController
from engine.simulators.controllers.jobs import JobController
from engine.simulators.controllers.namespaces import NamespaceContentsController
from engine.simulators.controllers.replicasets import ReplicaSetController
from engine.simulators.controllers.statefulsets import StatefulSetController
from engine.simulators.kubelet.containerlogs import LogStore
from engine.simulators.kubelet.nodes import NodeController
from engine.simulators.kubelet.podruns import Limits, ProcessRuntime, isolation_problem
from engine.simulators.kubelet.pods import PodController
from engine.simulators.kubelet.server import KubeletServer
from engine.simulators.provisioner.pvcs import ClaimController, VolumeController
from engine.simulators.runtime import Controller, Simulation
from engine.simulators.workqueue import Key

__all__ = ["Limits", "ProcessRuntime", "isolation_problem", "process_runtime", "start"]

WATCHED = (NODE, POD, PVC, PV, DEPLOYMENT, REPLICASET, STATEFULSET, DAEMONSET, JOB, REPLICATIONCONTROLLER, NAMESPACE,
           SERVICEACCOUNT, CONFIGMAP)
KUBELET_WATCHED = (NODE, POD, PVC, PV)


def process_runtime(cluster: ClusterApi, limits: Limits | None = None) -> ProcessRuntime:
    """A runtime that runs pods' containers as local processes, reading ConfigMaps, Secrets and claims from
    `cluster`; pass it to `start` (whose kubelet API serves what its containers print)."""
    api = Api(cluster, Cache(()))
    kinds = {"ConfigMap": CONFIGMAP, "Secret": SECRET, "PersistentVolumeClaim": PVC}
    return ProcessRuntime(lambda kind, namespace, name: api.read(kinds[kind], namespace, name), limits or Limits())


def start(cluster: ClusterApi, nodes: Sequence[str] = (), *, controllers: bool = True,
          runtime: ProcessRuntime | None = None, kubelet_tls: ssl.SSLContext | None = None) -> Callable[[], None]:
    """Register `nodes`, start the simulators on the cluster, and return the function that stops them.

    `controllers=False` is for a real control plane: no scheduler, workload or Job controllers, volumes only
    provisioned (the real PV controller binds them), and node Leases renewed so the node lifecycle controller
    keeps the nodes Ready. With a `runtime`, pods' containers really run (as local processes) instead of being
    simulated; stopping the simulators then kills every process the runtime started. With `kubelet_tls` (a server
    context requiring client certificates of the cluster's CA), the kubelet API (containerLogs) is served on a
    free 127.0.0.1 port the nodes report, as an API server expects to reach a node's kubelet.
    """
    cache = Cache(WATCHED if controllers else KUBELET_WATCHED)
    api = Api(cluster, cache)
    logs = runtime.logs if runtime is not None else LogStore()
    server = None
    if kubelet_tls is not None:
        server = KubeletServer(kubelet_tls, lambda namespace, name: api.get(POD, namespace, name), logs).start()
    node_controller = NodeController(api, leases=not controllers, **({"kubelet_port": server.port} if server else {}))
    try:
        node_controller.register(nodes)
    except BaseException:
        if server is not None:
            server.close()
        raise
    kubelet: list[Controller] = [node_controller, PodController(api, logs, schedule=controllers, runtime=runtime)]
    volumes: list[Controller] = [ClaimController(api, bind=controllers), VolumeController(api, bind=controllers)]
    workloads: list[Controller] = [DeploymentController(api), ReplicaSetController(api), StatefulSetController(api),
                                   DaemonSetController(api), JobController(api),
                                   ReplicaSetController(api, REPLICATIONCONTROLLER),
                                   NamespaceContentsController(api)] if controllers else []
    simulation = Simulation(cluster, api, cache, [*kubelet, *workloads, *volumes])
    if runtime is not None:
        runtime.notify = lambda namespace, name: simulation.queue.add(Key(PodController.name, namespace, name))
    simulation.start()

    def stop() -> None:
        simulation.stop()
        if runtime is not None:
            runtime.close()
        if server is not None:
            server.close()

    return stop

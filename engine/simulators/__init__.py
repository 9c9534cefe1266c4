"""Simulated kubelet, scheduler and built-in controllers (like kwok): they write the status the real ones write.

See `annotations` for how a test sets how long simulated work takes and whether it fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.simulators.api import (
    CONFIGMAP,
    DAEMONSET,
    DEPLOYMENT,
    JOB,
    NODE,
    POD,
    PV,
    PVC,
    REPLICASET,
    SECRET,
    STATEFULSET,
    Api,
    ClusterApi,
)
from engine.simulators.cache import Cache
from engine.simulators.controllers.daemonsets import DaemonSetController
from engine.simulators.controllers.deployments import DeploymentController
from engine.simulators.controllers.jobs import JobController
from engine.simulators.controllers.replicasets import ReplicaSetController
from engine.simulators.controllers.statefulsets import StatefulSetController
from engine.simulators.kubelet.nodes import NodeController
from engine.simulators.kubelet.podruns import Limits, ProcessRuntime, isolation_problem
from engine.simulators.kubelet.pods import PodController
from engine.simulators.provisioner.pvcs import ClaimController, VolumeController
from engine.simulators.runtime import Simulation
from engine.simulators.workqueue import Key

__all__ = ["Limits", "ProcessRuntime", "isolation_problem", "process_runtime", "start"]

WATCHED = (NODE, POD, PVC, PV, DEPLOYMENT, REPLICASET, STATEFULSET, DAEMONSET, JOB)


def process_runtime(cluster: ClusterApi, limits: Limits | None = None) -> ProcessRuntime:
    """A runtime that runs pods' containers as local processes, reading ConfigMaps, Secrets and claims from
    `cluster`; pass it to `start`, and serve pods/log from its `logs`."""
    api = Api(cluster, Cache(()))
    kinds = {"ConfigMap": CONFIGMAP, "Secret": SECRET, "PersistentVolumeClaim": PVC}
    return ProcessRuntime(lambda kind, namespace, name: api.read(kinds[kind], namespace, name), limits or Limits())


def start(cluster: ClusterApi, nodes: Sequence[str] = (), runtime: ProcessRuntime | None = None) -> Callable[[], None]:
    """Register `nodes`, start every simulated controller on the cluster, and return the function that stops them.

    With a `runtime`, pods' containers really run (as local processes) instead of being simulated; stopping
    the simulators then kills every process the runtime started.
    """
    cache = Cache(WATCHED)
    api = Api(cluster, cache)
    node_controller = NodeController(api)
    node_controller.register(nodes)
    simulation = Simulation(cluster, api, cache, [
        node_controller, PodController(api, runtime), DeploymentController(api), ReplicaSetController(api),
        StatefulSetController(api), DaemonSetController(api), JobController(api), ClaimController(api),
        VolumeController(api),
    ])
    if runtime is not None:
        runtime.notify = lambda namespace, name: simulation.queue.add(Key(PodController.name, namespace, name))
    simulation.start()
    if runtime is None:
        return simulation.stop

    def stop() -> None:
        simulation.stop()
        runtime.close()

    return stop

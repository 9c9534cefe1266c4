"""Simulated kubelet, scheduler and built-in controllers (like kwok): they write the status the real ones write.

See `annotations` for how a test sets how long simulated work takes and whether it fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.simulators.api import (
    DAEMONSET,
    DEPLOYMENT,
    JOB,
    NODE,
    POD,
    PV,
    PVC,
    REPLICASET,
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
from engine.simulators.kubelet.pods import PodController
from engine.simulators.provisioner.pvcs import ClaimController, VolumeController
from engine.simulators.runtime import Simulation

__all__ = ["start"]

WATCHED = (NODE, POD, PVC, PV, DEPLOYMENT, REPLICASET, STATEFULSET, DAEMONSET, JOB)


def start(cluster: ClusterApi, nodes: Sequence[str] = ()) -> Callable[[], None]:
    """Register `nodes`, start every simulated controller on the cluster, and return the function that stops them."""
    cache = Cache(WATCHED)
    api = Api(cluster, cache)
    node_controller = NodeController(api)
    node_controller.register(nodes)
    simulation = Simulation(cluster, api, cache, [
        node_controller, PodController(api), DeploymentController(api), ReplicaSetController(api),
        StatefulSetController(api), DaemonSetController(api), JobController(api), ClaimController(api),
        VolumeController(api),
    ])
    simulation.start()
    return simulation.stop

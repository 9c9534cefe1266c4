"""Simulated kubelet, scheduler and built-in controllers (like kwok): they write the status the real ones write.

See `annotations` for how a test sets how long simulated work takes and whether it fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.devcluster.simulators.api import (
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
from engine.devcluster.simulators.cache import Cache
from engine.devcluster.simulators.daemonsets import DaemonSetController
from engine.devcluster.simulators.deployments import DeploymentController
from engine.devcluster.simulators.jobs import JobController
from engine.devcluster.simulators.nodes import NodeController
from engine.devcluster.simulators.pods import PodController
from engine.devcluster.simulators.pvcs import ClaimController, VolumeController
from engine.devcluster.simulators.replicasets import ReplicaSetController
from engine.devcluster.simulators.runtime import Simulation
from engine.devcluster.simulators.statefulsets import StatefulSetController

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

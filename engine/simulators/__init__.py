"""Simulated kubelet, scheduler, volume provisioner and built-in controllers (like kwok).

They write the status the real components write, as ordinary API clients of any cluster that offers `request`
and `subscribe` (the in-memory dev cluster in process, or any API server over HTTP). On the dev backend they play
everything a cluster runs besides the API server; on the real backend (`controllers=False`) only what the real
control plane lacks: kubelets (Nodes, their Leases, Pod status on bound pods) and a dynamic volume provisioner.
See `steering` for how a test sets how long simulated work takes and whether it fails.
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
from engine.simulators.runtime import Controller, Simulation

__all__ = ["start"]

WATCHED = (NODE, POD, PVC, PV, DEPLOYMENT, REPLICASET, STATEFULSET, DAEMONSET, JOB)
KUBELET_WATCHED = (NODE, POD, PVC, PV)


def start(cluster: ClusterApi, nodes: Sequence[str] = (), *, controllers: bool = True) -> Callable[[], None]:
    """Register `nodes`, start the simulators on the cluster, and return the function that stops them.

    `controllers=False` is for a real control plane: no scheduler, workload or Job controllers, volumes only
    provisioned (the real PV controller binds them), and node Leases renewed so the node lifecycle controller
    keeps the nodes Ready.
    """
    cache = Cache(WATCHED if controllers else KUBELET_WATCHED)
    api = Api(cluster, cache)
    node_controller = NodeController(api, leases=not controllers)
    node_controller.register(nodes)
    kubelet: list[Controller] = [node_controller, PodController(api, schedule=controllers)]
    volumes: list[Controller] = [ClaimController(api, bind=controllers), VolumeController(api, bind=controllers)]
    workloads: list[Controller] = [DeploymentController(api), ReplicaSetController(api), StatefulSetController(api),
                 DaemonSetController(api), JobController(api)] if controllers else []
    simulation = Simulation(cluster, api, cache, [*kubelet, *workloads, *volumes])
    simulation.start()
    return simulation.stop

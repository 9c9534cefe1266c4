"""The kubelet's side of Nodes: registers the configured nodes, keeps their status Ready and (if asked) their Lease.

Every node is played by this one process, so each reports InternalIP 127.0.0.1 and the port of the kubelet API
(engine/simulators/kubelet/server.py) as its daemonEndpoints.kubeletEndpoint: an API server reaches the node's
kubelet there, as it reaches a real one (for pods/log).

A real node lifecycle controller marks a node NotReady (and taints it) when its Lease in kube-node-lease is
not renewed within the grace period; the dev cluster has none, so leases are renewed only where asked.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Sequence

from engine.simulators import conditions
from engine.simulators.api import LEASE, NODE, Api, ApiFailure, Conflict, JsonDict
from engine.simulators.runtime import EVERYTHING, Ref

MANAGER = "kubelet"
LEASE_NAMESPACE = "kube-node-lease"
LEASE_SECONDS = 40  # the kubelet's default nodeLeaseDurationSeconds
RENEW_EVERY = 10.0  # seconds: a quarter of the lease duration, as the kubelet renews
KUBELET_VERSION = "v1.37.2"
ADDRESS = "127.0.0.1"  # every simulated node's InternalIP: where its kubelet API listens
KUBELET_PORT = 10250  # the kubelet's default port, reported when no kubelet API is served
CAPACITY = {"cpu": "8", "ephemeral-storage": "102400Mi", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
            "memory": "32Gi", "pods": "110"}
PRESSURES = (
    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)


NAME_LABEL = "node.kplan.dev/name"  # what kplan's packages pin pods to (nodeLabel of hello-world, ml-workflow)


def node_manifest(name: str) -> JsonDict:
    """A Node as a kubelet registers it: the well-known labels, and `node.kplan.dev/name` (as a kubelet started
    with `--node-labels=node.kplan.dev/name=NAME` would)."""
    labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", NAME_LABEL: name}
    notes = {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
    return {"metadata": {"name": name, "labels": labels, "annotations": notes}, "spec": {}}


def node_status(name: str, port: int, now: str) -> JsonDict:
    stamps = ("lastHeartbeatTime",)
    conds: list[JsonDict] = []
    for type_, reason, message in PRESSURES:
        conds = conditions.put(conds, type_, False, reason, message, now=now, stamps=stamps)
    conds = conditions.put(conds, "Ready", True, "KubeletReady", "kubelet is posting ready status", now=now,
                           stamps=stamps)
    ident = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.node.devcluster"))
    return {
        "capacity": dict(CAPACITY),
        "allocatable": dict(CAPACITY),
        "conditions": conds,
        "addresses": [{"type": "InternalIP", "address": ADDRESS}, {"type": "Hostname", "address": name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        "nodeInfo": {
            "machineID": ident.replace("-", ""), "systemUUID": ident, "bootID": ident,
            "kernelVersion": "6.8.0", "osImage": "kplan devcluster", "containerRuntimeVersion": "containerd://2.1.0",
            "kubeletVersion": KUBELET_VERSION, "kubeProxyVersion": "", "operatingSystem": "linux",
            "architecture": "amd64",
        },
    }


def internal_ip(node: JsonDict) -> str:
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return str(address.get("address") or "")
    return ""


class NodeController:
    """Gives every Node without a Ready condition the status a healthy kubelet posts."""

    name = "nodes"

    def __init__(self, api: Api, *, leases: bool = False, kubelet_port: int = KUBELET_PORT) -> None:
        self._api = api
        self._leases = leases
        self._port = kubelet_port

    def register(self, names: Sequence[str]) -> None:
        """Create the configured nodes (an existing one is kept) with their status, before anything else runs."""
        for name in names:
            with contextlib.suppress(Conflict):
                self._api.create(NODE, node_manifest(name), MANAGER)
            with contextlib.suppress(Conflict):  # a real node lifecycle controller may have tainted it already
                self.reconcile("", name)

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        if event != "DELETED" and NODE.describes(obj):
            yield "", str(obj["metadata"]["name"])

    def expand(self, marker: str) -> Iterable[Ref]:
        return [("", str(n["metadata"]["name"])) for n in self._api.objects(NODE)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        node = self._api.get(NODE, "", name)
        if node is None:
            return None
        status = node.get("status") or {}
        port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
        if conditions.find(status.get("conditions") or [], "Ready") is None or port != self._port:
            fresh = {**status, **node_status(name, self._port, conditions.timestamp())}
            self._api.write_status(NODE, node, fresh, MANAGER)
        if not self._leases:
            return None
        self.renew_lease(node)
        return RENEW_EVERY

    def renew_lease(self, node: JsonDict) -> None:
        """Create or renew the node's Lease, owned by the Node as the kubelet does."""
        name = str(node["metadata"]["name"])
        owner = {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}
        now = conditions.timestamp(micro=True)
        lease = {"metadata": {"name": name, "namespace": LEASE_NAMESPACE, "ownerReferences": [owner]},
                 "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_SECONDS, "renewTime": now}}
        try:
            self._api.patch(LEASE, LEASE_NAMESPACE, name, {"spec": {"renewTime": now}}, MANAGER)
        except ApiFailure as err:
            if err.code != 404:
                raise
            with contextlib.suppress(Conflict):
                self._api.create(LEASE, lease, MANAGER)

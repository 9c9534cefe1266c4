"""The registry of served resources: the built-in list, declared explicitly, plus CRD-defined ones."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
NO_COLLECTION_DELETE = ("create", "delete", "get", "list", "patch", "update", "watch")
SUBRESOURCE_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class ScalePaths:
    """Where /scale reads and writes in the parent object (JSON paths as in a CRD)."""

    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    label_selector: str | None = ".spec.selector"


@dataclass(frozen=True)
class CustomInfo:
    """What a CRD version adds to a served resource."""

    crd_name: str
    schema: Mapping[str, Any] = field(default_factory=dict)
    printer_columns: tuple[Mapping[str, Any], ...] = ()
    storage_version: str = ""
    selectable_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResourceType:
    """One served resource in one group version."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[str, ...] = ()
    has_generation: bool = False
    scale: ScalePaths | None = None
    custom: CustomInfo | None = None
    storage_key: str = ""  # the storage of another resource, when this one is another API over it

    @property
    def own_key(self) -> str:
        """`group/plural`: what per-kind tables (columns, field selectors) are keyed by."""
        return f"{self.group}/{self.plural}"

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        """Storage key, shared by every version of the resource (and by events.k8s.io with core Events)."""
        return self.storage_key or self.own_key

    @property
    def qualified(self) -> str:
        """`plural[.group]`, as error messages name the resource."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def is_custom(self) -> bool:
        return self.custom is not None

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    def base_path(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"


def _builtin(
    group: str, version: str, plural: str, kind: str, namespaced: bool = True, *,
    short: Sequence[str] = (), all_: bool = False, categories: Sequence[str] = (), verbs: Sequence[str] = ALL_VERBS,
    status: bool = False, scale: bool = False, generation: bool = False,
) -> ResourceType:
    subresources = (("status",) if status else ()) + (("scale",) if scale else ())
    return ResourceType(
        group=group, version=version, plural=plural, kind=kind, namespaced=namespaced, short_names=tuple(short),
        categories=("all",) if all_ else tuple(categories), verbs=tuple(verbs), subresources=subresources,
        has_generation=generation, scale=ScalePaths() if scale else None,
    )


BUILTIN: tuple[ResourceType, ...] = (
    _builtin("", "v1", "namespaces", "Namespace", False, short=["ns"], verbs=NO_COLLECTION_DELETE, status=True),
    _builtin("", "v1", "pods", "Pod", short=["po"], all_=True, status=True, generation=True),
    _builtin("", "v1", "services", "Service", short=["svc"], all_=True, status=True),
    _builtin("", "v1", "configmaps", "ConfigMap", short=["cm"]),
    _builtin("", "v1", "secrets", "Secret"),
    _builtin("", "v1", "serviceaccounts", "ServiceAccount", short=["sa"]),
    _builtin("", "v1", "events", "Event", short=["ev"]),
    _builtin("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", short=["pvc"], status=True),
    _builtin("", "v1", "persistentvolumes", "PersistentVolume", False, short=["pv"], status=True),
    _builtin("", "v1", "nodes", "Node", False, short=["no"], status=True),
    _builtin("", "v1", "endpoints", "Endpoints", short=["ep"]),
    _builtin("", "v1", "resourcequotas", "ResourceQuota", short=["quota"], status=True),
    _builtin("", "v1", "limitranges", "LimitRange", short=["limits"]),
    _builtin("", "v1", "replicationcontrollers", "ReplicationController", short=["rc"], all_=True, status=True,
             scale=True, generation=True),
    _builtin("apps", "v1", "deployments", "Deployment", short=["deploy"], all_=True, status=True, scale=True,
             generation=True),
    _builtin("apps", "v1", "statefulsets", "StatefulSet", short=["sts"], all_=True, status=True, scale=True,
             generation=True),
    _builtin("apps", "v1", "daemonsets", "DaemonSet", short=["ds"], all_=True, status=True, generation=True),
    _builtin("apps", "v1", "replicasets", "ReplicaSet", short=["rs"], all_=True, status=True, scale=True,
             generation=True),
    _builtin("apps", "v1", "controllerrevisions", "ControllerRevision"),
    _builtin("batch", "v1", "jobs", "Job", all_=True, status=True, generation=True),
    _builtin("batch", "v1", "cronjobs", "CronJob", short=["cj"], all_=True, status=True, generation=True),
    _builtin("coordination.k8s.io", "v1", "leases", "Lease"),
    _builtin("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    _builtin("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    _builtin("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    _builtin("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    _builtin("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", short=["pdb"], status=True,
             generation=True),
    _builtin("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False,
             short=["crd", "crds"], categories=["api-extensions"], status=True, generation=True),
    replace(_builtin("events.k8s.io", "v1", "events", "Event", short=["ev"]), storage_key="/events"),
    _builtin("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, categories=["api-extensions"],
             status=True),
    _builtin("networking.k8s.io", "v1", "ingresses", "Ingress", short=["ing"], status=True, generation=True),
    _builtin("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False),
    _builtin("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", short=["netpol"], generation=True),
    _builtin("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, short=["pc"]),
)

# Order of the built-in groups in /apis, as the real server lists them.
BUILTIN_GROUP_ORDER = ("", "apiregistration.k8s.io", "apps", "events.k8s.io", "batch", "networking.k8s.io", "policy",
                       "rbac.authorization.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
                       "coordination.k8s.io")

VERSION_PRIORITY = ("v1", "v1beta2", "v1beta1", "v1alpha1")


def version_rank(version: str) -> tuple[int, int, int, str]:
    """Kube-aware version order, best first (v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > others)."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (3, 0, 0, version)
    major, stage, minor = int(m[1]), m[2], int(m[3] or 0)
    stage_rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (stage_rank, -major, -minor, version)


@dataclass(frozen=True)
class _Snapshot:
    by_path: Mapping[tuple[str, str, str], ResourceType]
    by_kind: Mapping[tuple[str, str], ResourceType]
    by_key: Mapping[str, tuple[ResourceType, ...]]
    group_versions: frozenset[tuple[str, str]]


class Registry:
    """Served resources; reads take a consistent snapshot without locking, changes bump `generation`."""

    def __init__(self, builtin: Sequence[ResourceType] = BUILTIN) -> None:
        self._lock = threading.Lock()
        self._builtin = tuple(builtin)
        self._custom: dict[str, tuple[ResourceType, ...]] = {}
        self.generation = 0
        self._snapshot = self._build()

    def _build(self) -> _Snapshot:
        types = list(self._builtin) + [rt for group in self._custom.values() for rt in group]
        by_key: dict[str, list[ResourceType]] = {}
        for rt in types:
            by_key.setdefault(rt.key, []).append(rt)
        return _Snapshot(
            by_path={(rt.group, rt.version, rt.plural): rt for rt in types},
            by_kind={(rt.api_version, rt.kind): rt for rt in types},
            by_key={k: tuple(v) for k, v in by_key.items()},
            group_versions=frozenset((rt.group, rt.version) for rt in types),
        )

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._snapshot.by_path.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        return self._snapshot.by_kind.get((api_version, kind))

    def by_key(self, key: str) -> tuple[ResourceType, ...]:
        """Every served version of one stored resource."""
        return self._snapshot.by_key.get(key, ())

    def types(self) -> list[ResourceType]:
        return list(self._snapshot.by_path.values())

    def keys(self) -> list[str]:
        return sorted(self._snapshot.by_key)

    def groups(self) -> list[tuple[str, list[str]]]:
        """(group, versions best first) for every served group, core first, in the real server's order."""
        versions: dict[str, set[str]] = {}
        for rt in self._snapshot.by_path.values():
            versions.setdefault(rt.group, set()).add(rt.version)
        order = {g: i for i, g in enumerate(BUILTIN_GROUP_ORDER)}
        names = sorted(versions, key=lambda g: (order.get(g, len(order)), g))
        return [(g, sorted(versions[g], key=version_rank)) for g in names]

    def serves(self, group: str, version: str) -> bool:
        """Whether some resource is served in this group and version (what `in_group_version` would list)."""
        return (group, version) in self._snapshot.group_versions

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return sorted((rt for rt in self._snapshot.by_path.values() if (rt.group, rt.version) == (group, version)),
                      key=lambda rt: rt.plural)

    def set_custom(self, crd_name: str, types: Sequence[ResourceType]) -> None:
        """Serve (or stop serving, with no types) the versions of one CRD."""
        with self._lock:
            if types:
                self._custom[crd_name] = tuple(types)
            else:
                self._custom.pop(crd_name, None)
            self._snapshot = self._build()
            self.generation += 1

"""How the simulators reach the cluster: reads from their cache, writes through the in-process request."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from engine.simulators.cache import Cache

log = logging.getLogger(__name__)
JsonDict = dict[str, Any]
MERGE_PATCH = "application/merge-patch+json"


class ClusterApi(Protocol):
    """The part of DevCluster the simulators use (`shared`: answers and changes may be the stored objects
    themselves, which the simulators never change)."""

    def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None, body: Any = None,
                content_type: str = "application/json", user_agent: str = "devcluster",
                shared: bool = False) -> tuple[int, JsonDict]: ...

    def subscribe(self, callback: Callable[[str, JsonDict], None], *,
                  kinds: Collection[tuple[str, str]] | None = None, inline: bool = False,
                  shared: bool = False) -> Callable[[], None]: ...


@dataclass(frozen=True)
class Kind:
    """A served resource, enough to build its URLs."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool = True

    def collection(self, namespace: str = "") -> str:
        base = f"/apis/{self.api_version}" if "/" in self.api_version else f"/api/{self.api_version}"
        return f"{base}/namespaces/{namespace}/{self.plural}" if self.namespaced and namespace else \
            f"{base}/{self.plural}"

    def path(self, namespace: str, name: str, subresource: str = "") -> str:
        tail = f"/{subresource}" if subresource else ""
        return f"{self.collection(namespace)}/{name}{tail}"

    def describes(self, obj: JsonDict) -> bool:
        return obj.get("kind") == self.kind and obj.get("apiVersion") == self.api_version


NODE = Kind("v1", "Node", "nodes", namespaced=False)
POD = Kind("v1", "Pod", "pods")
PVC = Kind("v1", "PersistentVolumeClaim", "persistentvolumeclaims")
PV = Kind("v1", "PersistentVolume", "persistentvolumes", namespaced=False)
EVENT = Kind("v1", "Event", "events")
NAMESPACE = Kind("v1", "Namespace", "namespaces", namespaced=False)
SERVICEACCOUNT = Kind("v1", "ServiceAccount", "serviceaccounts")
CONFIGMAP = Kind("v1", "ConfigMap", "configmaps")
SECRET = Kind("v1", "Secret", "secrets")
REPLICATIONCONTROLLER = Kind("v1", "ReplicationController", "replicationcontrollers")
DEPLOYMENT = Kind("apps/v1", "Deployment", "deployments")
REPLICASET = Kind("apps/v1", "ReplicaSet", "replicasets")
STATEFULSET = Kind("apps/v1", "StatefulSet", "statefulsets")
DAEMONSET = Kind("apps/v1", "DaemonSet", "daemonsets")
JOB = Kind("batch/v1", "Job", "jobs")
LEASE = Kind("coordination.k8s.io/v1", "Lease", "leases")


def ref_of(obj: JsonDict) -> tuple[str, str]:
    """(namespace, name) of an object; the namespace is "" when it is cluster-scoped."""
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class ApiFailure(Exception):
    """A request the cluster refused; `code` is the HTTP status."""

    def __init__(self, code: int, method: str, path: str, body: JsonDict) -> None:
        super().__init__(f"{method} {path}: {code} {body.get('message', '')}".rstrip())
        self.code = code
        self.reason = str(body.get("reason") or "")


class Conflict(ApiFailure):
    """409: the object changed since it was read (or already exists); read it again."""


class Gone(ApiFailure):
    """404: the object (or its namespace) no longer exists."""


def failure(code: int, method: str, path: str, body: JsonDict) -> ApiFailure:
    if code == 409:
        return Conflict(code, method, path, body)
    if code == 404:
        return Gone(code, method, path, body)
    return ApiFailure(code, method, path, body)


class Api:
    """Reads from the simulators' cache; writes through `ClusterApi.request`, each naming its field manager."""

    def __init__(self, cluster: ClusterApi, cache: Cache) -> None:
        self._cluster = cluster
        self._cache = cache
        self._later: deque[Callable[[], None]] = deque()
        self._worker: threading.Thread | None = None  # the thread whose `soon` writes wait for `flush`

    def defer_on(self, worker: threading.Thread | None) -> None:
        """From now on, `soon` writes made on `worker` wait until `flush` (None: every one is made at once)."""
        self._worker = worker

    def soon(self, write: Callable[[], None]) -> None:
        """A write off the critical path (an Event): on the deferring worker, made at its next `flush`, in order."""
        if self._worker is not None and threading.current_thread() is self._worker:
            self._later.append(write)
        else:
            write()

    def pending(self) -> int:
        return len(self._later)

    def flush(self) -> None:
        """Make the writes `soon` kept back, oldest first."""
        while self._later:
            write = self._later.popleft()
            try:
                write()
            except Exception:  # best effort, as the write was: never the end of the worker
                log.exception("a deferred simulator write failed")

    def _call(self, method: str, path: str, *, query: Mapping[str, str] | None = None, body: Any = None,
              content_type: str = "application/json") -> JsonDict:
        try:
            code, answer = self._cluster.request(method, path, query=query, body=body, content_type=content_type,
                                                 user_agent="devcluster-simulators", shared=True)
        except OSError as err:  # no answer (a real API server restarting): retried like a refusal, no traceback
            raise ApiFailure(0, method, path, {"message": str(err)}) from err
        if code >= 300:
            raise failure(code, method, path, answer)
        return answer

    def _written(self, kind: Kind, answer: JsonDict) -> JsonDict:
        self._cache.remember(kind, answer)
        return answer

    def get(self, kind: Kind, namespace: str, name: str) -> JsonDict | None:
        return self._cache.get(kind, namespace, name)

    def read(self, kind: Kind, namespace: str, name: str) -> JsonDict | None:
        """One object from the server (for kinds the cache does not hold); None when it does not exist."""
        try:
            return self._call("GET", kind.path(namespace, name))
        except Gone:
            return None

    def objects(self, kind: Kind, namespace: str | None = None) -> list[JsonDict]:
        return self._cache.objects(kind, namespace)

    def owned_by(self, kind: Kind, owner_uid: str) -> list[JsonDict]:
        return self._cache.owned_by(kind, owner_uid)

    def fetch_all(self, kind: Kind) -> list[JsonDict]:
        """Every object of a kind, from the server (to fill the cache at start)."""
        answer = self._call("GET", kind.collection())
        return [{"apiVersion": kind.api_version, "kind": kind.kind, **item} for item in answer.get("items") or []]

    def create(self, kind: Kind, obj: JsonDict, manager: str) -> JsonDict:
        namespace = str((obj.get("metadata") or {}).get("namespace") or "")
        body = {"apiVersion": kind.api_version, "kind": kind.kind, **obj}
        return self._written(kind, self._call("POST", kind.collection(namespace), query={"fieldManager": manager},
                                              body=body))

    def write_status(self, kind: Kind, obj: JsonDict, status: JsonDict, manager: str,
                     annotations: Mapping[str, str] | None = None) -> JsonDict:
        """Replace the status (and merge annotations) with a PUT on /status, unless nothing would change."""
        metadata = dict(obj.get("metadata") or {})
        merged = {**(metadata.get("annotations") or {}), **(annotations or {})}
        if obj.get("status") == status and merged == (metadata.get("annotations") or {}):
            return obj
        if merged:
            metadata["annotations"] = merged
        body = {**obj, "metadata": metadata, "status": status}
        path = kind.path(str(metadata.get("namespace") or ""), str(metadata["name"]), "status")
        return self._written(kind, self._call("PUT", path, query={"fieldManager": manager}, body=body))

    def patch(self, kind: Kind, namespace: str, name: str, patch: JsonDict, manager: str,
              subresource: str = "") -> JsonDict:
        """A JSON merge patch; put metadata.resourceVersion in it to make it conditional."""
        return self._written(kind, self._call("PATCH", kind.path(namespace, name, subresource),
                                              query={"fieldManager": manager}, body=patch, content_type=MERGE_PATCH))

    def remove_finalizer(self, kind: Kind, obj: JsonDict, finalizer: str, manager: str) -> JsonDict:
        """Drop one finalizer (if present), conditional on the object's resourceVersion."""
        meta = obj["metadata"]
        finalizers = [f for f in meta.get("finalizers") or [] if f != finalizer]
        if len(finalizers) == len(meta.get("finalizers") or []):
            return obj
        patch = {"metadata": {"finalizers": finalizers or None, "resourceVersion": meta["resourceVersion"]}}
        return self.patch(kind, str(meta.get("namespace") or ""), str(meta["name"]), patch, manager)

    def delete(self, kind: Kind, namespace: str, name: str, *, grace_seconds: int | None = None,
               uid: str = "") -> None:
        body: JsonDict = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        if grace_seconds is not None:
            body["gracePeriodSeconds"] = grace_seconds
        if uid:
            body["preconditions"] = {"uid": uid}
        try:
            self._call("DELETE", kind.path(namespace, name), body=body)
        except Gone:
            return

"""Kube: one connection to one API server; objects are plain dicts, failures are kplan errors."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from typing import Any

from engine.kube.clock import Clock, SystemClock
from engine.kube.discovery import Discovery, Resource
from engine.kube.errors import AlreadyExists, NotFound, NotKubernetes
from engine.kube.events import record_event
from engine.kube.fence import Fence
from engine.kube.managers import hand_over
from engine.kube.metrics import CountingApiClient
from engine.kube.objects import describe, identity_of, with_type
from engine.kube.retrying import Retrying
from engine.kube.status import update_status
from engine.kube.transport import DISCOVERY_TIMEOUT, Transport
from engine.kube.waiting import wait_for
from engine.kube.watching import Watch
from engine.kube.wire import APPLY_PATCH

__all__ = ["APPLY_PATCH", "MERGE_PATCH", "Kube"]

MERGE_PATCH = "application/merge-patch+json"
LIST_PAGE = "500"

Objects = list[dict[str, Any]]


class Kube:
    """The API operations kplan needs. A namespaced kind with no namespace given uses `namespace`,
    except for `list` and `watch`, where no namespace means all namespaces. With `retry_for` (seconds from now),
    transient failures are retried until then (the CLI's way); without it every failure is raised at once."""

    def __init__(
        self,
        api_client: CountingApiClient,
        namespace: str = "default",
        *,
        clock: Clock | None = None,
        retry_for: float | None = None,
    ):
        self.namespace = namespace
        self.clock: Clock = clock or SystemClock()
        self.api_client = api_client
        retrying = Retrying.within(self.clock, retry_for) if retry_for is not None else None
        self.transport = Transport(api_client, retrying)
        self._discovery = Discovery(self._fetch_discovery)
        self._kubernetes_checked = False

    @property
    def requests(self) -> Counter[str]:
        """API requests sent so far, by verb (get, list, watch, create, update, patch, apply, delete, ...)."""
        return self.api_client.requests

    def fenced(self, fence: Fence) -> Kube:
        """This Kube on the same connection and discovery, whose every request keeps to `fence` (a leader's
        passes: none is sent, and none outlasts it, once the Lease may have passed to another)."""
        view = copy.copy(self)
        view.transport = Transport(self.api_client, self.transport.retrying, fence)
        return view

    def close(self) -> None:
        self.api_client.close()  # type: ignore[no-untyped-call]

    def __enter__(self) -> Kube:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- discovery -------------------------------------------------------------------------

    def resource(self, api_version: str, kind: str) -> Resource:
        """How the server serves `kind`; a miss re-asks the server once (a CRD may just have been installed)."""
        return self._discovery.resource(api_version, kind)

    def _fetch_discovery(self, path: str) -> dict[str, Any] | None:
        try:
            body = self.transport.request("GET", path, action="discover", what=path, timeout=DISCOVERY_TIMEOUT)
        except NotFound:
            self._check_kubernetes()
            return None
        return dict(body or {})

    def _check_kubernetes(self) -> None:
        """PermanentError when the server does not serve core discovery (`/api`): it is no Kubernetes API server,
        and a group it does not serve says nothing about CRDs (checked once)."""
        if self._kubernetes_checked:
            return
        try:
            core = self.transport.request("GET", "/api", action="discover", what="/api", timeout=DISCOVERY_TIMEOUT)
        except NotFound:
            core = None
        if not isinstance(core, dict) or core.get("kind") != "APIVersions":
            raise NotKubernetes(f"the server at {self.transport.server} is not a Kubernetes API server (GET /api "
                                 "does not answer with its API versions); check --kubeconfig and --context")
        self._kubernetes_checked = True

    # --- objects ---------------------------------------------------------------------------

    def apply(
        self, obj: Mapping[str, Any], *, force: bool = False, field_manager: str = "kplan", dry_run: bool = False
    ) -> dict[str, Any]:
        """Server-side apply; FieldConflict when other managers own fields `obj` sets and `force` is off."""
        resource, namespace, name = self._locate(obj)
        query = {"fieldManager": field_manager}
        if force:
            query["force"] = "true"
        if dry_run:
            query["dryRun"] = "All"
        path = resource.path(namespace, name)
        return self._object_call("apply", resource, namespace, name, "PATCH", path, query, dict(obj), APPLY_PATCH)

    def hand_over(self, api_version: str, kind: str, name: str, namespace: str | None, managers: Collection[str],
                  to: str) -> dict[str, Any] | None:
        """Make field manager `to` own the fields `managers` own on the object (engine.kube.managers)."""
        return hand_over(self, api_version, kind, name, namespace, managers, to)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """The live object, or None when it does not exist."""
        resource = self.resource(api_version, kind)
        namespace = self._namespace_for(resource, namespace)
        try:
            return self._object_call("get", resource, namespace, name, "GET", resource.path(namespace, name))
        except NotFound:
            return None

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> list[dict[str, Any]]:
        """Every object of `kind` in `namespace` (all namespaces when None) matching the selectors."""
        return self.list_with_version(api_version, kind, namespace, label_selector, field_selector)[0]

    def list_with_version(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> tuple[Objects, str]:
        """The objects and the list's resourceVersion, to watch from without missing a change."""
        resource = self.resource(api_version, kind)
        query = selector_query(label_selector, field_selector)
        where = f"in namespace {namespace}" if namespace and resource.namespaced else "in all namespaces"
        items: Objects = []
        while True:
            body = self.transport.request(
                "GET", resource.path(namespace), action="list", what=f"{kind} objects {where}",
                query={**query, "limit": LIST_PAGE},
            )
            items += [with_type(item, api_version, kind) for item in body.get("items") or []]
            meta = body.get("metadata") or {}
            if not meta.get("continue"):
                return items, str(meta.get("resourceVersion") or "")
            query["continue"] = str(meta["continue"])

    def create(
        self,
        obj: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        same: Callable[[Mapping[str, Any]], bool] | None = None,
    ) -> dict[str, Any]:
        """Create `obj`; AlreadyExists when its name is taken.

        A POST answered 500/502/504 or cut may have been carried out, so it is not sent again — unless `same` tells
        what was sent from someone else's object: then it is resent by the retry rules, and an AlreadyExists after
        a resend is the lost answer of an earlier attempt when `same(found)`, which is returned as created."""
        resource, namespace, name = self._locate(obj)
        path, query = resource.path(namespace), manager_query(field_manager)
        try:
            return self._object_call("create", resource, namespace, name, "POST", path, query, dict(obj),
                                     repeatable=True if same is not None else None)
        except AlreadyExists as exc:
            found = self.get(resource.api_version, resource.kind, name, namespace) if exc.attempts > 1 else None
            if found is None or same is None or not same(found):
                raise
            return found

    def replace(
        self, obj: Mapping[str, Any], *, subresource: str | None = None, field_manager: str | None = None
    ) -> dict[str, Any]:
        """PUT `obj` (its resourceVersion, when set, is a precondition: Conflict when the object changed)."""
        resource, namespace, name = self._locate(obj)
        path, query = resource.path(namespace, name, subresource), manager_query(field_manager)
        return self._object_call("update", resource, namespace, name, "PUT", path, query, dict(obj))

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        patch: Any,
        *,
        content_type: str = MERGE_PATCH,
        subresource: str | None = None,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        """Patch with a merge patch (default), a JSON patch (a list) or a strategic merge patch."""
        resource = self.resource(api_version, kind)
        namespace = self._namespace_for(resource, namespace)
        path, query = resource.path(namespace, name, subresource), manager_query(field_manager)
        return self._object_call("patch", resource, namespace, name, "PATCH", path, query, patch, content_type)

    def delete(
        self, api_version: str, kind: str, name: str, namespace: str | None = None, *, propagation: str = "Background"
    ) -> bool:
        """Delete (finalizers may keep it a while); False when it was already gone."""
        resource = self.resource(api_version, kind)
        namespace = self._namespace_for(resource, namespace)
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation}
        try:
            path = resource.path(namespace, name)
            self._object_call("delete", resource, namespace, name, "DELETE", path, body=options)
        except NotFound:
            return False
        return True

    # --- status, events, watching ----------------------------------------------------------

    def update_status(self, obj: Mapping[str, Any], new_status: Mapping[str, Any]) -> dict[str, Any]:
        """Write `new_status` as the object's whole status; re-reads and retries when the object changed."""
        return update_status(self, obj, new_status)

    def event(
        self, involved: Mapping[str, Any], reason: str, message: str, *, type: str = "Normal", component: str = "kplan"
    ) -> None:
        """Record a core/v1 Event about `involved`; a repeat bumps the existing Event's count."""
        record_event(self, involved, reason, message, type=type, component=component)

    def watch(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        timeout: float | None = None,
        initial_events: bool = False,
    ) -> Watch:
        """(type, object) for each change after `resource_version` until `timeout`, resuming after cuts;
        raises Expired when the server no longer has that version (list again). With `initial_events`, the objects
        there are now come first (engine.kube.watching.Watch)."""
        resource = self.resource(api_version, kind)
        query = selector_query(label_selector, field_selector)
        return Watch(self.transport, resource, namespace if resource.namespaced else None, query,
                     resource_version=resource_version, timeout=timeout, clock=self.clock,
                     initial_events=initial_events)

    def wait_for(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        predicate: Callable[[dict[str, Any] | None], bool],
        timeout: float,
        *,
        condition: str = "the expected state",
        seen: Mapping[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """The object (None: absent) once `predicate` holds; Timeout naming `condition` after `timeout` s. `seen`: the
        object as just written or read, watched on from its resourceVersion without a list first."""
        return wait_for(self, api_version, kind, name, namespace, predicate, timeout, condition=condition, seen=seen)

    # --- helpers ---------------------------------------------------------------------------

    def _namespace_for(self, resource: Resource, namespace: str | None) -> str | None:
        if not resource.namespaced:
            return None
        return namespace or self.namespace

    def _locate(self, obj: Mapping[str, Any]) -> tuple[Resource, str | None, str]:
        api_version, kind, namespace, name = identity_of(obj)
        resource = self.resource(api_version, kind)
        return resource, self._namespace_for(resource, namespace), name

    def _object_call(
        self,
        action: str,
        resource: Resource,
        namespace: str | None,
        name: str,
        method: str,
        path: str,
        query: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        repeatable: bool | None = None,
    ) -> dict[str, Any]:
        what = describe(resource.kind, namespace, name or "(generated name)")
        answer = self.transport.request(
            method, path, action=action, what=what, query=query, body=body, content_type=content_type,
            repeatable=repeatable,
        )
        found: dict[str, Any] = answer or {}
        return with_type(found, resource.api_version, resource.kind)


def manager_query(field_manager: str | None) -> dict[str, str]:
    """Writes other than apply name their manager only when asked; the server then derives it from the user agent."""
    return {"fieldManager": field_manager} if field_manager else {}


def selector_query(label_selector: str | None, field_selector: str | None) -> dict[str, str]:
    query = {}
    if label_selector:
        query["labelSelector"] = label_selector
    if field_selector:
        query["fieldSelector"] = field_selector
    return query

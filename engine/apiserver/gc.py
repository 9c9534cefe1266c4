"""The control-plane controllers the API server needs: garbage collection, namespace and CRD cleanup.

They run on one thread fed by every committed event, and write through the same commit path as requests.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine.apiserver import crds, quotausage
from engine.apiserver.deletion import FOREGROUND, ORPHAN, DeleteOptions, delete_object
from engine.apiserver.objects import (
    JsonDict,
    copy_json,
    finalizers_of,
    get_path,
    is_terminating,
    meta,
    name_of,
    namespace_of,
    now,
    owner_refs,
    uid_of,
)
from engine.apiserver.quotas import QUOTAS
from engine.apiserver.reads import served_form
from engine.apiserver.resources import ResourceType
from engine.apiserver.routing import Target
from engine.apiserver.status import ApiError
from engine.apiserver.store import DELETED, Event, ObjectRef
from engine.apiserver.writes import WriteOptions, commit_update

if TYPE_CHECKING:
    from engine.apiserver.api import Api

log = logging.getLogger(__name__)
MANAGER = "kube-controller-manager"
NAMESPACE_FINALIZER = "kubernetes"


def resource_for(api: Api, key: str) -> ResourceType | None:
    """A served version of a stored resource, the storage version first."""
    types = api.registry.by_key(key)
    for rt in types:
        if rt.custom is None or rt.custom.storage_version in ("", rt.version):
            return rt
    return types[0] if types else None


def delete_ref(api: Api, ref: ObjectRef, uid: str, policy: str = "Background") -> None:
    key, ns, name = ref
    rt = resource_for(api, key)
    with api.store.lock:
        obj = api.store.get(key, ns, name)
        if rt is None or obj is None or uid_of(obj) != uid or is_terminating(obj):
            return
        delete_object(api, rt, obj, DeleteOptions(propagation=policy, uid=uid))


def mutate(api: Api, ref: ObjectRef, uid: str, change: Callable[[JsonDict], None], subresource: str = "") -> None:
    """Read, change and write one object as a controller (skipped when it is gone or was replaced)."""
    key, ns, name = ref
    rt = resource_for(api, key)
    with api.store.lock:
        obj = api.store.get(key, ns, name)
        if rt is None or obj is None or uid_of(obj) != uid:
            return
        new = copy_json(served_form(rt, obj))
        change(new)
        commit_update(api, Target(rt, ns, name, subresource), obj, new, WriteOptions(False, MANAGER, "Ignore"))


def without_finalizer(finalizer: str) -> Callable[[JsonDict], None]:
    def change(obj: JsonDict) -> None:
        meta(obj)["finalizers"] = [f for f in finalizers_of(obj) if f != finalizer]
    return change


def without_owner(owner_uid: str) -> Callable[[JsonDict], None]:
    def change(obj: JsonDict) -> None:
        meta(obj)["ownerReferences"] = [r for r in owner_refs(obj) if r.get("uid") != owner_uid]
    return change


def ref_of(key: str, obj: JsonDict) -> ObjectRef:
    return key, namespace_of(obj), name_of(obj)


class Controllers:
    """Consumes, on its own thread until stopped, the committed events that may give it work: the thread is not
    woken for the others (a change of an object whose owners all exist, in a namespace without quotas)."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self._events: queue.SimpleQueue[Event | None] = queue.SimpleQueue()
        self._stop_observing: Callable[[], None] | None = None
        self._thread = threading.Thread(target=self._run, name="devcluster-controllers", daemon=True)

    def start(self) -> None:
        self._stop_observing = self.api.store.observe((None,), self._offer)
        self._thread.start()

    def stop(self) -> None:
        if self._stop_observing is not None:
            self._stop_observing()
            self._stop_observing = None
        self._events.put(None)
        self._thread.join(timeout=10)

    def _offer(self, event: Event) -> None:
        """Queue an event (under the store lock, as it is committed) unless handling it would do nothing: what
        is skipped here is handled when the change that gives it work (an owner's deletion, a quota) comes."""
        obj = event.obj
        if (event.type == DELETED or is_terminating(obj) or self.api.store.count(QUOTAS, namespace_of(obj))
                or not all(self.owner_present(obj, ref) for ref in owner_refs(obj))):
            self._events.put(event)

    def _run(self) -> None:
        while True:
            event = self._events.get()
            if event is None:
                return
            try:
                self.handle(event)
            except ApiError as e:
                log.info("controller write refused", extra={"reason": e.reason, "message": e.message})
            except Exception:
                log.exception("controller failed", extra={"key": event.key})

    def handle(self, event: Event) -> None:
        obj = event.obj
        quotausage.sync(self.api, namespace_of(obj))
        if event.type == DELETED:
            self._owner_gone(uid_of(obj))
            self._dependent_gone(obj)
            self._content_gone(event.key, obj)
            return
        if is_terminating(obj):
            self._finish_deletion(event.key, obj)
        if owner_refs(obj):
            self.collect(ref_of(event.key, obj))

    # garbage collection

    def owner_present(self, dependent: JsonDict, ref: dict[str, Any]) -> bool:
        found = self.api.store.locate(str(ref.get("uid", "")))
        if found is None:
            return False
        _, owner_ns, _ = found
        return not owner_ns or owner_ns == namespace_of(dependent)

    def collect(self, ref: ObjectRef) -> None:
        """Delete a dependent whose owners are all gone; drop references to the absent ones otherwise."""
        with self.api.store.lock:
            obj = self.api.store.get(*ref)
            if obj is None:
                return
            refs = owner_refs(obj)
            absent = [r for r in refs if not self.owner_present(obj, r)]
            if not absent:
                return
            if len(absent) == len(refs):
                if not is_terminating(obj):
                    delete_ref(self.api, ref, uid_of(obj))
                return
            for owner in absent:
                mutate(self.api, ref, uid_of(obj), without_owner(str(owner.get("uid"))))

    def _owner_gone(self, uid: str) -> None:
        for ref in self.api.store.dependents(uid):
            self.collect(ref)

    def _dependent_gone(self, obj: JsonDict) -> None:
        """A foreground owner may be waiting for this dependent."""
        for ref in owner_refs(obj):
            found = self.api.store.locate(str(ref.get("uid", "")))
            if found is not None:
                owner = self.api.store.get(*found)
                if owner is not None and FOREGROUND in finalizers_of(owner):
                    self._foreground(found, owner)

    def _finish_deletion(self, key: str, obj: JsonDict) -> None:
        finalizers = finalizers_of(obj)
        if ORPHAN in finalizers:
            self._orphan(ref_of(key, obj), obj)
        if FOREGROUND in finalizers:
            self._foreground(ref_of(key, obj), obj)
        if key == "/namespaces":
            self.drain_namespace(name_of(obj))
        if key == crds.CRD_KEY and crds.CLEANUP_FINALIZER in finalizers:
            self.cleanup_crd(obj)

    def _orphan(self, ref: ObjectRef, owner: JsonDict) -> None:
        uid = uid_of(owner)
        for dep in self.api.store.dependents(uid):
            dependent = self.api.store.get(*dep)
            if dependent is not None:
                mutate(self.api, dep, uid_of(dependent), without_owner(uid))
        mutate(self.api, ref, uid, without_finalizer(ORPHAN))

    def _foreground(self, ref: ObjectRef, owner: JsonDict) -> None:
        uid = uid_of(owner)
        blocking = 0
        for dep in self.api.store.dependents(uid):
            dependent = self.api.store.get(*dep)
            if dependent is None:
                continue
            blocks = any(r.get("uid") == uid and r.get("blockOwnerDeletion") for r in owner_refs(dependent))
            blocking += blocks
            if not is_terminating(dependent):
                delete_ref(self.api, dep, uid_of(dependent), "Foreground" if blocks else "Background")
        if not blocking:
            mutate(self.api, ref, uid, without_finalizer(FOREGROUND))

    # namespaces and CRDs

    def _content_gone(self, key: str, obj: JsonDict) -> None:
        """When the last object of a terminating namespace or CRD is gone, finish that deletion."""
        store = self.api.store
        ns = namespace_of(obj)
        if ns:
            namespace = store.get("/namespaces", "", ns)
            if namespace is not None and is_terminating(namespace) and not store.keys_in_namespace(ns):
                self.drain_namespace(ns)
        rt = resource_for(self.api, key)
        if rt is not None and rt.custom is not None:
            crd = store.get(crds.CRD_KEY, "", rt.custom.crd_name)
            if crd is not None and is_terminating(crd) and not store.items(key):
                self.cleanup_crd(crd)

    def drain_namespace(self, ns: str) -> None:
        """Delete everything in a terminating namespace; finalize it once it is empty."""
        store = self.api.store
        with store.lock:
            namespace = store.get("/namespaces", "", ns)
            if namespace is None or NAMESPACE_FINALIZER not in (get_path(namespace, ["spec", "finalizers"]) or []):
                return
            remaining: dict[str, int] = {}
            for key in store.keys_in_namespace(ns):
                for obj in store.items(key, ns):
                    remaining[key] = remaining.get(key, 0) + 1
                    if not is_terminating(obj):
                        delete_ref(self.api, ref_of(key, obj), uid_of(obj))
            left = {k: store.count(k, ns) for k in remaining if store.count(k, ns)}
            ref = ("/namespaces", "", ns)
            if left:
                mutate(self.api, ref, uid_of(namespace), lambda o: set_content_conditions(o, left), "status")
            else:
                mutate(self.api, ref, uid_of(namespace), drop_namespace_finalizer, "finalize")

    def cleanup_crd(self, crd: JsonDict) -> None:
        spec = crd.get("spec") or {}
        key = f"{spec.get('group')}/{get_path(spec, ['names', 'plural'])}"
        with self.api.store.lock:
            items = self.api.store.items(key)
            for obj in items:
                if not is_terminating(obj):
                    delete_ref(self.api, ref_of(key, obj), uid_of(obj))
            if not self.api.store.items(key):
                mutate(self.api, (crds.CRD_KEY, "", name_of(crd)), uid_of(crd),
                       without_finalizer(crds.CLEANUP_FINALIZER))


def drop_namespace_finalizer(obj: JsonDict) -> None:
    spec = obj.setdefault("spec", {})
    spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != NAMESPACE_FINALIZER]


def set_content_conditions(obj: JsonDict, left: dict[str, int]) -> None:
    """The namespace controller's report of what is still being removed."""
    status = obj.setdefault("status", {})
    listed = ", ".join(f"{k.split('/', 1)[1]}{'.' + k.split('/', 1)[0] if k.split('/', 1)[0] else ''} has {n} "
                       f"resource instances" for k, n in sorted(left.items()))
    previous = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}

    def condition(kind: str, value: str, reason: str, message: str) -> dict[str, Any]:
        before = previous.get(kind)
        since = before.get("lastTransitionTime") if before and before.get("status") == value else None
        return {"type": kind, "status": value, "lastTransitionTime": since or now(), "reason": reason,
                "message": message}

    status["conditions"] = [
        condition("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered",
                  "All resources successfully discovered"),
        condition("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions",
                  "All legacy kube types successfully parsed"),
        condition("NamespaceDeletionContentFailure", "False", "ContentDeleted",
                  "All content successfully deleted, may be waiting on finalization"),
        condition("NamespaceContentRemaining", "True", "SomeResourcesRemain", f"Some resources are remaining: "
                                                                              f"{listed}"),
        condition("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
                  "All content-preserving finalizers finished"),
    ]

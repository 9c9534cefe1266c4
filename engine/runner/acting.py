"""Carrying out a decision's actions through Kube: applies and deletes (failures reported), Instance patches."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from engine.errors import KplanError
from engine.kube import Kube
from engine.planner import (
    FINALIZER,
    Action,
    AddFinalizer,
    Apply,
    ClearPlanExecution,
    Delete,
    Failure,
    GenerateParameters,
    Ref,
)
from engine.planner import RemoveFinalizer as RemoveFinalizerAction
from engine.planner.ownership import INSTANCE_NAMESPACE
from engine.runner import generated
from engine.runner.echoes import Echoes
from engine.runner.observed import RecentWrites

__all__ = ["INSTANCE_NAMESPACE", "Acting", "instance_key", "with_instance_namespace"]

log = logging.getLogger(__name__)

INSTANCE_LABEL = "kplan.dev/instance"
Json = dict[str, Any]


def with_instance_namespace(obj: Mapping[str, Any], namespace: str) -> Json:
    """`obj`, annotated with its Instance's namespace when no ownerReference leads back to the Instance.

    Cluster-scoped and cross-namespace objects carry only the instance label (a name); the annotation lets
    a watch event on them be mapped to the Instance that applied them.
    """
    meta = obj.get("metadata") or {}
    owned = any(o.get("kind") == "Instance" for o in meta.get("ownerReferences") or [])
    if owned or INSTANCE_LABEL not in (meta.get("labels") or {}):
        return dict(obj)
    annotations = {**(meta.get("annotations") or {}), INSTANCE_NAMESPACE: namespace}
    return {**obj, "metadata": {**meta, "annotations": annotations}}


class Acting:
    """The writes of one Runner. Applied objects are remembered in `recent` until the caches show them, and noted in
    `echoes` with the Instance whose pass wrote them, as is each write of the Instance."""

    def __init__(self, kube: Kube, recent: RecentWrites, echoes: Echoes) -> None:
        self._kube, self._recent, self._echoes = kube, recent, echoes

    def objects(self, actions: Sequence[Action], namespace: str, key: str = "") -> list[Failure]:
        """Carry out every Apply, Delete and GenerateParameters (for the pass of Instance `key`); the first failure
        of each action is reported, the rest skipped."""
        failures = []
        for action in actions:
            try:
                if isinstance(action, Apply):
                    self._apply(action, namespace, key)
                elif isinstance(action, Delete):
                    self._delete(action)
                elif isinstance(action, GenerateParameters):
                    self._recent.remember(generated.store(self._kube, action))
            except KplanError as error:
                log.info("action failed", extra={"step": action.step, "error": str(error)})
                failures.append(Failure(action.step, error))
        return failures

    def _apply(self, action: Apply, namespace: str, key: str) -> None:
        for handover in action.handovers:
            ref = handover.ref
            self._kube.hand_over(ref.api_version, ref.kind, ref.name, ref.namespace, handover.managers,
                                 action.manager)
        for obj in action.objects:
            applied = self._kube.apply(with_instance_namespace(obj, namespace), force=action.force,
                                       field_manager=action.manager)
            self._recent.remember(applied)
            if key:
                self._echoes.wrote(applied, key)

    def _delete(self, action: Delete) -> None:
        for ref in action.refs:
            self._kube.delete(ref.api_version, ref.kind, ref.name, ref.namespace)
            self._recent.forget(ref)

    # --- the Instance itself (resourceVersion preconditions: Conflict escapes, the caller decides again) ---

    def before(self, actions: Sequence[Action], instance: Json) -> Json:
        """Add the finalizer first, so a deletion cannot skip the cleanup of anything applied next."""
        if any(isinstance(a, AddFinalizer) for a in actions) and FINALIZER not in finalizers(instance):
            return self._patch_instance(instance, {"metadata": {"finalizers": [*finalizers(instance), FINALIZER]}})
        return instance

    def after(self, actions: Sequence[Action], instance: Json) -> Json:
        """Clear a recorded plan request and release a finished uninstall, after the status is written."""
        if any(isinstance(a, ClearPlanExecution) for a in actions):
            instance = self._patch_instance(instance, {"spec": {"planExecution": None}})
        if any(isinstance(a, RemoveFinalizerAction) for a in actions) and FINALIZER in finalizers(instance):
            kept = [f for f in finalizers(instance) if f != FINALIZER]
            instance = self._patch_instance(instance, {"metadata": {"finalizers": kept}})
        return instance

    def write_status(self, instance: Json, status: Mapping[str, Any]) -> Json:
        """PUT the whole status under the Instance's resourceVersion (Conflict when it changed meanwhile).

        Without managedFields: the cached Instance holds them compacted, and a PUT that carries them replaces
        the server's; left out, the server keeps its own."""
        subresource = "status" if self._kube.resource(*api_kind(instance)).has_status else None
        meta = {k: v for k, v in (instance.get("metadata") or {}).items() if k != "managedFields"}
        written = self._kube.replace({**instance, "metadata": meta, "status": dict(status)}, subresource=subresource)
        self._recent.remember(written)
        self._echoes.wrote(written, instance_key(written))
        return written

    def _patch_instance(self, instance: Json, patch: Json) -> Json:
        meta = instance.get("metadata") or {}
        precondition = {"metadata": {**patch.get("metadata", {}), "resourceVersion": meta.get("resourceVersion")}}
        api_version, kind = api_kind(instance)
        patched = self._kube.patch(api_version, kind, str(meta.get("name")), meta.get("namespace"),
                                   {**patch, **precondition})
        self._recent.remember(patched)
        self._echoes.wrote(patched, instance_key(patched))
        return patched


def instance_key(instance: Mapping[str, Any]) -> str:
    """`namespace/name`, the key an Instance is queued and reconciled by."""
    meta = instance.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def finalizers(instance: Mapping[str, Any]) -> list[str]:
    return list((instance.get("metadata") or {}).get("finalizers") or [])


def api_kind(instance: Mapping[str, Any]) -> tuple[str, str]:
    return str(instance.get("apiVersion") or Ref.of(instance).api_version), str(instance.get("kind") or "Instance")

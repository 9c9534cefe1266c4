"""CustomResourceDefinitions: validation, status conditions, and serving their resources once stored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engine.apiserver import celrules
from engine.apiserver.objects import JsonDict, get_path, is_terminating, name_of, now
from engine.apiserver.resources import CustomInfo, ResourceType, ScalePaths
from engine.apiserver.status import ErrorType, FieldError
from engine.apiserver.store import DELETED, Event

if TYPE_CHECKING:
    from engine.apiserver.api import Api

CRD_KEY = "apiextensions.k8s.io/customresourcedefinitions"
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
CUSTOM_VERBS = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")


def prepare_for_create(api: Api, rt: ResourceType, obj: JsonDict) -> None:
    if rt.key == CRD_KEY:
        obj["status"] = status_for(obj, None)


def prepare_for_update(rt: ResourceType, new: JsonDict, old: JsonDict) -> None:
    if rt.key == CRD_KEY:
        new["status"] = status_for(new, old.get("status"))


def _condition(kind: str, status: str, reason: str, message: str, previous: list[Any]) -> dict[str, Any]:
    before = next((c for c in previous if isinstance(c, dict) and c.get("type") == kind), None)
    since = before.get("lastTransitionTime") if before and before.get("status") == status else None
    return {"type": kind, "status": status, "lastTransitionTime": since or now(), "reason": reason,
            "message": message}


def status_for(crd: JsonDict, previous: Any) -> dict[str, Any]:
    """NamesAccepted and Established at once (plus Terminating while being deleted), names and stored versions."""
    previous = previous if isinstance(previous, dict) else {}
    old_conditions = previous.get("conditions") or []
    spec = crd.get("spec") or {}
    names = dict(spec.get("names") or {})
    conditions = [
        _condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", old_conditions),
        _condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted",
                   old_conditions),
    ]
    if is_terminating(crd):
        conditions.append(_condition("Terminating", "True", "InstanceDeletionInProgress",
                                     "CustomResource deletion is in progress", old_conditions))
    stored = list(previous.get("storedVersions") or [])
    storage = storage_version(crd)
    if storage and storage not in stored:
        stored.append(storage)
    return {"acceptedNames": names, "conditions": conditions, "storedVersions": stored}


def mark_terminating(crd: JsonDict) -> None:
    crd["status"] = status_for(crd, crd.get("status"))


def storage_version(crd: JsonDict) -> str:
    versions = get_path(crd, ["spec", "versions"]) or []
    return next((str(v.get("name")) for v in versions if isinstance(v, dict) and v.get("storage")), "")


def spec_errors(api: Api, rt: ResourceType, new: JsonDict, old: JsonDict | None) -> list[FieldError]:
    """The CRD rules of §6 (name, one storage version, schemas, scope)."""
    if rt.key != CRD_KEY:
        return []
    spec = new.get("spec") or {}
    names = spec.get("names") or {}
    errors: list[FieldError] = []
    group, plural, kind = spec.get("group"), names.get("plural"), names.get("kind")
    if not group:
        errors.append(FieldError(ErrorType.REQUIRED, "spec.group"))
    if not plural:
        errors.append(FieldError(ErrorType.REQUIRED, "spec.names.plural"))
    if not kind:
        errors.append(FieldError(ErrorType.REQUIRED, "spec.names.kind"))
    if group and plural and name_of(new) != f"{plural}.{group}":
        errors.append(FieldError(ErrorType.INVALID, "metadata.name", name_of(new),
                                 'must be spec.names.plural+"."+spec.group'))
    scope = spec.get("scope")
    if scope not in ("Cluster", "Namespaced"):
        errors.append(FieldError(ErrorType.NOT_SUPPORTED, "spec.scope", scope,
                                 'supported values: "Cluster", "Namespaced"'))
    if old is not None and scope != get_path(old, ["spec", "scope"]):
        errors.append(FieldError(ErrorType.INVALID, "spec.scope", scope, "field is immutable"))
    errors += _version_errors(spec.get("versions") or [])
    return errors


def _version_errors(versions: list[Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    if not versions:
        errors.append(FieldError(ErrorType.INVALID, "spec.versions", versions, "must have exactly one version "
                                                                               "marked as storage version"))
        return errors
    storage = [v for v in versions if isinstance(v, dict) and v.get("storage")]
    if len(storage) != 1:
        errors.append(FieldError(ErrorType.INVALID, "spec.versions", versions,
                                 "must have exactly one version marked as storage version"))
    schemas = [get_path(v, ["schema", "openAPIV3Schema"]) if isinstance(v, dict) else None for v in versions]
    if isinstance(schemas[0], dict) and all(s == schemas[0] for s in schemas):
        # identical schemas are validated once, as the internal version's spec.validation
        return errors + _schema_errors(schemas[0], "spec.validation.openAPIV3Schema")
    for i, (version, schema) in enumerate(zip(versions, schemas, strict=True)):
        if isinstance(version, dict):
            errors += _schema_errors(schema, f"spec.versions[{i}].schema.openAPIV3Schema")
    return errors


def _schema_errors(schema: Any, where: str) -> list[FieldError]:
    if not isinstance(schema, dict):
        return [FieldError(ErrorType.REQUIRED, where, detail="schemas are required")]
    if schema.get("type") != "object":
        return [FieldError(ErrorType.REQUIRED if "type" not in schema else ErrorType.INVALID,
                           f"{where}.type", schema.get("type"), "must be object at the root")]
    return celrules.schema_errors(schema, where)


def resource_types(crd: JsonDict) -> list[ResourceType]:
    """One served resource per served version."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, storage = str(spec.get("group")), storage_version(crd)
    types = []
    for version in spec.get("versions") or []:
        if not isinstance(version, dict) or not version.get("served"):
            continue
        subresources = version.get("subresources") or {}
        scale_spec = subresources.get("scale")
        types.append(ResourceType(
            group=group, version=str(version.get("name")), plural=str(names.get("plural")),
            kind=str(names.get("kind")), namespaced=spec.get("scope") == "Namespaced",
            short_names=tuple(names.get("shortNames") or ()), categories=tuple(names.get("categories") or ()),
            verbs=CUSTOM_VERBS,
            subresources=tuple(s for s in ("status", "scale") if isinstance(subresources.get(s), dict)),
            has_generation=True,
            scale=_scale_paths(scale_spec) if isinstance(scale_spec, dict) else None,
            custom=CustomInfo(
                crd_name=name_of(crd),
                schema=get_path(version, ["schema", "openAPIV3Schema"]) or {"type": "object"},
                printer_columns=tuple(version.get("additionalPrinterColumns") or ()),
                storage_version=storage,
                selectable_fields=tuple(str(f.get("jsonPath", "")).lstrip(".")
                                        for f in version.get("selectableFields") or () if isinstance(f, dict)),
            ),
        ))
    return types


def _scale_paths(spec: Mapping[str, Any]) -> ScalePaths:
    return ScalePaths(spec_replicas=str(spec.get("specReplicasPath", ".spec.replicas")),
                      status_replicas=str(spec.get("statusReplicasPath", ".status.replicas")),
                      label_selector=spec.get("labelSelectorPath"))


def on_commit(api: Api, event: Event) -> None:
    """Serve (or stop serving) a CRD's resources as soon as it is stored (called under the store lock)."""
    if event.key != CRD_KEY:
        return
    crd = event.obj
    spec = crd.get("spec") or {}
    group, kind = str(spec.get("group")), str(get_path(spec, ["names", "kind"]))
    if event.type == DELETED:
        api.registry.set_custom(name_of(crd), ())
        api.schemas.unregister_crd(group, kind)
        return
    types = resource_types(crd)
    if event.old is not None:
        old_kind = str(get_path(event.old, ["spec", "names", "kind"]))
        api.schemas.unregister_crd(str(get_path(event.old, ["spec", "group"])), old_kind)
    for rt in types:
        if rt.custom is not None:
            api.schemas.register_crd(group, rt.version, kind, rt.custom.schema)
    api.registry.set_custom(name_of(crd), types)


def is_terminating_crd(api: Api, rt: ResourceType) -> bool:
    if rt.custom is None:
        return False
    crd = api.store.get(CRD_KEY, "", rt.custom.crd_name)
    return crd is not None and is_terminating(crd)

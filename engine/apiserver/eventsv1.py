"""events.k8s.io/v1 Events: the core/v1 Events' storage under other field names, as on the real server.

Both APIs read and write the same objects (stored in the core form), so an Event created through one is read,
watched, listed and deleted through the other. The names differ as in the real conversion: note ↔ message,
regarding ↔ involvedObject, reportingController ↔ reportingComponent, deprecatedSource ↔ source,
deprecatedFirstTimestamp/LastTimestamp/Count ↔ firstTimestamp/lastTimestamp/count. Each form also carries the
fields Go writes even when empty (`eventTime: null`, `source: {}`...).
"""

from __future__ import annotations

import json
from typing import Any

from engine.apiserver.resources import ResourceType
from engine.apiserver.status import ErrorType, FieldError, GoJson

GROUP_VERSION = "events.k8s.io/v1"
REFERENCE = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
TO_CORE = {"regarding": "involvedObject", "note": "message", "reportingController": "reportingComponent",
           "deprecatedSource": "source", "deprecatedFirstTimestamp": "firstTimestamp",
           "deprecatedLastTimestamp": "lastTimestamp", "deprecatedCount": "count"}
FROM_CORE = {core: name for name, core in TO_CORE.items()}
CORE_ALWAYS: dict[str, Any] = {"involvedObject": {}, "source": {}, "firstTimestamp": None, "lastTimestamp": None,
                               "eventTime": None, "reportingComponent": "", "reportingInstance": ""}
EVENTS_ALWAYS: dict[str, Any] = {"eventTime": None, "deprecatedSource": {}, "deprecatedFirstTimestamp": None,
                 "deprecatedLastTimestamp": None}
# events.k8s.io field selectors, evaluated on the stored (core) form
FIELD_SELECTORS = {**{f"regarding.{f}": f"involvedObject.{f}" for f in (
    "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
                   "reason": "reason", "reportingController": "reportingComponent", "type": "type"}


def is_events_v1(rt: ResourceType) -> bool:
    return rt.api_version == GROUP_VERSION and rt.plural == "events"


def is_event(rt: ResourceType) -> bool:
    return rt.plural == "events" and rt.group in ("", "events.k8s.io")


def to_core(obj: dict[str, Any]) -> dict[str, Any]:
    """The stored form of an Event of either API."""
    out = {TO_CORE.get(k, k): v for k, v in obj.items()}
    out["apiVersion"] = "v1"
    return {**out, **{k: v for k, v in CORE_ALWAYS.items() if k not in out}}


def from_core(obj: dict[str, Any]) -> dict[str, Any]:
    """A stored Event as events.k8s.io/v1 presents it (empty reporting names are not written there)."""
    out = {FROM_CORE.get(k, k): v for k, v in obj.items()
           if not (k in ("reportingComponent", "reportingInstance") and v == "")}
    out["apiVersion"] = GROUP_VERSION
    return {**out, **{k: v for k, v in EVENTS_ALWAYS.items() if k not in out}}


LIMITS = (("reportingInstance", 128), ("action", 128), ("reason", 128))


def errors_of(rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """The real server's Event validation (ValidateEventCreate/Update, less the immutable fields), for an Event
    written through either API."""
    errors = _legacy_errors(to_core(obj), is_events_v1(rt))
    if is_events_v1(rt) and old is None:
        errors += _create_errors(obj)
    elif is_events_v1(rt) and old is not None:
        errors += _update_errors(obj, from_core(old) if old.get("apiVersion") == "v1" else old)
    return errors


def _legacy_errors(core: dict[str, Any], events_api: bool) -> list[FieldError]:
    namespace = str((core.get("metadata") or {}).get("namespace") or "")
    involved = str((core.get("involvedObject") or {}).get("namespace") or "")
    mismatch = FieldError(ErrorType.INVALID, "involvedObject.namespace", involved, "does not match event.namespace")
    if not core.get("eventTime"):
        wrong = namespace not in ("", "default") if not involved else namespace != involved
        return [mismatch] if wrong else []
    errors = [mismatch] if not involved and namespace not in ("default", "kube-system") else []
    for name in ("reportingComponent", "reportingInstance", "action", "reason"):
        if not core.get(name):
            label = "reportingController" if name == "reportingComponent" and events_api else name
            errors.append(FieldError(ErrorType.REQUIRED, label))
    for name, limit in (*LIMITS, ("message", 1024)):
        if len(str(core.get(name) or "")) > limit:
            errors.append(FieldError(ErrorType.INVALID, name, "", f"can have at most {limit} characters"))
    return errors


# What an update through events.k8s.io may not change: (core name, name in errors, Go struct field order).
IMMUTABLE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("involvedObject", "involvedObject", REFERENCE), ("reason", "reason", ()), ("message", "message", ()),
    ("source", "source", ("component", "host")), ("firstTimestamp", "firstTimestamp", ()),
    ("lastTimestamp", "lastTimestamp", ()), ("count", "count", ()), ("type", "type", ()),
    ("eventTime", "eventTime", ()), ("action", "action", ()), ("related", "related", REFERENCE),
    ("reportingComponent", "reportingController", ()), ("reportingInstance", "reportingInstance", ()))


def _update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """ValidateEventUpdate: the series is checked when it changes, and the rest of the Event is immutable."""
    errors = _series_errors(new) if new.get("series") != old.get("series") else []
    new_core, old_core = to_core(new), to_core(old)
    for name, label, go_fields in IMMUTABLE:
        value = new_core.get(name)
        if (value or None) != (old_core.get(name) or None):
            shown = _go_struct(value, go_fields) if go_fields and isinstance(value, dict) else value
            errors.append(FieldError(ErrorType.INVALID, label, shown, "field is immutable"))
    return errors


def _go_struct(value: dict[str, Any], fields: tuple[str, ...]) -> GoJson:
    """A struct as the real message prints it: Go's field names and order, every field."""
    names = {"uid": "UID", "apiVersion": "APIVersion", "fieldPath": "FieldPath",
             "resourceVersion": "ResourceVersion"}
    shown = {names.get(f, f[:1].upper() + f[1:]): value.get(f) or "" for f in fields}
    return GoJson(json.dumps(shown, separators=(",", ":")))


def _series_errors(obj: dict[str, Any]) -> list[FieldError]:
    series = obj.get("series")
    if not isinstance(series, dict):
        return []
    errors = []
    if int(series.get("count") or 0) < 2:
        errors.append(FieldError(ErrorType.INVALID, "series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errors.append(FieldError(ErrorType.REQUIRED, "series.lastObservedTime"))
    return errors


def _create_errors(obj: dict[str, Any]) -> list[FieldError]:
    """What events.k8s.io/v1 requires of a new Event beyond the core API."""
    errors = []
    if not obj.get("eventTime"):
        errors.append(FieldError(ErrorType.REQUIRED, "eventTime"))
    if obj.get("type") not in ("Normal", "Warning"):
        errors.append(FieldError(ErrorType.INVALID, "type", "", f"has invalid value: {obj.get('type') or ''}"))
    return _series_errors(obj) + errors

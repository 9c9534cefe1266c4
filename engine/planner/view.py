"""Reading an Instance: metadata, spec and the recorded status, tolerant of missing fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.jsoncopy import copy_json

__all__ = ["FINALIZER", "deleting", "generation", "given_parameters", "has_finalizer", "metadata", "name",
           "namespace", "plan_execution", "recorded_status", "spec", "status", "uid", "version_name"]

FINALIZER = "kplan.dev/cleanup"
EMPTY: Mapping[str, Any] = {}
Json = dict[str, Any]


def mapping(value: Any) -> Mapping[str, Any]:
    return value if value.__class__ is dict or isinstance(value, Mapping) else EMPTY  # a dict skips the ABC


def metadata(instance: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(instance.get("metadata"))


def spec(instance: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(instance.get("spec"))


def status(instance: Mapping[str, Any]) -> Json:
    """A private deep copy of the recorded status, safe to change (plain data: every pass copies the whole status
    of a long plan, `copy_json` does it in C)."""
    copied: Json = copy_json(dict(mapping(instance.get("status"))))
    return copied


def recorded_status(instance: Mapping[str, Any]) -> Mapping[str, Any]:
    """The recorded status itself, to read only (`status` gives a copy to change)."""
    return mapping(instance.get("status"))


def name(instance: Mapping[str, Any]) -> str:
    return str(metadata(instance).get("name") or "")


def namespace(instance: Mapping[str, Any]) -> str:
    return str(metadata(instance).get("namespace") or "default")


def uid(instance: Mapping[str, Any]) -> str:
    return str(metadata(instance).get("uid") or "")


def generation(instance: Mapping[str, Any]) -> int | None:
    value = metadata(instance).get("generation")
    return value if isinstance(value, int) else None


def deleting(instance: Mapping[str, Any]) -> bool:
    return bool(metadata(instance).get("deletionTimestamp"))


def has_finalizer(instance: Mapping[str, Any]) -> bool:
    return FINALIZER in (metadata(instance).get("finalizers") or [])


def given_parameters(instance: Mapping[str, Any]) -> dict[str, Any]:
    return dict(mapping(spec(instance).get("parameters")))


def version_name(instance: Mapping[str, Any], default: str) -> str:
    """`spec.operatorVersion.name`, or `default` (the package's) when the spec does not say."""
    return str(mapping(spec(instance).get("operatorVersion")).get("name") or default)


def plan_execution(instance: Mapping[str, Any]) -> tuple[str, str] | None:
    """`(planName, uid)` of a pending `plan trigger` request, or None."""
    request = mapping(spec(instance).get("planExecution"))
    if not request.get("uid") or not request.get("planName"):
        return None
    return str(request["planName"]), str(request["uid"])

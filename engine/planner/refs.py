"""Identities of Kubernetes objects (Ref) and the inventory entries that record what kplan applied."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["Ref", "instance_ref"]

INSTANCE_API = "kplan.dev/v1alpha1"
_NEW = tuple.__new__  # a Ref from its four fields in one C call (`_make` adds a Python frame and a length check)


class Ref(NamedTuple):
    """The identity of one object; `namespace` is None for cluster-scoped objects.

    A named tuple rather than a frozen dataclass: every pass builds and hashes a Ref per object it reads, and a
    tuple is built (`tuple.__new__`, not the keyword-taking constructor) and hashed in C.
    """

    api_version: str
    kind: str
    namespace: str | None
    name: str

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> Ref:
        meta = obj.get("metadata") or {}
        return _NEW(cls, (str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""), meta.get("namespace") or None,
                          str(meta.get("name") or "")))

    @classmethod
    def of_entry(cls, entry: Mapping[str, Any]) -> Ref:
        """The Ref of an inventory entry `{apiVersion, kind, namespace, name, plan}`."""
        return _NEW(cls, (str(entry["apiVersion"]), str(entry["kind"]), entry.get("namespace") or None,
                          str(entry["name"])))

    def entry(self, plan: str) -> dict[str, Any]:
        """This object as an inventory entry applied by `plan` (cluster-scoped: namespace "")."""
        return {"apiVersion": self.api_version, "kind": self.kind, "namespace": self.namespace or "",
                "name": self.name, "plan": plan}

    @property
    def sort_key(self) -> tuple[str, str, str, str]:
        return (self.api_version, self.kind, self.namespace or "", self.name)

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


def instance_ref(instance: Mapping[str, Any]) -> Ref:
    """The Ref of an Instance, for Events about it."""
    meta = instance.get("metadata") or {}
    return Ref(str(instance.get("apiVersion") or INSTANCE_API), "Instance", meta.get("namespace") or None,
               str(meta.get("name") or ""))

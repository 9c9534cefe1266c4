"""Merge topology of kinds (struct, map, list types and keys) from the built-in schemas and registered CRDs."""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import json
import re
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Literal

__all__ = ["ANY", "Schemas", "TypeNode"]

SCHEMA_VERSION = "v1.37.0-local"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean"})
# "Defaults to "TCP"." / "Default is TCP." in the description of an optional list-map key.
_DESCRIBED_DEFAULT = re.compile(r'Defaults? (?:to|is) "?([A-Za-z0-9_.-]+?)"?\.')

NodeKind = Literal["struct", "map", "list", "scalar", "any"]
ListType = Literal["atomic", "set", "map"]


@dataclasses.dataclass(frozen=True, eq=False)
class TypeNode:
    """One node of a kind's type: how values at this place merge, and how list items are keyed."""

    kind: NodeKind
    fields: Mapping[str, TypeNode] = dataclasses.field(default_factory=dict)
    elem: TypeNode | None = None
    list_type: ListType | None = None
    map_keys: tuple[str, ...] = ()
    atomic: bool = False
    key_defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    patch_merge_key: str | None = None
    patch_strategy: str | None = None

    def field(self, name: str) -> TypeNode:
        """The type of a struct member or map value; untyped when the schema does not declare it."""
        if self.kind == "struct":
            return self.fields.get(name) or ANY
        if self.kind == "map":
            return self.elem or ANY
        return ANY

    def declares(self, name: str) -> bool:
        """Whether `name` is a declared struct member (not a map key)."""
        return self.kind == "struct" and name in self.fields

    @property
    def is_leaf(self) -> bool:
        """Scalars and atomic structs, maps and lists are owned and replaced as a whole."""
        return self.kind == "scalar" or self.atomic or (self.kind == "list" and self.list_type == "atomic")


ANY = TypeNode("any")
_SCALAR = TypeNode("scalar")


class _LazyFields(Mapping[str, TypeNode]):
    """Struct members built on first access, so recursive schemas (JSONSchemaProps) stay finite."""

    def __init__(self, properties: Mapping[str, Any], build: Callable[[Mapping[str, Any]], TypeNode],
                 overrides: Mapping[str, TypeNode] | None = None) -> None:
        self._properties = properties
        self._build = build
        self._built: dict[str, TypeNode] = dict(overrides or {})

    def __getitem__(self, name: str) -> TypeNode:
        if name not in self._built:
            self._built[name] = self._build(self._properties[name])
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**self._properties, **self._built})

    def __len__(self) -> int:
        return len({**self._properties, **self._built})

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in self._properties


class _Converter:
    """Turns JSON schemas (with `$ref`s into `definitions`) into TypeNodes, following kube-openapi's rules."""

    def __init__(self, definitions: Mapping[str, Any], described_defaults: bool) -> None:
        self._definitions = definitions
        self._described_defaults = described_defaults
        self._refs: dict[str, TypeNode] = {}

    def ref(self, name: str) -> TypeNode:
        if name not in self._refs:
            self._refs[name] = self.convert(self._definitions[name])
        return self._refs[name]

    def _resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        ref = schema.get("$ref")
        return self._definitions.get(ref.rsplit("/", 1)[-1], {}) if isinstance(ref, str) else schema

    def convert(self, schema: Mapping[str, Any]) -> TypeNode:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._with_annotations(self.ref(ref.rsplit("/", 1)[-1]), schema)
        if schema.get("x-kubernetes-int-or-string"):
            return _SCALAR
        kind = _json_type(schema)
        if kind == "array":
            return self._list(schema)
        if kind == "object":
            return self._object(schema)
        if kind in _SCALAR_TYPES:
            return _SCALAR
        if _one_of_scalars(schema):
            return _SCALAR
        return ANY

    def convert_root(self, schema: Mapping[str, Any], overrides: Mapping[str, TypeNode]) -> TypeNode:
        """The struct of a whole object, some of whose members are fixed whatever its schema says."""
        properties = schema.get("properties")
        return TypeNode("struct", _LazyFields(properties if isinstance(properties, Mapping) else {}, self.convert,
                                              overrides))

    def _with_annotations(self, node: TypeNode, schema: Mapping[str, Any]) -> TypeNode:
        """A `$ref` property may add a patch strategy or an atomic map type of its own."""
        changes: dict[str, Any] = {}
        if "x-kubernetes-patch-strategy" in schema:
            changes["patch_strategy"] = schema["x-kubernetes-patch-strategy"]
        if "x-kubernetes-patch-merge-key" in schema:
            changes["patch_merge_key"] = schema["x-kubernetes-patch-merge-key"]
        if schema.get("x-kubernetes-map-type") == "atomic":
            changes["atomic"] = True
        return dataclasses.replace(node, **changes) if changes else node

    def _object(self, schema: Mapping[str, Any]) -> TypeNode:
        atomic = schema.get("x-kubernetes-map-type") == "atomic"
        strategy = schema.get("x-kubernetes-patch-strategy")
        properties = schema.get("properties")
        if isinstance(properties, Mapping) and properties:
            return TypeNode("struct", _LazyFields(properties, self.convert), atomic=atomic, patch_strategy=strategy)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            return TypeNode("map", elem=self.convert(extra), atomic=atomic, patch_strategy=strategy)
        if extra is True:
            return TypeNode("map", elem=ANY, atomic=atomic, patch_strategy=strategy)
        return ANY

    def _list(self, schema: Mapping[str, Any]) -> TypeNode:
        items = schema.get("items")
        items = items if isinstance(items, Mapping) else {}
        elem = self.convert(items)
        strategy = schema.get("x-kubernetes-patch-strategy")
        merge_key = schema.get("x-kubernetes-patch-merge-key")
        declared = schema.get("x-kubernetes-list-type")
        keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
        if declared is None and strategy and "merge" in str(strategy).split(","):
            declared, keys = ("map", (merge_key,)) if merge_key else ("set", ())
        list_type: ListType = "atomic"
        if declared == "set" or (declared == "map" and keys):
            list_type = declared
        else:
            keys = ()
        return TypeNode("list", elem=elem, list_type=list_type, map_keys=keys,
                        key_defaults=MappingProxyType(self._key_defaults(items, keys)),
                        patch_merge_key=merge_key, patch_strategy=strategy)

    def _key_defaults(self, items: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
        properties = self._resolve(items).get("properties") or {}
        defaults: dict[str, Any] = {}
        for key in keys:
            prop = self._resolve(properties.get(key) or {})
            if "default" in prop:
                defaults[key] = prop["default"]
            elif self._described_defaults and _json_type(prop) == "string":
                found = _DESCRIBED_DEFAULT.search(str(prop.get("description", "")))
                if found:
                    defaults[key] = found.group(1)
        return defaults


def _json_type(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None and ("properties" in schema or "additionalProperties" in schema):
        return "object"
    if kind is None and "items" in schema:
        return "array"
    return kind if isinstance(kind, str) else None


def _one_of_scalars(schema: Mapping[str, Any]) -> bool:
    options = schema.get("oneOf") or schema.get("anyOf") or []
    return bool(options) and all(_json_type(o) in _SCALAR_TYPES for o in options if isinstance(o, Mapping))


def split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


class _Builtin:
    """The 1.37 definitions, their GVK index and a converter whose cache holds immutable nodes."""

    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self.definitions = definitions
        self.converter = _Converter(definitions, described_defaults=True)
        self.by_gvk: dict[tuple[str, str, str], str] = {}
        for single in (True, False):
            for name, schema in sorted(definitions.items()):
                gvks = schema.get("x-kubernetes-group-version-kind") or []
                if (len(gvks) == 1) != single:
                    continue
                for gvk in gvks:
                    self.by_gvk.setdefault((gvk.get("group", ""), gvk["version"], gvk["kind"]), name)


@functools.cache
def _builtin() -> _Builtin:
    path = importlib.resources.files("kubernetes_validate") / "kubernetes-json-schema" / SCHEMA_VERSION
    document = json.loads((path / "_definitions.json").read_text(encoding="utf-8"))
    return _Builtin(MappingProxyType(document["$defs"]))


class Schemas:
    """Type lookup for one API server: the built-in kinds plus the CRD kinds registered on it."""

    def __init__(self, builtin: _Builtin) -> None:
        self._builtin = builtin
        self._crds: dict[tuple[str, str, str], TypeNode] = {}

    @classmethod
    def builtin(cls) -> Schemas:
        """A fresh registry over the (loaded once) built-in definitions."""
        return cls(_builtin())

    def definitions(self) -> Mapping[str, Any]:
        return self._builtin.definitions

    def definition_name(self, api_version: str, kind: str) -> str | None:
        group, version = split_api_version(api_version)
        return self._builtin.by_gvk.get((group, version, kind))

    def for_kind(self, api_version: str, kind: str) -> TypeNode:
        group, version = split_api_version(api_version)
        crd = self._crds.get((group, version, kind))
        if crd is not None:
            return crd
        name = self._builtin.by_gvk.get((group, version, kind))
        return self._builtin.converter.ref(name) if name else ANY

    def register_crd(self, group: str, version: str, kind: str, openapi_v3_schema: Mapping[str, Any]) -> None:
        """Type a CR kind from its structural schema; metadata stays ObjectMeta whatever the schema says."""
        overrides = {"metadata": self._builtin.converter.ref(OBJECT_META), "apiVersion": _SCALAR, "kind": _SCALAR}
        root = _Converter({}, described_defaults=False).convert_root(openapi_v3_schema, overrides)
        self._crds[(group, version, kind)] = root

    def unregister_crd(self, group: str, kind: str) -> None:
        for key in [k for k in self._crds if k[0] == group and k[2] == kind]:
            del self._crds[key]

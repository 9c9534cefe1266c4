"""/openapi/v3: the index and one OpenAPI 3.0 document per group version, from the definitions and CRD schemas.

Every PATCH/PUT/POST operation lists the `fieldValidation` query parameter and carries
`x-kubernetes-group-version-kind`, which `kubectl apply --server-side` checks; component schemas keep
their GVK extension and `$ref`s, which `kubectl explain` walks.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from engine.apiserver.resources import Registry, ResourceType
from engine.apiserver.status import not_served

Schema = dict[str, Any]
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
COMMON = (META + "Status", META + "DeleteOptions", META + "Patch", META + "WatchEvent", META + "ListMeta",
          META + "ObjectMeta", META + "APIResourceList")
SCALE = "io.k8s.api.autoscaling.v1.Scale"
PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
               "application/strategic-merge-patch+json")


def split_key(key: str) -> tuple[str, str]:
    """`api/v1` → ("", "v1"); `apis/apps/v1` → ("apps", "v1"); 404 for anything else."""
    parts = key.split("/")
    if parts[0] == "api" and len(parts) == 2:
        return "", parts[1]
    if parts[0] == "apis" and len(parts) == 3:
        return parts[1], parts[2]
    raise not_served()


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def convert(schema: Any) -> Any:
    """A JSON-schema definition as OpenAPI 3.0: no null types, `$ref`s into components (allOf when annotated)."""
    if isinstance(schema, list):
        return [convert(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: Schema = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, list):
            kinds = [k for k in value if k != "null"]
            if kinds:
                out["type"] = kinds[0]
        elif key in ("oneOf", "anyOf") and isinstance(value, list):
            options = [convert(v) for v in value if not (isinstance(v, Mapping) and v.get("type") == "null")]
            if options:
                out[key] = options
        elif key == "$ref":
            continue
        elif key in ("properties", "patternProperties") and isinstance(value, Mapping):
            out[key] = {k: convert(v) for k, v in value.items()}
        else:
            out[key] = convert(value)
    target = schema.get("$ref")
    if isinstance(target, str):
        name = target.rsplit("/", 1)[-1]
        return {"allOf": [ref(name)], **out} if out else ref(name)
    return out


def refs_in(schema: Any) -> Iterator[str]:
    if isinstance(schema, Mapping):
        target = schema.get("$ref")
        if isinstance(target, str):
            yield target.rsplit("/", 1)[-1]
        for value in schema.values():
            yield from refs_in(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from refs_in(value)


def closure(definitions: Mapping[str, Any], roots: list[str]) -> list[str]:
    seen: set[str] = set()
    todo = [r for r in roots if r in definitions]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(r for r in refs_in(definitions[name]) if r in definitions and r not in seen)
    return sorted(seen)


def custom_schema_name(rt: ResourceType, kind: str | None = None) -> str:
    reverse = ".".join(reversed(rt.group.split(".")))
    return f"{reverse}.{rt.version}.{kind or rt.kind}"


def custom_schemas(rt: ResourceType) -> dict[str, Schema]:
    """The CR kind and its list, from the CRD's structural schema."""
    assert rt.custom is not None
    gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}
    schema = convert(dict(rt.custom.schema))
    properties = dict(schema.get("properties") or {})
    properties["apiVersion"] = {"type": "string", "description": "APIVersion defines the versioned schema of this "
                                                                 "representation of an object."}
    properties["kind"] = {"type": "string", "description": "Kind is a string value representing the REST resource "
                                                           "this object represents."}
    properties["metadata"] = {"allOf": [ref(META + "ObjectMeta")], "description": "Standard object's metadata."}
    item = {**schema, "type": "object", "properties": properties, "x-kubernetes-group-version-kind": [gvk]}
    list_schema = {
        "type": "object", "required": ["items"],
        "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                       "items": {"type": "array", "items": ref(custom_schema_name(rt))},
                       "metadata": {"allOf": [ref(META + "ListMeta")]}},
        "x-kubernetes-group-version-kind": [{**gvk, "kind": rt.list_kind}],
    }
    return {custom_schema_name(rt): item, custom_schema_name(rt, rt.list_kind): list_schema}


def _query(name: str, kind: str = "string", description: str = "") -> Schema:
    return {"name": name, "in": "query", "description": description, "schema": {"type": kind, "uniqueItems": True}}


WRITE_PARAMS = [
    _query("dryRun", description="When present, indicates that modifications should not be persisted."),
    _query("fieldManager", description="fieldManager is a name associated with the actor or entity that is making "
                                       "these changes."),
    _query("fieldValidation", description="fieldValidation instructs the server on how to handle objects in the "
                                          "request containing unknown or duplicate fields. Ignore, Warn or Strict."),
]
LIST_PARAMS = [_query(n) for n in ("continue", "fieldSelector", "labelSelector", "resourceVersion",
                                   "resourceVersionMatch")] + [
    _query("allowWatchBookmarks", "boolean"), _query("limit", "integer"), _query("sendInitialEvents", "boolean"),
    _query("timeoutSeconds", "integer"), _query("watch", "boolean")]


def _json_response(schema: Schema, *codes: str) -> dict[str, Any]:
    content = {"application/json": {"schema": schema}, "application/yaml": {"schema": schema}}
    return {code: {"description": "OK" if code == "200" else "Created" if code == "201" else "Accepted",
                   "content": content} for code in codes}


def _operation(action: str, gvk: Mapping[str, str], schema: Schema, op_id: str, *, body: Schema | None = None,
               params: list[Schema] | None = None, codes: tuple[str, ...] = ("200",),
               body_types: tuple[str, ...] = ("application/json",)) -> Schema:
    op: Schema = {"operationId": op_id, "parameters": list(params or []), "responses": _json_response(schema, *codes),
                  "x-kubernetes-action": action, "x-kubernetes-group-version-kind": dict(gvk)}
    if body is not None:
        op["requestBody"] = {"content": {t: {"schema": body} for t in body_types}, "required": True}
    return op


def _op_name(verb: str, rt: ResourceType, scope: str, suffix: str = "") -> str:
    group = "".join(p.capitalize() for p in rt.group.replace("-", ".").split(".")[:1]) if rt.group else "Core"
    return f"{verb}{group}{rt.version.capitalize()}{scope}{rt.kind}{suffix}"


def resource_paths(rt: ResourceType, schema_name: str, list_name: str) -> dict[str, Schema]:
    gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}
    base = rt.base_path() + ("/namespaces/{namespace}" if rt.namespaced else "")
    scope = "Namespaced" if rt.namespaced else ""
    obj, obj_list = ref(schema_name), ref(list_name)
    patch_types = PATCH_TYPES if not rt.is_custom else PATCH_TYPES[:3]
    path_params = [{"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}}] \
        if rt.namespaced else []
    name_param = {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
    patch_params = [*WRITE_PARAMS, _query("force", "boolean")]
    paths: dict[str, Schema] = {
        f"{base}/{rt.plural}": {
            "get": _operation("list", gvk, obj_list, _op_name("list", rt, scope), params=LIST_PARAMS),
            "post": _operation("post", gvk, obj, _op_name("create", rt, scope), body=obj, params=WRITE_PARAMS,
                               codes=("200", "201", "202")),
            "delete": _operation("deletecollection", gvk, ref(META + "Status"),
                                 _op_name("deletecollection", rt, scope), body=ref(META + "DeleteOptions")),
            "parameters": path_params,
        },
        f"{base}/{rt.plural}/{{name}}": {
            "get": _operation("get", gvk, obj, _op_name("read", rt, scope)),
            "put": _operation("put", gvk, obj, _op_name("replace", rt, scope), body=obj, params=WRITE_PARAMS,
                              codes=("200", "201")),
            "patch": _operation("patch", gvk, obj, _op_name("patch", rt, scope), body=ref(META + "Patch"),
                                params=patch_params, codes=("200", "201"), body_types=patch_types),
            "delete": _operation("delete", gvk, ref(META + "Status"), _op_name("delete", rt, scope),
                                 body=ref(META + "DeleteOptions"), codes=("200", "202")),
            "parameters": [name_param, *path_params],
        },
    }
    if rt.namespaced:
        paths[f"{rt.base_path()}/{rt.plural}"] = {
            "get": _operation("list", gvk, obj_list, _op_name("list", rt, "", "ForAllNamespaces"),
                              params=LIST_PARAMS)}
    for sub in rt.subresources:
        target = ref(SCALE) if sub == "scale" else obj
        sub_gvk = {"group": "autoscaling", "kind": "Scale", "version": "v1"} if sub == "scale" else gvk
        suffix = sub.capitalize()
        paths[f"{base}/{rt.plural}/{{name}}/{sub}"] = {
            "get": _operation("get", sub_gvk, target, _op_name("read", rt, scope, suffix)),
            "put": _operation("put", sub_gvk, target, _op_name("replace", rt, scope, suffix), body=target,
                              params=WRITE_PARAMS, codes=("200", "201")),
            "patch": _operation("patch", sub_gvk, target, _op_name("patch", rt, scope, suffix),
                                body=ref(META + "Patch"), params=patch_params, codes=("200", "201"),
                                body_types=patch_types),
            "parameters": [name_param, *path_params],
        }
    return paths


class OpenApi:
    """Builds documents lazily and caches them until the registry changes."""

    def __init__(self, registry: Registry, definitions: Mapping[str, Any], builtin_names: Any) -> None:
        self._registry = registry
        self._definitions = definitions
        self._definition_name = builtin_names
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[str, bytes, str]] = {}  # key → (fingerprint, document, hash)

    def index(self) -> dict[str, Any]:
        paths = {}
        for group, versions in self._registry.groups():
            for version in versions:
                key = f"apis/{group}/{version}" if group else f"api/{version}"
                _, digest = self.document(key)
                paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
        return {"paths": paths}

    def document(self, key: str) -> tuple[bytes, str]:
        """The encoded document of `api/v1` or `apis/<g>/<v>` and its hash; 404 when not served."""
        group, version = split_key(key)
        types = self._registry.in_group_version(group, version)
        if not types:
            raise not_served()
        fingerprint = hashlib.sha256(repr(types).encode()).hexdigest()
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None and cached[0] == fingerprint:
            return cached[1], cached[2]
        encoded = json.dumps(self._build(types), separators=(",", ":"), sort_keys=True).encode()
        digest = hashlib.sha512(encoded).hexdigest().upper()
        with self._lock:
            self._cache[key] = (fingerprint, encoded, digest)
        return encoded, digest

    def _build(self, types: list[ResourceType]) -> dict[str, Any]:
        paths: dict[str, Schema] = {}
        schemas: dict[str, Schema] = {}
        roots = list(COMMON)
        for rt in types:
            if rt.is_custom:
                schemas.update(custom_schemas(rt))
                item, listed = custom_schema_name(rt), custom_schema_name(rt, rt.list_kind)
            else:
                item = self._definition_name(rt.api_version, rt.kind) or ""
                listed = self._definition_name(rt.api_version, rt.list_kind) or ""
                roots += [item, listed]
            if "scale" in rt.subresources:
                roots.append(SCALE)
            paths.update(resource_paths(rt, item, listed))
        for name in closure(self._definitions, roots):
            schemas[name] = convert(self._definitions[name])
        return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.37.2"}, "paths": paths,
                "components": {"schemas": dict(sorted(schemas.items()))}}

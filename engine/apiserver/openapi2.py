"""/openapi/v2: one Swagger 2.0 document of every served group version, made from the /openapi/v3 documents.

The real server also answers it in gnostic's protobuf (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`);
the dev cluster writes JSON only, and answers a client that accepts nothing else as the real server answers a
type it cannot write: 406 with an empty body.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from engine.apiserver.openapi import OpenApi
from engine.apiserver.requests import ApiResponse
from engine.apiserver.resources import Registry

JSON_TYPES = ("application/json", "application/*", "*/*")
V3_REF, V2_REF = '"#/components/schemas/', '"#/definitions/'


def accepts_json(accept: str) -> bool:
    if not accept.strip():
        return True
    for part in accept.split(","):
        media, *params = (p.strip().lower() for p in part.split(";"))
        if media in JSON_TYPES and not any(p.startswith("q=") and _zero(p[2:]) for p in params):
            return True
    return False


def _zero(quality: str) -> bool:
    try:
        return float(quality) == 0
    except ValueError:
        return True


def _operation(op: dict[str, Any]) -> dict[str, Any]:
    """A v3 operation in v2's terms: body and query parameters inline, one schema per response."""
    out = {k: v for k, v in op.items() if k not in ("parameters", "requestBody", "responses")}
    out["parameters"] = [_parameter(p) for p in op.get("parameters", [])]
    body = op.get("requestBody")
    if body is not None:
        content = body["content"]
        out["consumes"] = list(content)
        out["parameters"].append({"name": "body", "in": "body", "required": True,
                                  "schema": next(iter(content.values()))["schema"]})
    responses = {}
    for code, answer in op.get("responses", {}).items():
        media: dict[str, dict[str, Any]] = answer.get("content") or {}
        out.setdefault("produces", list(media))
        schema = next(iter(media.values()), {}).get("schema")
        responses[code] = {"description": answer.get("description", ""), **({"schema": schema} if schema else {})}
    out["responses"] = responses
    return out


def _parameter(param: dict[str, Any]) -> dict[str, Any]:
    schema = param.get("schema") or {}
    out = {k: v for k, v in param.items() if k != "schema"}
    return {**out, **{k: v for k, v in schema.items() if k in ("type", "uniqueItems")}}


def _path(item: dict[str, Any]) -> dict[str, Any]:
    return {verb: [_parameter(p) for p in op] if verb == "parameters" else _operation(op)
            for verb, op in item.items()}


class Swagger:
    """The v2 document, rebuilt when the v3 documents change."""

    def __init__(self, registry: Registry, openapi: OpenApi) -> None:
        self._registry, self._openapi = registry, openapi
        self._lock = threading.Lock()
        self._cached: tuple[str, bytes, str] | None = None

    def answer(self, accept: str) -> ApiResponse:
        if not accepts_json(accept):
            return ApiResponse(406, b"", {"Vary": "Accept"})
        encoded, etag = self.document()
        return ApiResponse(200, encoded, {"Content-Type": "application/json", "ETag": f'"{etag}"',
                                          "Vary": "Accept"})

    def document(self) -> tuple[bytes, str]:
        docs = []
        for group, versions in self._registry.groups():
            for version in versions:
                docs.append(self._openapi.document(f"apis/{group}/{version}" if group else f"api/{version}"))
        fingerprint = "".join(digest for _, digest in docs)
        with self._lock:
            if self._cached is not None and self._cached[0] == fingerprint:
                return self._cached[1], self._cached[2]
        paths: dict[str, Any] = {}
        definitions: dict[str, Any] = {}
        for encoded, _ in docs:
            doc = json.loads(encoded.decode().replace(V3_REF, V2_REF))
            paths.update({path: _path(item) for path, item in doc["paths"].items()})
            definitions.update(doc["components"]["schemas"])
        swagger = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "1.37"},
                   "paths": dict(sorted(paths.items())), "definitions": dict(sorted(definitions.items()))}
        encoded = json.dumps(swagger, separators=(",", ":")).encode()
        digest = hashlib.sha512(encoded).hexdigest().upper()
        with self._lock:
            self._cached = (fingerprint, encoded, digest)
        return encoded, digest

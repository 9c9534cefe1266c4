"""The handler stack every request runs through: auth, routing, faults, then the verb's handler."""

from __future__ import annotations

import hmac
import logging
import ssl
import threading

from engine.apiserver import (
    aggregated,
    crds,
    deletion,
    discovery,
    logs,
    patching,
    protobuf,
    reads,
    routing,
    watch,
    writes,
)
from engine.apiserver.checked import CheckedObjects
from engine.apiserver.faults import FaultInjector, FaultProfile
from engine.apiserver.openapi import OpenApi
from engine.apiserver.openapi2 import Swagger
from engine.apiserver.requests import ApiRequest, ApiResponse, unsupported_media_type
from engine.apiserver.resources import Registry, ResourceType
from engine.apiserver.schema import Schemas, TypeNode
from engine.apiserver.status import (
    ApiError,
    bad_request,
    internal_error,
    method_not_allowed,
    not_served,
    page_not_found,
    unauthorized,
)
from engine.apiserver.store import Store
from engine.apiserver.strategies import Allocator

log = logging.getLogger(__name__)

HANDLERS = {
    "get": reads.get,
    "list": reads.list_,
    "watch": watch.watch,
    "create": writes.create,
    "update": writes.update,
    "patch": patching.patch_,
    "delete": deletion.delete,
    "deletecollection": deletion.delete,
}
HEALTH_PATHS = ("/healthz", "/livez", "/readyz")


class Api:
    """The state of one API server (store, served resources, schemas, faults) and its request handling."""

    def __init__(self, *, token: str | None = None, watch_history: int = 10000,
                 faults: FaultProfile | None = None) -> None:
        self.store = Store(watch_history)
        self.registry = Registry()
        self.schemas = Schemas.builtin()
        self.allocator = Allocator()
        self.faults = FaultInjector(faults)
        self.closing = threading.Event()  # set while the server stops: injected latency ends at once
        self.openapi = OpenApi(self.registry, self.schemas.definitions(), self.schemas.definition_name)
        self.swagger = Swagger(self.registry, self.openapi)
        self.token = token
        self.max_watch_seconds = 1800.0
        self.bookmark_seconds = 60.0
        self.server_address = "127.0.0.1"
        self.kubelet_tls: ssl.SSLContext | None = None  # how pods/log reaches a node's kubelet (client certificate)
        self.checked = CheckedObjects()  # custom resources stored by writes their schema checked
        self.store.on_commit.append(self.checked.on_commit)
        self.store.on_commit.append(lambda event: crds.on_commit(self, event))

    def type_of(self, rt: ResourceType) -> TypeNode:
        return self.schemas.for_kind(rt.api_version, rt.kind)

    def handle(self, req: ApiRequest) -> ApiResponse:
        """Answer one request; every failure becomes a Status response, never an exception."""
        try:
            if self.token is not None and not req.in_process:
                self._authenticate(req)
            return self._dispatch(req)
        except ApiError as e:
            return ApiResponse.error(e)
        except Exception as e:
            log.exception("request failed", extra={"method": req.method, "path": req.path})
            return ApiResponse.error(internal_error(f"{type(e).__name__}: {e}"))

    def _authenticate(self, req: ApiRequest) -> None:
        header = req.headers.get("authorization", "")
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(presented.strip(), self.token or ""):
            raise unauthorized()

    def _dispatch(self, req: ApiRequest) -> ApiResponse:
        path = "/" + "/".join(p for p in req.path.split("/") if p)
        if not routing.is_resource_path([p for p in path.split("/") if p]):
            return self._non_resource(req, path)
        target = routing.parse(path, self.registry)
        verb = verb_of(req, target)
        if not req.in_process:
            self._inject_faults(verb)
        if req.body and req.content_type == protobuf.MEDIA_TYPE and target.rt.is_custom:
            raise unsupported_media_type(protobuf_too=False)  # custom resources have no protobuf messages
        if target.subresource == "log":
            if verb != "get":
                raise method_not_allowed()
            return logs.get_log(self, target, req)
        if verb not in target.rt.verbs and not (target.subresource and verb in ("get", "update", "patch")):
            raise method_not_allowed()
        if verb == "watch" and req.in_process:
            raise bad_request("watch is not served in-process; use DevCluster.subscribe()")
        if verb == "create" and crds.is_terminating_crd(self, target.rt):
            raise ApiError(405, "MethodNotAllowed", "create not allowed while custom resource definition is "
                                                    "terminating", {})
        response = HANDLERS[verb](self, target, req)
        lost = None if req.in_process else self.faults.answer_lost(verb)
        if lost is not None:
            raise lost
        return response

    def _inject_faults(self, verb: str) -> None:
        delay = self.faults.latency()
        if delay > 0:
            self.closing.wait(delay)  # the profile's latency, not a poll: nothing is awaited but time
        err = self.faults.error_for(verb)
        if err is not None:
            raise err

    def _non_resource(self, req: ApiRequest, path: str) -> ApiResponse:
        if req.method not in ("GET", "HEAD"):
            raise not_served() if path not in ("/api", "/apis", "/version") else method_not_allowed()
        if path in HEALTH_PATHS:
            return ApiResponse(200, b"ok", {"Content-Type": "text/plain; charset=utf-8"})
        if path == "/version":
            return ApiResponse(200, discovery.version())
        parts = [p for p in path.split("/") if p]
        if path in ("/api", "/apis"):
            media = aggregated.negotiate(req.accept)
            if media is not None:
                body = aggregated.document(self.registry, core=path == "/api")
                return aggregated.answer(body, media, req.headers.get("if-none-match", ""))
        if parts[:1] in (["api"], ["apis"]) and len(parts) <= 3:
            aggregated.check_plain(req.accept)
        if path == "/api":
            return ApiResponse(200, discovery.api_versions(self.server_address))
        if path == "/apis":
            return ApiResponse(200, discovery.api_group_list(self.registry))
        if path == "/openapi/v2":
            return self.swagger.answer(req.accept)
        if path == "/openapi/v3":
            return ApiResponse(200, self.openapi.index())
        if path.startswith("/openapi/v3/"):
            document, _ = self.openapi.document(path.removeprefix("/openapi/v3/"))
            return ApiResponse(200, document)
        if parts[0] == "api" and len(parts) == 2:
            return ApiResponse(200, discovery.resource_list(self.registry, "", parts[1]))
        if parts[0] == "apis" and len(parts) == 2:
            return ApiResponse(200, discovery.api_group(self.registry, parts[1]))
        if parts[0] == "apis" and len(parts) == 3:
            return ApiResponse(200, discovery.resource_list(self.registry, parts[1], parts[2]))
        raise page_not_found()


def verb_of(req: ApiRequest, target: routing.Target) -> str:
    method = req.method.upper()
    if method in ("GET", "HEAD"):
        if target.legacy_watch or req.flag("watch"):
            return "watch"
        return "get" if target.name else "list"
    if method == "POST" and not target.name:
        return "create"
    if method == "PUT" and target.name:
        return "update"
    if method == "PATCH" and target.name:
        return "patch"
    if method == "DELETE":
        return "delete" if target.name else "deletecollection"
    raise method_not_allowed()

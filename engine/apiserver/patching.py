"""PATCH: merge, JSON and strategic merge patches, and server-side apply (with its own request checks)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.apiserver import patch, scale, ssa, structural
from engine.apiserver.objects import JsonDict, copy_json, name_of, now, rv_of, uid_of
from engine.apiserver.reads import served_form
from engine.apiserver.requests import (
    APPLY_YAML,
    JSON_PATCH,
    MERGE_PATCH,
    PATCH_TYPES,
    STRATEGIC_PATCH,
    ApiRequest,
    ApiResponse,
)
from engine.apiserver.resources import ResourceType
from engine.apiserver.routing import Target
from engine.apiserver.status import (
    ApiError,
    bad_request,
    conflict,
    internal,
    method_not_allowed,
    not_found,
    too_large,
    unsupported_media_type,
)
from engine.apiserver.writes import (
    WriteOptions,
    apply_defaults,
    check_identity,
    check_type,
    check_valid,
    commit_create,
    commit_update,
    decode,
    existing,
    metadata_only,
    options,
    prepare_new,
    scale_write,
    schema_view,
)

if TYPE_CHECKING:
    from engine.apiserver.api import Api

CR_PATCH_TYPES = "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
ALL_PATCH_TYPES = ("application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, "
                   "application/strategic-merge-patch+json")


def patch_(api: Api, target: Target, req: ApiRequest) -> ApiResponse:
    rt = target.rt
    if not target.name:
        raise method_not_allowed()
    kind = req.content_type
    if kind not in PATCH_TYPES or (kind == STRATEGIC_PATCH and rt.is_custom):
        accepted = CR_PATCH_TYPES if rt.is_custom else ALL_PATCH_TYPES
        raise unsupported_media_type(f"the body of the request was in an unknown format - accepted media types "
                                     f"include: {accepted}")
    opts = options(req, apply=kind == APPLY_YAML, patch_request=True)
    if kind == APPLY_YAML:
        return apply_(api, target, req, opts)
    body = req.json_body()
    if target.subresource == "scale":
        return scale_write(api, target, opts, lambda live: _patched(api, scale.SCALE_TYPE, kind, live, body))
    with api.store.lock:
        old = existing(api, target)
        live = served_form(rt, old)
        new = _patched(api, rt, kind, live, body)
        if not isinstance(new, dict):
            raise bad_request("the patched object is not a JSON object")
        check_type(rt, new)
        decoded = decode(api, rt, new, opts, old)
        check_identity(target, new)
        code, obj = commit_update(api, target, old, new, opts, decoded=decoded)
    return ApiResponse(code, served_form(rt, obj), warnings=opts.warnings)


def _patched(api: Api, rt: ResourceType, kind: str, live: JsonDict, body: Any) -> Any:
    """The patched object, a copy: `live` is not changed."""
    try:
        if kind == JSON_PATCH:
            if not isinstance(body, list):
                raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
            return patch.json_patch(live, body)
        if not isinstance(body, dict):
            raise bad_request("json: cannot unmarshal array into Go value of type map[string]interface {}")
        if kind == MERGE_PATCH:
            return patch.merge_patch(live, body)
        return patch.strategic_merge_patch(live, body, api.type_of(rt))
    except patch.PatchTooLarge as e:
        raise too_large(str(e)) from e
    except patch.PatchError as e:
        raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request", {}) from e


def apply_(api: Api, target: Target, req: ApiRequest, opts: WriteOptions) -> ApiResponse:
    rt = target.rt
    config = req.object_body()
    if target.subresource == "scale":
        return scale_write(api, target, opts, lambda _live: config)
    _check_apply_type(rt, config)
    check_apply_fields(api, target, config)
    _check_apply_config(target, config)
    with api.store.lock:
        old = api.store.get(rt.key, target.namespace, target.name)
        if old is None and target.subresource:
            raise not_found(rt, target.name)
        _check_apply_preconditions(rt, config, old)
        try:
            merged = ssa.apply(served_form(rt, old) if old else None, config, type_=api.type_of(rt),
                               manager=opts.manager, force=opts.force, api_version=rt.api_version, now=now(),
                               subresource=target.subresource or None, ignored=reset_fields(rt, target, old, config))
        except ssa.ApplyConflict as e:
            status = e.status()
            raise ApiError(409, status["reason"], status["message"], status["details"]) from e
        except (TypeError, ValueError, AttributeError, KeyError) as e:
            raise typed_patch_error(target, config, f"{type(e).__name__}: {e}") from e
        if old is None:
            new = prepare_new(api, rt, merged)
            apply_defaults(api, rt, new)
            check_valid(api, rt, new, None)
            return ApiResponse(201, served_form(rt, commit_create(api, rt, new, opts)), warnings=opts.warnings)
        code, obj = commit_update(api, target, old, merged, opts, tracked=True)
    return ApiResponse(code, served_form(rt, obj), warnings=opts.warnings)


def _check_apply_type(rt: ResourceType, config: JsonDict) -> None:
    if config.get("apiVersion") != rt.api_version or config.get("kind") != rt.kind:
        raise bad_request(f"invalid object type: {config.get('apiVersion', '')}, Kind={config.get('kind', '')}")


def _check_apply_config(target: Target, config: JsonDict) -> None:
    if (config.get("metadata") or {}).get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    check_identity(target, config)


def _check_apply_preconditions(rt: ResourceType, config: JsonDict, old: JsonDict | None) -> None:
    rv, uid = rv_of(config), uid_of(config)
    if rv and (old is None or rv != rv_of(old)):
        raise conflict(rt, name_of(config))
    if uid and (old is None or uid != uid_of(old)):
        detail = f"Precondition failed: UID in precondition: {uid}, UID in object meta: {uid_of(old or {})}"
        raise conflict(rt, name_of(config), detail)


def reset_fields(rt: ResourceType, target: Target, old: JsonDict | None, config: JsonDict) -> tuple[str, ...]:
    """Fields the endpoint ignores (§1.7): status on main endpoints with a status subresource; the rest on /status."""
    if target.subresource == "status":
        if rt.is_custom:
            keys = (set(old or {}) | set(config)) - {"status", "apiVersion", "kind"}
            return tuple(sorted(keys))
        keys = (set(old or {}) | set(config)) - {"status", "apiVersion", "kind", "metadata"}
        return (*tuple(sorted(keys)), "metadata.labels")
    return ("status",) if rt.has_status else ()


def check_apply_fields(api: Api, target: Target, config: JsonDict) -> None:
    """An applied field the schema does not declare, or of the wrong type, fails typing: HTTP 500 whatever
    fieldValidation says (as the real server does)."""
    rt = target.rt
    view = schema_view(api, rt)
    if view is None:
        return
    problem = ""
    mismatches = structural.type_mismatches(metadata_only(view) if view.custom else view, config)
    if mismatches:
        problem = f".{mismatches[0].path}: expected {mismatches[0].expected}, got {mismatches[0].got}"
    else:
        unknown = structural.prune(view, copy_json(config))
        if unknown:
            problem = f".{unknown[0]}: field not declared in schema"
    if problem:
        raise typed_patch_error(target, config, problem)


def typed_patch_error(target: Target, config: JsonDict, problem: str) -> ApiError:
    rt = target.rt
    metadata = config.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, dict) else ""
    where = f"{namespace or ''}/{name_of(config)}"  # as the patch names it
    group_version = f"{rt.group}/{rt.version}" if rt.group else f"/{rt.version}"
    return internal(f"failed to create typed patch object ({where}; {group_version}, Kind={rt.kind}): {problem}")

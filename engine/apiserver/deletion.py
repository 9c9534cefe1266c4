"""DELETE and DELETE-collection: preconditions, finalizers, propagation policy, graceful pods, namespaces."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.apiserver import crds
from engine.apiserver.objects import (
    JsonDict,
    copy_json,
    finalizers_of,
    format_time,
    get_path,
    is_terminating,
    meta,
    name_of,
    now,
    rv_of,
    uid_of,
)
from engine.apiserver.reads import list_item, served_form
from engine.apiserver.requests import ApiRequest, ApiResponse
from engine.apiserver.resources import ResourceType
from engine.apiserver.routing import Target
from engine.apiserver.selectors import matcher, parse_both
from engine.apiserver.status import ApiError, bad_request, forbidden, method_not_allowed, not_found

if TYPE_CHECKING:
    from engine.apiserver.api import Api

ORPHAN, FOREGROUND = "orphan", "foregroundDeletion"
GC_FINALIZERS = (ORPHAN, FOREGROUND)
POLICIES = ("Background", "Foreground", "Orphan")
RETURN_DELETED = ("/pods", "/services", "/serviceaccounts", "/persistentvolumeclaims", "/persistentvolumes")
UNDELETABLE_NAMESPACES = ("default", "kube-system", "kube-public")


@dataclass(frozen=True)
class DeleteOptions:
    propagation: str | None = None
    grace: int | None = None
    uid: str | None = None
    rv: str | None = None
    dry_run: bool = False
    orphan_dependents: bool | None = None


def delete_options(req: ApiRequest) -> DeleteOptions:
    """Options from the DeleteOptions body and the query (the query wins)."""
    body: dict[str, Any] = {}
    if req.body.strip():
        try:
            decoded = json.loads(req.body)
        except ValueError as e:
            raise bad_request(f"couldn't get version/kind; json parse error: {e}") from e
        body = decoded if isinstance(decoded, dict) else {}
    q = req.query
    policy = q.get("propagationPolicy") or body.get("propagationPolicy")
    if policy is not None and policy not in POLICIES:
        raise bad_request(f'propagationPolicy: Unsupported value: "{policy}": supported values: "Background", '
                          '"Foreground", "Orphan"')
    grace = q.get("gracePeriodSeconds", body.get("gracePeriodSeconds"))
    orphan = q.get("orphanDependents", body.get("orphanDependents"))
    dry_run = q.get("dryRun") or body.get("dryRun")
    preconditions = body.get("preconditions") or {}
    return DeleteOptions(
        propagation=policy,
        grace=int(grace) if grace not in (None, "") else None,
        uid=preconditions.get("uid"),
        rv=preconditions.get("resourceVersion"),
        dry_run=bool(dry_run),
        orphan_dependents=None if orphan is None else str(orphan).lower() in ("true", "1"),
    )


def delete(api: Api, target: Target, req: ApiRequest) -> ApiResponse:
    rt = target.rt
    if target.subresource:
        raise method_not_allowed()
    if not target.name:
        return delete_collection(api, target, req)
    opts = delete_options(req)
    with api.store.lock:
        old = api.store.get(rt.key, target.namespace, target.name)
        if old is None:
            raise not_found(rt, target.name)
        code, body = delete_object(api, rt, old, opts)
    return ApiResponse(code, body)


def delete_collection(api: Api, target: Target, req: ApiRequest) -> ApiResponse:
    rt = target.rt
    if "deletecollection" not in rt.verbs:
        raise method_not_allowed()
    labels, fields = parse_both(req.query, rt)
    accepts = matcher(labels, fields)
    opts = delete_options(req)
    deleted = []
    with api.store.lock:
        for obj in api.store.items(rt.key, target.namespace or None):
            if accepts(obj):
                delete_object(api, rt, obj, opts)
                deleted.append(list_item(rt, obj))
        revision = api.store.revision
    body = {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": {"resourceVersion": str(revision)},
            "items": deleted}
    return ApiResponse(200, body)


def delete_object(api: Api, rt: ResourceType, old: JsonDict, opts: DeleteOptions) -> tuple[int, JsonDict]:
    """Delete one object (the caller holds the store lock); returns the HTTP code and body."""
    _check_preconditions(rt, old, opts)
    if rt.key == "/namespaces":
        return _delete_namespace(api, rt, old, opts)
    grace = _grace_period(rt, old, opts)
    finalizers = _finalizers_after(rt, old, opts)
    if is_terminating(old):
        if grace == 0 and not finalizers_of(old) and rt.key == "/pods":
            return _remove(api, rt, old, opts)
        if finalizers != finalizers_of(old) and not opts.dry_run:
            changed = copy_json(old)
            meta(changed)["finalizers"] = finalizers
            return 200, served_form(rt, api.store.update(rt.key, changed))
        return 200, served_form(rt, old)
    if finalizers or grace:
        return _mark_deleting(api, rt, old, opts, finalizers, grace)
    return _remove(api, rt, old, opts)


def _check_preconditions(rt: ResourceType, old: JsonDict, opts: DeleteOptions) -> None:
    if opts.uid and opts.uid != uid_of(old):
        raise precondition_failed(rt, name_of(old), f"the UID in the precondition ({opts.uid}) does not match the UID "
                                  f"in record ({uid_of(old)}). The object might have been deleted and then recreated")
    if opts.rv and opts.rv != rv_of(old):
        raise precondition_failed(rt, name_of(old), f"the ResourceVersion in the precondition ({opts.rv}) does not "
                                  f"match the ResourceVersion in record ({rv_of(old)}). The object might have been "
                                  "modified")


def precondition_failed(rt: ResourceType, name: str, detail: str) -> ApiError:
    """A delete precondition that does not hold: the real server names the kind, not the resource, here."""
    message = f'Operation cannot be fulfilled on {rt.kind} "{name}": {detail}'
    return ApiError(409, "Conflict", message, {"name": name, "kind": rt.kind})


def _policy(opts: DeleteOptions) -> str:
    if opts.propagation:
        return opts.propagation
    if opts.orphan_dependents is True:
        return "Orphan"
    return "Background"


def _finalizers_after(rt: ResourceType, old: JsonDict, opts: DeleteOptions) -> list[str]:
    finalizers = finalizers_of(old)
    policy = _policy(opts)
    if opts.propagation or opts.orphan_dependents is not None:
        finalizers = [f for f in finalizers if f not in GC_FINALIZERS]
        if policy == "Orphan":
            finalizers.append(ORPHAN)
        elif policy == "Foreground":
            finalizers.append(FOREGROUND)
    if rt.key == crds.CRD_KEY and crds.CLEANUP_FINALIZER not in finalizers:
        finalizers.append(crds.CLEANUP_FINALIZER)
    return finalizers


def _grace_period(rt: ResourceType, old: JsonDict, opts: DeleteOptions) -> int:
    if rt.key != "/pods":
        return 0
    spec, phase = old.get("spec") or {}, get_path(old, ["status", "phase"])
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
        return 0
    if opts.grace is not None:
        return max(0, opts.grace)
    return int(spec.get("terminationGracePeriodSeconds", 30) or 0)


def _mark_deleting(api: Api, rt: ResourceType, old: JsonDict, opts: DeleteOptions, finalizers: list[str],
                   grace: int) -> tuple[int, JsonDict]:
    new = copy_json(old)
    m = meta(new)
    moment = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=grace)
    m["deletionTimestamp"] = format_time(moment)
    m["deletionGracePeriodSeconds"] = grace
    if finalizers:
        m["finalizers"] = finalizers
    else:
        m.pop("finalizers", None)
    if int(m.get("generation") or 0) > 0:
        m["generation"] = int(m["generation"]) + 1
    if rt.key == crds.CRD_KEY:
        crds.mark_terminating(new)
    code = 202 if opts.orphan_dependents is False else 200
    if opts.dry_run:
        return code, served_form(rt, new)
    return code, served_form(rt, api.store.update(rt.key, new))


def _remove(api: Api, rt: ResourceType, old: JsonDict, opts: DeleteOptions) -> tuple[int, JsonDict]:
    last = copy_json(old)
    if not opts.dry_run:
        last = api.store.remove(rt.key, last)
    if rt.key in RETURN_DELETED:
        return 200, served_form(rt, last)
    details: dict[str, Any] = {"name": name_of(old)}
    if rt.group:
        details["group"] = rt.group
    details["kind"] = rt.plural
    details["uid"] = uid_of(old)
    return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def _delete_namespace(api: Api, rt: ResourceType, old: JsonDict, opts: DeleteOptions) -> tuple[int, JsonDict]:
    name = name_of(old)
    if name in UNDELETABLE_NAMESPACES:
        raise forbidden(rt, name, "this namespace may not be deleted")
    if is_terminating(old):  # while its finalizers run, another delete answers the namespace as it is
        return 200, served_form(rt, old)
    new = copy_json(old)
    m = meta(new)
    m["deletionTimestamp"] = now()
    m["deletionGracePeriodSeconds"] = 0
    finalizers = _finalizers_after(rt, old, opts)
    if finalizers:
        m["finalizers"] = finalizers
    new["status"] = {**(new.get("status") or {}), "phase": "Terminating"}
    if not finalizers and not get_path(new, ["spec", "finalizers"]):
        return _remove(api, rt, new, opts)
    if opts.dry_run:
        return 200, new
    return 200, api.store.update(rt.key, new)

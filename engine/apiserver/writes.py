"""Create and update (PUT): request checks and decoding, then the commit path every write shares."""

from __future__ import annotations

import base64
import binascii
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.apiserver import (
    bodycheck,
    celrules,
    crds,
    eventsv1,
    limitranges,
    omitempty,
    quantities,
    quotas,
    scale,
    ssa,
    strategies,
    structural,
    validation,
)
from engine.apiserver.defaults import apply_builtin
from engine.apiserver.objects import (
    JsonDict,
    copy_json,
    finalizers_of,
    is_terminating,
    meta,
    name_of,
    namespace_of,
    new_uid,
    now,
    rv_of,
)
from engine.apiserver.reads import served_form
from engine.apiserver.requests import (
    ApiRequest,
    ApiResponse,
)
from engine.apiserver.resources import ResourceType
from engine.apiserver.routing import Target
from engine.apiserver.status import (
    ApiError,
    ErrorType,
    FieldError,
    already_exists,
    bad_request,
    conflict,
    forbidden,
    internal,
    invalid,
    method_not_allowed,
    not_found,
)
from engine.apiserver.unchanged import NOTHING, Unchanged
from engine.quantity import QuantityError

if TYPE_CHECKING:
    from engine.apiserver.api import Api

VALIDATION_MODES = ("Ignore", "Warn", "Strict")
GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
PATCH_OPTIONS = ResourceType("meta.k8s.io", "v1", "patchoptions", "PatchOptions", False)


@dataclass(frozen=True)
class WriteOptions:
    dry_run: bool
    manager: str
    validation: str
    force: bool = False
    warnings: list[str] = field(default_factory=list)


def options(req: ApiRequest, *, apply: bool = False, patch_request: bool = False) -> WriteOptions:
    dry_run = req.query.get("dryRun", "")
    if dry_run and dry_run != "All":
        raise bad_request(f'Invalid dry run value: "{dry_run}"; supported values: "All"')
    mode = req.query.get("fieldValidation") or "Warn"
    if mode not in VALIDATION_MODES:
        raise bad_request(f'fieldValidation: Unsupported value: "{mode}": supported values: '
                          '"Ignore", "Strict", "Warn"')
    manager = req.query.get("fieldManager", "")
    errors = []
    if apply and not manager:
        errors.append(FieldError(ErrorType.REQUIRED, "fieldManager", detail="is required for apply patch"))
    if len(manager) > 128:
        errors.append(FieldError(ErrorType.TOO_LONG, "fieldManager", manager, "may not be more than 128 bytes"))
    if "force" in req.query and not apply and patch_request:
        errors.append(FieldError(ErrorType.FORBIDDEN, "force", detail="may not be specified for non-apply patch"))
    if errors:
        raise invalid(PATCH_OPTIONS, "", errors)
    if not manager:
        manager = req.user_agent.split("/", 1)[0] or "unknown"
    return WriteOptions(bool(dry_run), manager, mode, req.flag("force"))


# decoding ------------------------------------------------------------------------------------------------------


def check_type(rt: ResourceType, body: JsonDict) -> None:
    """The body's apiVersion and kind must name the URL's resource (missing ones default to it)."""
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if api_version and api_version != rt.api_version:
        version = str(api_version).rpartition("/")[2]
        raise bad_request(f'{rt.kind} in version "{version}" cannot be handled as a {rt.kind}: no kind "{rt.kind}" '
                          f'is registered for version "{api_version}" in scheme "pkg/runtime/scheme.go:111"')
    if kind and kind != rt.kind:
        raise bad_request(f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})")
    body["apiVersion"], body["kind"] = rt.api_version, rt.kind


def schema_view(api: Api, rt: ResourceType) -> structural.SchemaView | None:
    definitions = api.schemas.definitions()
    if rt.custom is not None:
        return structural.SchemaView.custom_resource(rt.custom.schema, definitions)
    name = api.schemas.definition_name(rt.api_version, rt.kind)
    return structural.SchemaView(definitions[name], definitions, False) if name else None


def decode(api: Api, rt: ResourceType, obj: JsonDict, opts: WriteOptions,
           stored: JsonDict | None = None) -> Unchanged:
    """Type errors (400; for custom resources only in metadata, the rest is validated later), then drop unknown
    fields: Warn adds warnings, Strict fails (400). Parts identical to the `stored` object (as the store holds it)
    passed these checks when it was written (`unchanged_parts`), and are not walked again; returns those parts,
    which the commit of this write may start from."""
    view = schema_view(api, rt)
    if view is None:
        return NOTHING
    unchanged = unchanged_parts(api, rt, obj, stored)
    checked = view.custom or bodycheck.has_mismatch(view, obj, unchanged)  # else the walk finds nothing
    mismatches = structural.type_mismatches(metadata_only(view) if view.custom else view, obj, unchanged) \
        if checked else []
    if mismatches:
        m = mismatches[0]
        raise bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: json: cannot '
                          f"unmarshal {m.got} into Go struct field {m.struct} of type {m.expected}")
    _check_secret_data(rt, obj)
    pruned = view.custom or bodycheck.has_unknown(view, obj, unchanged)
    unknown = structural.prune(view, obj, unchanged) if pruned else []
    if unknown and opts.validation == "Strict":
        listed = ", ".join(f'unknown field "{p}"' for p in unknown)
        raise bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                          f"strict decoding error: {listed}")
    if opts.validation == "Warn":
        opts.warnings.extend(f'unknown field "{p}"' for p in unknown)
    return unchanged


def unchanged_parts(api: Api, rt: ResourceType, new: JsonDict, stored: JsonDict | None,
                    known: Unchanged = NOTHING) -> Unchanged:
    """The parts of `new` identical to the `stored` object (as the store holds it), which the schema walks of this
    write need not visit: a built-in object passed its kind's walks when it was written; a custom resource only
    counts when it was written through this very schema (`CheckedObjects`). `known`: what the decoding of this
    write found (used when it was compared with the same stored object). The parts found unchanged are replaced in
    `new` by the stored parts themselves (`Unchanged` with `share`)."""
    if stored is None or (rt.custom is not None and not api.checked.passed(stored, rt.custom.schema)):
        return NOTHING
    return Unchanged(new, served_form(rt, stored), known, share=True)


def _record_checked(api: Api, rt: ResourceType, stored: JsonDict) -> None:
    """A custom resource just committed by a write that passed the walks of its version's schema."""
    if rt.custom is not None:
        api.checked.record(stored, rt.custom.schema)


def metadata_only(view: structural.SchemaView) -> structural.SchemaView:
    root = {"type": "object", "properties": {"metadata": view.root["properties"]["metadata"]}}
    return structural.SchemaView(root, view.definitions, view.custom)


def _check_secret_data(rt: ResourceType, obj: JsonDict) -> None:
    if rt.key != "/secrets":
        return
    for value in (obj.get("data") or {}).values():
        try:
            base64.b64decode(str(value or ""), validate=True)
        except (binascii.Error, ValueError) as e:
            raise bad_request(f'Secret in version "v1" cannot be handled as a Secret: illegal base64 data: {e}') from e


def check_identity(target: Target, body: JsonDict) -> None:
    """Name and namespace in the body must agree with the URL."""
    body_ns = namespace_of(body)
    if target.rt.namespaced and body_ns and body_ns != target.namespace:
        raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
    if target.rt.namespaced:
        meta(body)["namespace"] = target.namespace
    elif body_ns:
        meta(body).pop("namespace", None)
    if target.name and name_of(body) != target.name:
        raise bad_request(f"the name of the object ({name_of(body)}) does not match the name on the URL "
                          f"({target.name})")


# create --------------------------------------------------------------------------------------------------------


def create(api: Api, target: Target, req: ApiRequest) -> ApiResponse:
    rt = target.rt
    if target.name:
        raise method_not_allowed()
    opts = options(req)
    body = req.object_body()
    check_type(rt, body)
    decode(api, rt, body, opts)
    check_identity(target, body)
    if rv_of(body):
        raise internal("resourceVersion should not be set on objects to be created")
    with api.store.lock:
        _name_object(api, rt, body)
        new = prepare_new(api, rt, body)
        apply_defaults(api, rt, new)
        check_valid(api, rt, new, None)
        new = ssa.track_update(None, new, type_=api.type_of(rt), manager=opts.manager, api_version=rt.api_version,
                               now=now())
        admit_to_limit_ranges(api, rt, new)
        charges = admit_to_quotas(api, rt, new, None)
        stored = commit_create(api, rt, new, opts)
        if not opts.dry_run:
            charge_quotas(api, namespace_of(stored), charges)
    return ApiResponse(201, served_form(rt, stored), warnings=opts.warnings)


def _name_object(api: Api, rt: ResourceType, body: JsonDict) -> None:
    m = meta(body)
    if m.get("name") or not m.get("generateName"):
        return
    prefix = str(m["generateName"])[:58]
    for _ in range(8):
        candidate = prefix + "".join(random.choices(GENERATE_ALPHABET, k=5))
        if api.store.get(rt.key, namespace_of(body), candidate) is None:
            m["name"] = candidate
            return
    raise ApiError(500, "ServerTimeout", f"failed to generate a unique name for {rt.qualified}")


def prepare_new(api: Api, rt: ResourceType, body: JsonDict) -> JsonDict:
    """System metadata and the kind's create strategy on a fresh object."""
    new = body
    m = meta(new)
    for key in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "generation"):
        m.pop(key, None)
    m["uid"] = new_uid()
    m["creationTimestamp"] = now()
    if rt.has_generation:
        m["generation"] = 1
    strategies.prepare_for_create(rt, new, api.allocator)
    crds.prepare_for_create(api, rt, new)
    return new


def apply_defaults(api: Api, rt: ResourceType, obj: JsonDict, unchanged: Unchanged = NOTHING) -> None:
    """Defaults, the canonical form of the quantities of built-in kinds (a malformed one fails decoding), and
    the empty values Go's omitempty drops; not again in the parts `unchanged` from the stored object."""
    apply_builtin(rt.key, obj)
    view = schema_view(api, rt)
    if view is not None and rt.custom is not None:
        structural.apply_defaults(view, obj, unchanged)
    elif view is not None:
        try:
            quantities.canonicalise(view, rt.group, obj, unchanged)
        except QuantityError as e:
            raise bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {e}') from e
    omitempty.prune(rt, obj, unchanged)


def check_valid(api: Api, rt: ResourceType, new: JsonDict, old: JsonDict | None,
                warnings: list[str] | None = None, unchanged: Unchanged = NOTHING) -> None:
    """Every validation error of the write (422); the schema of a custom resource is not checked again in the
    parts `unchanged` from the stored object."""
    errors = validation.meta_errors(rt, new)
    if old is not None:
        errors += validation.finalizer_errors(new, old)
    if rt.custom is not None:
        view = schema_view(api, rt)
        if view is not None:
            errors += structural.validate(view, new, unchanged)
        errors += celrules.errors_of(rt.custom.schema, new, old, errors, warnings)
    else:
        errors += validation.builtin_errors(rt, new)
        errors += crds.spec_errors(api, rt, new, old)
        if eventsv1.is_event(rt):
            errors += eventsv1.errors_of(rt, new, old)
            rt = api.registry.lookup("", "v1", "events") or rt  # errors name the internal kind: Event
        if old is not None:
            errors += validation.update_errors(rt, new, old)
    if errors:
        raise invalid(rt, name_of(new), errors)


def check_namespace_open(api: Api, rt: ResourceType, obj: JsonDict) -> None:
    """Creates need an existing namespace that is not terminating."""
    if not rt.namespaced:
        return
    ns = namespace_of(obj)
    namespace = api.store.get("/namespaces", "", ns)
    if namespace is None:
        raise ApiError(404, "NotFound", f'namespaces "{ns}" not found', {"name": ns, "kind": "namespaces"})
    if is_terminating(namespace):
        cause = {"reason": "NamespaceTerminating", "message": f"namespace {ns} is being terminated",
                 "field": "metadata.namespace"}
        raise forbidden(rt, name_of(obj), f"unable to create new content in namespace {ns} because it is being "
                                          "terminated", [cause])


def commit_create(api: Api, rt: ResourceType, new: JsonDict, opts: WriteOptions) -> JsonDict:
    check_namespace_open(api, rt, new)
    existing = api.store.get(rt.key, namespace_of(new), name_of(new))
    if existing is not None:
        raise already_exists(rt, name_of(new), is_terminating(existing))
    omitempty.write_status(rt, new)
    new = stored_form(rt, new)
    if opts.dry_run:
        meta(new)["resourceVersion"] = ""
        return new
    stored = api.store.create(rt.key, new)
    _record_checked(api, rt, stored)
    return stored


def stored_form(rt: ResourceType, obj: JsonDict) -> JsonDict:
    """Custom resources are stored in their storage version (conversion None only rewrites apiVersion), Events of
    either API in the core/v1 form."""
    if eventsv1.is_event(rt):
        return eventsv1.to_core(obj)
    if rt.custom is not None and rt.custom.storage_version and rt.custom.storage_version != rt.version:
        obj["apiVersion"] = f"{rt.group}/{rt.custom.storage_version}"
    return obj


# quota admission -----------------------------------------------------------------------------------------------

QUOTA_MANAGER = "kube-apiserver"


def admit_to_quotas(api: Api, rt: ResourceType, new: JsonDict, old: JsonDict | None) -> list[quotas.Charge]:
    """The ResourceQuota admission: a write beyond a quota of its namespace is refused (403)."""
    if not rt.namespaced or not api.store.count(quotas.QUOTAS, namespace_of(new)):
        return []
    try:
        return quotas.admit(rt.key, new, old, api.store.items(quotas.QUOTAS, namespace_of(new)))
    except quotas.QuotaRefusal as e:
        raise forbidden(rt, name_of(new), str(e)) from e


def admit_to_limit_ranges(api: Api, rt: ResourceType, pod: JsonDict) -> None:
    """The LimitRanger admission of a created pod: defaults from the namespace's LimitRanges (after managedFields,
    which admission's changes are not part of), then their min and max (403)."""
    if rt.key != "/pods" or not api.store.count(limitranges.LIMIT_RANGES, namespace_of(pod)):
        return
    ranges = api.store.items(limitranges.LIMIT_RANGES, namespace_of(pod))
    limitranges.apply_defaults(pod, ranges)
    pod.setdefault("status", {})["qosClass"] = strategies.qos_class(pod.get("spec") or {})
    try:
        limitranges.check(pod, ranges)
    except limitranges.LimitViolation as e:
        raise forbidden(rt, name_of(pod), str(e)) from e


def charge_quotas(api: Api, namespace: str, charges: list[quotas.Charge]) -> None:
    """Record the admitted write's usage in its quotas' status, as the admission plugin does."""
    quota_types = api.registry.by_key(quotas.QUOTAS)
    for charge in charges:
        old = api.store.get(quotas.QUOTAS, namespace, charge.name)
        if old is None or not quota_types:
            continue
        new = copy_json(old)
        new["status"] = {**(new.get("status") or {}), "used": charge.used}
        commit_update(api, Target(quota_types[0], namespace, charge.name, "status"), old, new,
                      WriteOptions(False, QUOTA_MANAGER, "Ignore"))


# update --------------------------------------------------------------------------------------------------------


def update(api: Api, target: Target, req: ApiRequest) -> ApiResponse:
    rt = target.rt
    if not target.name:
        raise method_not_allowed()
    opts = options(req)
    body = req.object_body()
    if target.subresource == "scale":
        return scale_write(api, target, opts, lambda _live: body)
    check_type(rt, body)
    decoded = decode(api, rt, body, opts, api.store.get(rt.key, target.namespace, target.name))
    check_identity(target, body)
    with api.store.lock:
        old = existing(api, target)
        if not rv_of(body) and rt.is_custom and not target.subresource:
            raise invalid(rt, target.name, [FieldError(ErrorType.INVALID, "metadata.resourceVersion", 0,
                                                       "must be specified for an update")], kind=rt.plural)
        code, obj = commit_update(api, target, old, body, opts, decoded=decoded)
    return ApiResponse(code, served_form(rt, obj), warnings=opts.warnings)


def existing(api: Api, target: Target) -> JsonDict:
    old = api.store.get(target.rt.key, target.namespace, target.name)
    if old is None:
        raise not_found(target.rt, target.name)
    return old


def carry_system_meta(rt: ResourceType, new: JsonDict, old: JsonDict) -> None:
    """Immutable and server-owned metadata comes from the stored object; a changed uid is refused."""
    m, old_m = meta(new), old.get("metadata") or {}
    if m.get("uid") and m["uid"] != old_m.get("uid"):
        raise invalid(rt, name_of(old), [FieldError(ErrorType.INVALID, "metadata.uid", m["uid"],
                                                    "field is immutable")])
    for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                "resourceVersion"):
        if key in old_m:
            m[key] = old_m[key]
        else:
            m.pop(key, None)
    m.pop("selfLink", None)


def commit_update(api: Api, target: Target, old: JsonDict, new: JsonDict, opts: WriteOptions, *,
                  tracked: bool = False, decoded: Unchanged = NOTHING) -> tuple[int, JsonDict]:
    """The shared tail of PUT, PATCH and apply on an existing object; `tracked`: managedFields already done;
    `decoded`: the unchanged parts the decoding of `new` found."""
    rt, sub = target.rt, target.subresource
    if eventsv1.is_events_v1(rt):  # written in the request's form, stored in the core one
        old = served_form(rt, old)
    if rv_of(new) and rv_of(new) != rv_of(old):
        raise conflict(rt, name_of(old))
    new["apiVersion"], new["kind"] = old.get("apiVersion", rt.api_version), rt.kind
    carry_system_meta(rt, new, old)
    strategies.prepare_for_update(rt, new, old, sub)
    crds.prepare_for_update(rt, new, old)
    unchanged = unchanged_parts(api, rt, new, old, decoded)
    apply_defaults(api, rt, new, unchanged)
    check_valid(api, rt, new, old, opts.warnings, unchanged)
    charges = admit_to_quotas(api, rt, new, old) if not sub else []
    if strategies.spec_changed(rt, new, old):
        meta(new)["generation"] = int(meta(new).get("generation") or 0) + 1
    if not tracked:
        new = ssa.track_update(old, new, type_=api.type_of(rt), manager=opts.manager,
                               api_version=rt.api_version, now=now(), subresource=sub or None)
    omitempty.write_status(rt, new)
    if ssa.same_but_managed_times(new, old):
        return 200, old
    if opts.dry_run:
        return 200, new
    stored = store_update(api, rt, new)
    charge_quotas(api, namespace_of(stored), charges)
    return 200, stored


def store_update(api: Api, rt: ResourceType, new: JsonDict) -> JsonDict:
    """Write an update (that passed every check); the one that empties the finalizers of a terminating object
    removes it."""
    new = stored_form(rt, new)
    if is_terminating(new) and not finalizers_of(new) and not _namespace_finalizers(rt, new):
        return api.store.remove(rt.key, new)
    stored = api.store.update(rt.key, new)
    _record_checked(api, rt, stored)
    return stored


def _namespace_finalizers(rt: ResourceType, obj: JsonDict) -> list[Any]:
    if rt.key != "/namespaces":
        return []
    return list((obj.get("spec") or {}).get("finalizers") or [])


# scale ---------------------------------------------------------------------------------------------------------


def scale_write(api: Api, target: Target, opts: WriteOptions, make_scale: Any) -> ApiResponse:
    rt = target.rt
    with api.store.lock:
        old = existing(api, target)
        current = scale.from_parent(rt, old)
        wanted = make_scale(current)
        if not isinstance(wanted, dict):
            raise bad_request("the body of the request is not a Scale object")
        requested_rv = rv_of(wanted)
        if requested_rv and requested_rv != rv_of(old):
            raise conflict(rt, target.name)
        replicas = scale.replicas_of(rt, target.name, wanted)
        parent = scale.to_parent(rt, copy_json(served_form(rt, old)), replicas)
        _, obj = commit_update(api, target, old, parent, opts)
    return ApiResponse(200, scale.from_parent(rt, obj), warnings=opts.warnings)

"""Validation of object metadata and of the built-in kinds' key rules; each check returns FieldErrors."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from engine.apiserver import quotas, statefulsets
from engine.apiserver.objects import JsonDict, finalizers_of, get_path, is_terminating, owner_refs
from engine.apiserver.resources import ResourceType
from engine.apiserver.selectors import selector_from_label_selector
from engine.apiserver.status import OMIT, ErrorType, FieldError

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL = re.compile(rf"^{_LABEL}$")
DNS1123_SUBDOMAIN = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
               "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
               "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
QUALIFIED_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                 "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                 "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                   "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                   "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
                  "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")

# Service names are DNS-1123 labels since RelaxedServiceNameValidation (GA in 1.37), no longer DNS-1035.
LABEL_NAMED = ("/namespaces", "/services")
DNS1035_NAMED: tuple[str, ...] = ()
PATH_SEGMENT_NAMED = ("rbac.authorization.k8s.io/roles", "rbac.authorization.k8s.io/rolebindings",
                      "rbac.authorization.k8s.io/clusterroles", "rbac.authorization.k8s.io/clusterrolebindings")
WORKLOADS = ("apps/deployments", "apps/replicasets", "apps/statefulsets", "apps/daemonsets")
MAX_ANNOTATIONS = 256 * 1024


def name_errors(rt: ResourceType, name: str, field: str = "metadata.name") -> list[FieldError]:
    """The name rules of the resource: DNS-1123 subdomain unless the kind asks for a label or a path segment."""
    if rt.key in PATH_SEGMENT_NAMED:
        if name in (".", "..") or "/" in name or "%" in name:
            return [FieldError(ErrorType.INVALID, field, name, "may not contain '/' or '%'")]
        return []
    if rt.key in DNS1035_NAMED:
        return _format_errors(field, name, DNS1035_LABEL, DNS1035_MSG, 63)
    if rt.key in LABEL_NAMED:
        return _format_errors(field, name, DNS1123_LABEL, LABEL_MSG, 63)
    return _format_errors(field, name, DNS1123_SUBDOMAIN, SUBDOMAIN_MSG, 253)


def _format_errors(field: str, value: str, pattern: re.Pattern[str], message: str, limit: int) -> list[FieldError]:
    errors = []
    if len(value) > limit:
        errors.append(FieldError(ErrorType.INVALID, field, value, f"must be no more than {limit} characters"))
    if not pattern.match(value):
        errors.append(FieldError(ErrorType.INVALID, field, value, message))
    return errors


def qualified_name_errors(field: str, key: str) -> list[FieldError]:
    prefix, _, name = key.rpartition("/")
    errors = []
    if prefix and (len(prefix) > 253 or not DNS1123_SUBDOMAIN.match(prefix)):
        errors.append(FieldError(ErrorType.INVALID, field, key, "prefix part " + SUBDOMAIN_MSG))
    if not name or len(name) > 63 or not QUALIFIED_NAME.match(name):
        detail = "name part must be no more than 63 characters" if len(name) > 63 else QUALIFIED_MSG
        errors.append(FieldError(ErrorType.INVALID, field, key, detail))
    return errors


def meta_errors(rt: ResourceType, obj: JsonDict) -> list[FieldError]:
    meta = obj.get("metadata") or {}
    errors: list[FieldError] = []
    name = meta.get("name")
    if not name:
        errors.append(FieldError(ErrorType.REQUIRED, "metadata.name", detail="name or generateName is required"))
    else:
        errors += name_errors(rt, str(name))
    errors += _label_errors(meta.get("labels"))
    errors += _annotation_errors(meta.get("annotations"))
    errors += _owner_errors(obj)
    return errors


def _label_errors(labels: Any) -> list[FieldError]:
    errors: list[FieldError] = []
    for key, value in sorted((labels or {}).items()):
        errors += qualified_name_errors("metadata.labels", str(key))
        text = "" if value is None else str(value)
        if len(text) > 63:
            errors.append(FieldError(ErrorType.INVALID, "metadata.labels", text, "must be no more than 63 characters"))
        elif not LABEL_VALUE.match(text):
            errors.append(FieldError(ErrorType.INVALID, "metadata.labels", text, LABEL_VALUE_MSG))
    return errors


def _annotation_errors(annotations: Any) -> list[FieldError]:
    errors: list[FieldError] = []
    total = 0
    for key, value in sorted((annotations or {}).items()):
        errors += qualified_name_errors("metadata.annotations", str(key).lower())
        total += len(str(key)) + len(str(value or ""))
    if total > MAX_ANNOTATIONS:
        errors.append(FieldError(ErrorType.TOO_LONG, "metadata.annotations", OMIT,
                                 f"may not be more than {MAX_ANNOTATIONS} bytes"))
    return errors


def _owner_errors(obj: JsonDict) -> list[FieldError]:
    errors: list[FieldError] = []
    refs = owner_refs(obj)
    for i, ref in enumerate(refs):
        for key in ("apiVersion", "kind", "name", "uid"):
            if not ref.get(key):
                errors.append(FieldError(ErrorType.INVALID, f"metadata.ownerReferences[{i}].{key}", ref.get(key, ""),
                                         f"{key} must not be empty"))
    controllers = [r for r in refs if r.get("controller")]
    if len(controllers) > 1:
        names = ", ".join(f"{r.get('kind')}/{r.get('name')}" for r in controllers)
        errors.append(FieldError(ErrorType.INVALID, "metadata.ownerReferences", refs,
                                 f"Only one reference can have Controller set to true. Found \"true\" in references "
                                 f"for {names}"))
    return errors


def finalizer_errors(new: JsonDict, old: JsonDict) -> list[FieldError]:
    """Once an object is being deleted, its finalizers may only shrink."""
    if not is_terminating(old):
        return []
    added = set(finalizers_of(new)) - set(finalizers_of(old))
    if added:
        return [FieldError(ErrorType.FORBIDDEN, "metadata.finalizers", detail="no new finalizers can be added if the "
                                                                            "object is being deleted, found new "
                                                                            f"finalizers {sorted(added)!r}")]
    return []


# built-in kinds -----------------------------------------------------------------------------------------------


def builtin_errors(rt: ResourceType, obj: JsonDict) -> list[FieldError]:
    if rt.key in WORKLOADS:
        return _workload_errors(rt, obj)
    checks = {
        "/pods": lambda: _pod_spec_errors(obj.get("spec") or {}, "spec"),
        "batch/jobs": lambda: _job_errors(obj.get("spec") or {}, "spec"),
        "batch/cronjobs": lambda: _job_errors(get_path(obj, ["spec", "jobTemplate", "spec"]) or {},
                                              "spec.jobTemplate.spec"),
        "/services": lambda: _service_errors(obj.get("spec") or {}),
        "/configmaps": lambda: _key_errors(obj, ("data", "binaryData")),
        "/secrets": lambda: _key_errors(obj, ("data", "stringData")),
        quotas.QUOTAS: lambda: quotas.hard_errors(obj),
    }
    check = checks.get(rt.key)
    return check() if check else []


def _workload_errors(rt: ResourceType, obj: JsonDict) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errors = statefulsets.spec_errors(spec) if rt.key == "apps/statefulsets" else []
    selector = spec.get("selector")
    labels = get_path(spec, ["template", "metadata", "labels"]) or {}
    if selector is None:
        errors.append(FieldError(ErrorType.REQUIRED, "spec.selector"))
    elif not selector.get("matchLabels") and not selector.get("matchExpressions"):
        errors.append(FieldError(ErrorType.INVALID, "spec.selector", selector,
                                 f"empty selector is invalid for {rt.singular}"))
    elif not selector_from_label_selector(selector).matches({"metadata": {"labels": labels}}):
        errors.append(FieldError(ErrorType.INVALID, "spec.template.metadata.labels", labels,
                                 "`selector` does not match template `labels`"))
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        errors.append(FieldError(ErrorType.INVALID, "spec.replicas", replicas, "must be greater than or equal to 0"))
    template_spec = get_path(spec, ["template", "spec"])
    if template_spec is None:
        errors.append(FieldError(ErrorType.REQUIRED, "spec.template.spec.containers"))
        return errors
    errors += _pod_spec_errors(template_spec, "spec.template.spec")
    policy = template_spec.get("restartPolicy")
    if policy not in (None, "Always"):
        errors.append(FieldError(ErrorType.NOT_SUPPORTED, "spec.template.spec.restartPolicy", policy,
                                 'supported values: "Always"'))
    return errors


def _pod_spec_errors(spec: Mapping[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    containers = spec.get("containers")
    if not containers:
        errors.append(FieldError(ErrorType.REQUIRED, f"{path}.containers"))
    for group in ("initContainers", "containers"):
        seen: set[str] = set()
        for i, container in enumerate(spec.get(group) or []):
            where = f"{path}.{group}[{i}]"
            name = container.get("name") if isinstance(container, dict) else None
            if not name:
                errors.append(FieldError(ErrorType.REQUIRED, f"{where}.name"))
            elif not DNS1123_LABEL.match(str(name)):
                errors.append(FieldError(ErrorType.INVALID, f"{where}.name", name, LABEL_MSG))
            elif name in seen:
                errors.append(FieldError(ErrorType.DUPLICATE, f"{where}.name", name))
            seen.add(str(name))
            if isinstance(container, dict) and not container.get("image"):
                errors.append(FieldError(ErrorType.REQUIRED, f"{where}.image"))
    return errors


def _job_errors(spec: Mapping[str, Any], path: str) -> list[FieldError]:
    template_spec = get_path(spec, ["template", "spec"])
    if template_spec is None:
        return [FieldError(ErrorType.REQUIRED, f"{path}.template.spec.containers")]
    errors = _pod_spec_errors(template_spec, f"{path}.template.spec")
    policy = template_spec.get("restartPolicy")
    if policy is None:
        errors.append(FieldError(ErrorType.REQUIRED, f"{path}.template.spec.restartPolicy",
                                 detail='valid values: "OnFailure", "Never"'))
    elif policy not in ("OnFailure", "Never"):
        errors.append(FieldError(ErrorType.NOT_SUPPORTED, f"{path}.template.spec.restartPolicy", policy,
                                 'supported values: "OnFailure", "Never"'))
    return errors


def _service_errors(spec: Mapping[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    kind = spec.get("type") or "ClusterIP"
    headless = spec.get("clusterIP") == "None"
    ports = spec.get("ports") or []
    if not ports and kind != "ExternalName" and not headless:
        errors.append(FieldError(ErrorType.REQUIRED, "spec.ports"))
    for i, port in enumerate(ports):
        number = port.get("port") if isinstance(port, dict) else None
        if not isinstance(number, int) or not 1 <= number <= 65535:
            errors.append(FieldError(ErrorType.INVALID, f"spec.ports[{i}].port", number,
                                     "must be between 1 and 65535, inclusive"))
    if kind not in ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"):
        errors.append(FieldError(ErrorType.NOT_SUPPORTED, "spec.type", kind,
                                 'supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'))
    return errors


def _key_errors(obj: JsonDict, fields: tuple[str, ...]) -> list[FieldError]:
    errors: list[FieldError] = []
    for field in fields:
        for key in sorted(obj.get(field) or {}):
            if not CONFIG_KEY.match(str(key)) or len(str(key)) > 253:
                errors.append(FieldError(ErrorType.INVALID, f"{field}[{key}]", key, CONFIG_KEY_MSG))
    return errors


# immutable fields on update -------------------------------------------------------------------------------------

def update_errors(rt: ResourceType, new: JsonDict, old: JsonDict) -> list[FieldError]:
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errors: list[FieldError] = []
    if (rt.key in WORKLOADS or rt.key == "batch/jobs") and new_spec.get("selector") != old_spec.get("selector"):
        errors.append(FieldError(ErrorType.INVALID, "spec.selector", new_spec.get("selector"),
                                 "field is immutable"))
    if rt.key == "apps/statefulsets":
        errors += statefulsets.update_errors(new, old)
    if rt.key == "batch/jobs" and new_spec.get("template") != old_spec.get("template") \
            and not old_spec.get("suspend"):
        errors.append(FieldError(ErrorType.INVALID, "spec.template", new_spec.get("template"), "field is immutable"))
    if rt.key in ("/configmaps", "/secrets") and old.get("immutable"):
        for field in ("data", "binaryData", "stringData"):
            if new.get(field) != old.get(field):
                errors.append(FieldError(ErrorType.FORBIDDEN, field,
                                         detail="field is immutable when `immutable` is set"))
    return errors

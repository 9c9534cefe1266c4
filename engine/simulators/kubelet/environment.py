"""A container's environment and command line as the kubelet computes them: envFrom, env, valueFrom, $(VAR).

Pure: ConfigMaps and Secrets come through `lookup(kind, namespace, name)`. A reference the kubelet could not
resolve raises `ConfigError` with its message (the container then waits with reason CreateContainerConfigError).
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

JsonDict = dict[str, Any]
Lookup = Callable[[str, str, str], JsonDict | None]  # kind (ConfigMap or Secret), namespace, name → object
NODE_ALLOCATABLE = {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "102400Mi"}
_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_SUFFIXES: dict[str, int | Decimal] = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}


class ConfigError(Exception):
    """A reference of the container's environment that does not resolve (the kubelet's message)."""


def expand(text: str, env: Mapping[str, str]) -> str:
    """`$(NAME)` replaced by the variable's value when defined (kept as written otherwise); `$$` is `$`."""
    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env[name] if name in env else match.group(0)

    return _REFERENCE.sub(one, text)


def quantity(text: str) -> Decimal:
    match = re.fullmatch(r"([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|)", text.strip())
    if match is None:
        raise ConfigError(f"invalid quantity {text!r}")
    try:
        return Decimal(match.group(1)) * _SUFFIXES[match.group(2)]
    except InvalidOperation as e:
        raise ConfigError(f"invalid quantity {text!r}") from e


def resource_value(container: JsonDict, ref: JsonDict) -> str:
    """A resourceFieldRef (limits.cpu, requests.memory, ...): the value over its divisor, rounded up."""
    group, _, resource = str(ref.get("resource") or "").partition(".")
    resources = container.get("resources") or {}
    value = (resources.get(group) or {}).get(resource)
    if value is None and group == "requests":
        value = (resources.get("limits") or {}).get(resource)
    if value is None:
        value = NODE_ALLOCATABLE.get(resource, "0") if group == "limits" else "0"
    divisor = quantity(str(ref.get("divisor") or "1"))
    return str(math.ceil(quantity(str(value)) / (divisor or 1)))


def field_value(pod: JsonDict, path: str) -> str:
    """A fieldRef the kubelet supports (metadata.name, metadata.labels['x'], status.podIP, ...)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    keyed = re.fullmatch(r"metadata\.(labels|annotations)\['([^']*)'\]", path)
    if keyed:
        return str((meta.get(keyed.group(1)) or {}).get(keyed.group(2), ""))
    simple = {
        "metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"), "metadata.uid": meta.get("uid"),
        "spec.nodeName": spec.get("nodeName"), "spec.serviceAccountName": spec.get("serviceAccountName"),
        "status.hostIP": status.get("hostIP"), "status.podIP": status.get("podIP"),
        "status.hostIPs": ",".join(str(i.get("ip")) for i in status.get("hostIPs") or []),
        "status.podIPs": ",".join(str(i.get("ip")) for i in status.get("podIPs") or []),
    }
    if path not in simple:
        raise ConfigError(f"unsupported fieldRef {path!r}")
    return str(simple[path] or "")


def data_of(obj: JsonDict, kind: str) -> dict[str, str]:
    """The string data of a ConfigMap (data and binaryData) or Secret (decoded data, stringData)."""
    if kind == "Secret":
        return {k: base64.b64decode(str(v)).decode("utf-8", errors="replace")
                for k, v in (obj.get("data") or {}).items()}
    binary = {k: base64.b64decode(str(v)).decode("utf-8", errors="replace")
              for k, v in (obj.get("binaryData") or {}).items()}
    return {**binary, **{k: str(v) for k, v in (obj.get("data") or {}).items()}}


def referenced(lookup: Lookup, kind: str, namespace: str, name: str, optional: bool) -> dict[str, str] | None:
    obj = lookup(kind, namespace, name)
    if obj is None:
        if optional:
            return None
        raise ConfigError(f'{kind.lower()} "{name}" not found')
    return data_of(obj, kind)


def key_value(lookup: Lookup, kind: str, namespace: str, ref: JsonDict) -> str | None:
    name, key, optional = str(ref.get("name") or ""), str(ref.get("key") or ""), bool(ref.get("optional"))
    data = referenced(lookup, kind, namespace, name, optional)
    if data is None:
        return None
    if key not in data:
        if optional:
            return None
        raise ConfigError(f"couldn't find key {key} in {kind} {namespace}/{name}")
    return data[key]


def value_from(pod: JsonDict, container: JsonDict, source: JsonDict, lookup: Lookup) -> str | None:
    namespace = str(pod["metadata"].get("namespace") or "")
    if "configMapKeyRef" in source:
        return key_value(lookup, "ConfigMap", namespace, source["configMapKeyRef"] or {})
    if "secretKeyRef" in source:
        return key_value(lookup, "Secret", namespace, source["secretKeyRef"] or {})
    if "fieldRef" in source:
        return field_value(pod, str((source["fieldRef"] or {}).get("fieldPath") or ""))
    if "resourceFieldRef" in source:
        return resource_value(container, source["resourceFieldRef"] or {})
    raise ConfigError(f"unsupported valueFrom {sorted(source)}")


def environment(pod: JsonDict, container: JsonDict, lookup: Lookup, base: Mapping[str, str]) -> dict[str, str]:
    """The variables the container's process gets: `base` (the image's), then envFrom, then env, in order."""
    env = dict(base)
    namespace = str(pod["metadata"].get("namespace") or "")
    for source in container.get("envFrom") or []:
        ref = source.get("configMapRef") or source.get("secretRef") or {}
        kind = "ConfigMap" if "configMapRef" in source else "Secret"
        data = referenced(lookup, kind, namespace, str(ref.get("name") or ""), bool(ref.get("optional")))
        for key, value in (data or {}).items():
            env[str(source.get("prefix") or "") + key] = value
    for item in container.get("env") or []:
        name = str(item.get("name") or "")
        if "valueFrom" in item:
            found = value_from(pod, container, item.get("valueFrom") or {}, lookup)
            if found is not None:
                env[name] = found
        else:
            env[name] = expand(str(item.get("value") or ""), env)
    return env


def command_line(container: JsonDict, env: Mapping[str, str]) -> list[str]:
    """command + args with $(VAR) expanded (no image entrypoint: the host has none to offer)."""
    words: Sequence[Any] = [*(container.get("command") or []), *(container.get("args") or [])]
    return [expand(str(w), env) for w in words]

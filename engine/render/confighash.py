"""Annotate pod templates with the hash of the ConfigMaps and Secrets they use, to roll them on change."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from typing import Any

from engine.render.stamping import ANNOTATION_CONFIG_HASH

__all__ = ["annotate_config_hashes", "config_refs", "pod_template"]

# (API group, kind) -> path from the object to its pod template ([] means the object is the pod).
_POD_TEMPLATE_PATHS: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "Deployment"): ("spec", "template"),
    ("apps", "StatefulSet"): ("spec", "template"),
    ("apps", "DaemonSet"): ("spec", "template"),
    ("apps", "ReplicaSet"): ("spec", "template"),
    ("", "ReplicationController"): ("spec", "template"),
    ("batch", "Job"): ("spec", "template"),
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "template"),
    ("", "Pod"): (),
}
_CONFIG_KINDS = ("ConfigMap", "Secret")

ConfigKey = tuple[str, str, str]  # kind, namespace, name


def annotate_config_hashes(objects: Iterable[dict[str, Any]]) -> None:
    """Set `kplan.dev/config-hash` on every pod template that uses a ConfigMap or Secret among
    `objects`: the sha256 of the data of exactly those it uses. Changes the objects in place."""
    objects = list(objects)
    digests = {key: digest for key, digest in _config_digests(objects)}
    for obj in objects:
        template = pod_template(obj)
        if template is None:
            continue
        namespace = _namespace(obj)
        used = sorted(key for kind, name in config_refs(template) if (key := (kind, namespace, name)) in digests)
        if not used:
            continue
        combined = "\n".join(f"{kind}/{name}={digests[(kind, ns, name)]}" for kind, ns, name in used)
        metadata = template.setdefault("metadata", {})
        if not isinstance(metadata, dict):
            continue
        annotations = metadata.get("annotations") or {}
        annotations[ANNOTATION_CONFIG_HASH] = hashlib.sha256(combined.encode()).hexdigest()
        metadata["annotations"] = annotations


def pod_template(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The pod template of a workload (the object itself for a Pod), or None."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    path = _POD_TEMPLATE_PATHS.get((group, str(obj.get("kind", ""))))
    if path is None:
        return None
    node: Any = obj
    for field in path:
        node = node.get(field) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def config_refs(template: dict[str, Any]) -> set[tuple[str, str]]:
    """(kind, name) of every ConfigMap and Secret a pod template mounts or reads into env."""
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return set()
    return set(_volume_refs(spec)) | set(_env_refs(spec))


def _volume_refs(spec: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for volume in _dicts(spec.get("volumes")):
        yield from _named("ConfigMap", _get(volume, "configMap", "name"))
        yield from _named("Secret", _get(volume, "secret", "secretName"))
        for source in _dicts(_get(volume, "projected", "sources")):
            yield from _named("ConfigMap", _get(source, "configMap", "name"))
            yield from _named("Secret", _get(source, "secret", "name"))


def _env_refs(spec: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in _dicts(spec.get(field)):
            for env in _dicts(container.get("env")):
                yield from _named("ConfigMap", _get(env, "valueFrom", "configMapKeyRef", "name"))
                yield from _named("Secret", _get(env, "valueFrom", "secretKeyRef", "name"))
            for source in _dicts(container.get("envFrom")):
                yield from _named("ConfigMap", _get(source, "configMapRef", "name"))
                yield from _named("Secret", _get(source, "secretRef", "name"))


def _config_digests(objects: list[dict[str, Any]]) -> Iterator[tuple[ConfigKey, str]]:
    for obj in objects:
        if obj.get("apiVersion") == "v1" and obj.get("kind") in _CONFIG_KINDS:
            data = {field: obj.get(field) for field in ("data", "binaryData", "stringData") if obj.get(field)}
            text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
            key = (str(obj["kind"]), _namespace(obj), str(obj["metadata"]["name"]))
            yield key, hashlib.sha256(text.encode()).hexdigest()


def _namespace(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata")
    return str(metadata.get("namespace") or "") if isinstance(metadata, dict) else ""


def _named(kind: str, name: Any) -> Iterator[tuple[str, str]]:
    if isinstance(name, str) and name:
        yield kind, name


def _get(node: Any, *path: str) -> Any:
    for field in path:
        node = node.get(field) if isinstance(node, dict) else None
    return node


def _dicts(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, dict))

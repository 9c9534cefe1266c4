"""What KUDO did to rendered objects, for converted KUDO packages: its labels, and the shape of Pipe task pods.

KUDO labelled every object it applied with `heritage: kudo`, `kudo.dev/operator` and
`kudo.dev/instance`, on the object and on the pod templates of workloads (KUDO's
CommonLabelPaths), and packages select on them (a PodDisruptionBudget on `kudo.dev/instance`).
A converted template ends in `kudo.finish(...)`, which adds them to what it rendered.

A KUDO Pipe pod writes its files with init containers into a shared volume, and KUDO copied
them out. kplan reads a pipe file as the termination message of a container whose
`terminationMessagePath` is that file, so `finish` adds, per pipe file, a container that
mounts the shared volume elsewhere and copies the file to that path when it ends.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from engine.render.gofmt import GoError

__all__ = ["FUNCTIONS", "finish"]

PIPE_IMAGE = "busybox:1.36"
_WORKLOAD_TEMPLATES = {
    ("apps", "StatefulSet"): (("spec", "template"),),
    ("apps", "Deployment"): (("spec", "template"),),
    ("apps", "ReplicaSet"): (("spec", "template"),),
    ("apps", "DaemonSet"): (("spec", "template"),),
    ("", "ReplicationController"): (("spec", "template"),),
    ("batch", "Job"): (("spec", "template"),),
    ("batch", "CronJob"): (("spec", "jobTemplate", "spec", "template"),),
}


def finish(text: str, instance: str, operator: str, pipe_files: Sequence[str] = ()) -> str:
    """The rendered documents of `text` with KUDO's labels (and, for a Pipe pod, its copy-out containers)."""
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        raise GoError(f"the rendered template is not valid YAML: {exc}") from None
    out = []
    for document in documents:
        if isinstance(document, dict):
            _label(document, {"heritage": "kudo", "kudo.dev/operator": operator, "kudo.dev/instance": instance})
            if pipe_files:
                _pipe_pod(document, instance, pipe_files)
        if document is not None:
            out.append(yaml.safe_dump(document, default_flow_style=False, sort_keys=False, allow_unicode=True))
    return "---\n".join(out)


def _label(obj: dict[str, Any], labels: Mapping[str, str]) -> None:
    _merge_labels(obj, labels)
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    for path in _WORKLOAD_TEMPLATES.get((group, str(obj.get("kind") or "")), ()):
        template = _at(obj, path)
        if isinstance(template, dict):
            _merge_labels(template, labels)
    if obj.get("kind") == "StatefulSet":
        for claim in _at(obj, ("spec", "volumeClaimTemplates")) or []:
            if isinstance(claim, dict):
                _merge_labels(claim, labels)


def _at(obj: Any, path: Sequence[str]) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _merge_labels(obj: dict[str, Any], labels: Mapping[str, str]) -> None:
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = obj["metadata"] = {}
    existing = metadata.get("labels")
    metadata["labels"] = {**labels, **(existing if isinstance(existing, dict) else {})}


def _pipe_pod(pod: dict[str, Any], instance: str, files: Sequence[str]) -> None:
    metadata = pod.setdefault("metadata", {})
    metadata.setdefault("name", f"{instance}-pipe-pod")
    spec = pod.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Never")
    mounts = [m for c in spec.get("initContainers") or [] if isinstance(c, dict) for m in c.get("volumeMounts") or []]
    containers = spec.setdefault("containers", [])
    for file in files:
        mount = _mount_holding(mounts, file)
        source = posixpath.join("/kudo-pipe", posixpath.relpath(file, mount["mountPath"]))
        containers.append({
            "name": "pipe-" + (re.sub(r"[^a-z0-9]+", "-", posixpath.basename(file).lower()).strip("-") or "file"),
            "image": PIPE_IMAGE,
            "command": ["sh", "-c", f"cat {source} > {file}"],
            "terminationMessagePath": file,
            "volumeMounts": [{"name": mount["name"], "mountPath": "/kudo-pipe"}],
        })


def _mount_holding(mounts: Sequence[Mapping[str, Any]], file: str) -> Mapping[str, Any]:
    for mount in sorted(mounts, key=lambda m: -len(str(m.get("mountPath") or ""))):
        path = str(mount.get("mountPath") or "").rstrip("/") + "/"
        if file.startswith(path) and mount.get("name"):
            return mount
    raise GoError(f"pipe file {file} is not in a volume the pod's init containers mount")


FUNCTIONS = {"finish": finish}

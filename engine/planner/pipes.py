"""Pipe tasks: a pod writes files; kplan stores each in a ConfigMap or Secret that later templates read as Pipes.KEY.

Design. A Pipe task applies its pod and waits for it like any object. A pod cannot hand files to
the engine directly and the planner never execs into pods, so each pipe `file` must be the
`terminationMessagePath` of one of the pod's containers: when the container ends, the kubelet
copies that file (up to 4 KiB) into `status.containerStatuses[].state.terminated.message`.
Once the pod Succeeded, the planner reads those messages from the observed pod and applies
`<instance>-<key>` (a ConfigMap with `data[key]`, or a Secret with `data[key]` base64) owned
by the Instance; the task is done when those objects are observed holding the content.
Renders read `Pipes.KEY` back from the observed ConfigMaps and Secrets, so no state lives in
the engine. Until a pipe has produced its value, `Pipes.KEY` renders as "" (the whole plan is
rendered up front); steps that use it must depend on the Pipe step.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from engine.model import Package, PipeFile, Task
from engine.planner.refs import Ref
from engine.planner.stamping import Owner, stamp

__all__ = ["output_ref", "pipe_outputs", "pipe_values"]

Json = dict[str, Any]
Observed = Mapping[Ref, Mapping[str, Any]]


def output_ref(pipe: PipeFile, owner: Owner) -> Ref:
    return Ref("v1", "Secret" if pipe.kind == "Secret" else "ConfigMap", owner.namespace, f"{owner.name}-{pipe.key}")


def pipe_values(pkg: Package, owner: Owner, observed: Observed) -> dict[str, str]:
    """`Pipes` for templates: every pipe key of the package, from its observed object ("" until produced)."""
    pipes = sorted((p for t in pkg.tasks for p in t.pipe), key=lambda p: p.key)
    return {p.key: stored_value(p, observed.get(output_ref(p, owner))) or "" for p in pipes}


def stored_value(pipe: PipeFile, obj: Mapping[str, Any] | None) -> str | None:
    data = (obj or {}).get("data") or {}
    if pipe.key not in data:
        return None
    if pipe.kind != "Secret":
        return str(data[pipe.key])
    try:
        return base64.b64decode(str(data[pipe.key])).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def pipe_outputs(task: Task, pod: Mapping[str, Any], owner: Owner, plan: str, step: str) -> tuple[Json, ...] | str:
    """The ConfigMaps and Secrets holding what a succeeded pod wrote, or why a file is missing."""
    outputs: list[Json] = []
    for pipe in task.pipe:
        content = termination_message(pod, pipe.file)
        if content is None:
            return f"pipe file {pipe.file} is not the terminationMessagePath of a terminated container of the pod"
        outputs.append(stamp(output_object(pipe, content, owner), owner, plan, step))
    return tuple(outputs)


def output_object(pipe: PipeFile, content: str, owner: Owner) -> Json:
    ref = output_ref(pipe, owner)
    meta = {"name": ref.name, "namespace": owner.namespace}
    if ref.kind == "Secret":
        encoded = base64.b64encode(content.encode()).decode()
        return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque", "data": {pipe.key: encoded}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {pipe.key: content}}


def termination_message(pod: Mapping[str, Any], file: str) -> str | None:
    """The message of the terminated container whose terminationMessagePath is `file`; "" when it ended
    without one (the kubelet leaves `message` out for an empty file)."""
    paths = {c.get("name"): c.get("terminationMessagePath") for c in (pod.get("spec") or {}).get("containers") or []}
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if file in (paths.get(status.get("name")), status.get("terminationMessagePath")):
            terminated = (status.get("state") or {}).get("terminated")
            if not isinstance(terminated, Mapping):
                return None
            message = terminated.get("message")
            return str(message) if message is not None else ""
    return None

"""Health of one Kubernetes object, computed from the object alone: one pure function per kind, plus package rules."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engine.model import Expectation, HealthRule

__all__ = ["Health", "Status", "compute", "describe", "path_error"]

Obj = Mapping[str, Any]
EMPTY: Mapping[str, Any] = {}


class Health(StrEnum):
    HEALTHY = "Healthy"
    PROGRESSING = "Progressing"
    FAILED = "Failed"


@dataclass(frozen=True)
class Status:
    """`message` is one line naming the object and what it waits for, or why it failed."""

    health: Health
    message: str


def compute(obj: Obj | None, rules: Sequence[HealthRule] = (), *, ref: str = "") -> Status:
    """Health of `obj` (None: not found, named by `ref`); package `rules` for its group and kind come first."""
    if obj is None:
        return Status(Health.PROGRESSING, f"{ref or 'object'} not found")
    status = by_package_rules(obj, rules) or by_kind(obj)
    if status.health is Health.HEALTHY and as_map(obj.get("metadata")).get("deletionTimestamp"):
        return progressing(obj, "being deleted")
    return status


def describe(obj: Obj) -> str:
    """`Kind namespace/name`, or `Kind name` for a cluster-scoped object."""
    meta = as_map(obj.get("metadata"))
    kind, name, namespace = obj.get("kind") or "Object", meta.get("name") or "?", meta.get("namespace")
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def path_error(path: str) -> str | None:
    """Why a health rule's jsonPath cannot be used, or None when it can (for package verification)."""
    try:
        parse_path(path)
    except InvalidRule as err:
        return str(err)
    return None


# --- results -------------------------------------------------------------------------------------------------------


def healthy(obj: Obj, detail: str) -> Status:
    return Status(Health.HEALTHY, f"{describe(obj)}: {detail}")


def progressing(obj: Obj, detail: str) -> Status:
    return Status(Health.PROGRESSING, f"{describe(obj)}: {detail}")


def failed(obj: Obj, detail: str) -> Status:
    return Status(Health.FAILED, f"{describe(obj)} failed: {detail}")


# --- reading objects -----------------------------------------------------------------------------------------------


def as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else EMPTY


def int_field(mapping: Mapping[str, Any], key: str, default: int = 0) -> int:
    """An int field; absent means `default` (controllers omit zero-valued int fields)."""
    value = mapping.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def spec_of(obj: Obj) -> Mapping[str, Any]:
    return as_map(obj.get("spec"))


def status_of(obj: Obj) -> Mapping[str, Any]:
    return as_map(obj.get("status"))


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def one_line(text: Any) -> str:
    return " ".join(str(text).split())


def conditions_of(obj: Obj) -> dict[str, Mapping[str, Any]]:
    """`status.conditions` by type (the first of each type)."""
    found: dict[str, Mapping[str, Any]] = {}
    conditions = status_of(obj).get("conditions")
    for condition in conditions if isinstance(conditions, list) else []:
        if isinstance(condition, Mapping) and isinstance(condition.get("type"), str):
            found.setdefault(condition["type"], condition)
    return found


def is_true(conditions: Mapping[str, Mapping[str, Any]], kind: str) -> bool:
    return conditions.get(kind, EMPTY).get("status") == "True"


def explain(condition: Mapping[str, Any], fallback: str = "") -> str:
    """`reason: message` of a condition, whichever parts it has."""
    parts = [one_line(condition[k]) for k in ("reason", "message") if condition.get(k)]
    return ": ".join(parts) or fallback


def group_kind(obj: Obj) -> tuple[str, str]:
    api_version = str(obj.get("apiVersion") or "")
    return (api_version.rpartition("/")[0], str(obj.get("kind") or ""))


def stale(obj: Obj, *, strict: bool) -> Status | None:
    """Progressing while the controller has not seen the latest spec; `strict`: a missing observedGeneration counts."""
    generation = int_field(as_map(obj.get("metadata")), "generation")
    observed = status_of(obj).get("observedGeneration")
    if not isinstance(observed, int):
        if not strict or not generation:
            return None
        return progressing(obj, f"waiting for the controller to observe generation {generation}")
    if observed >= generation:
        return None
    return progressing(obj, f"waiting for the controller to observe generation {generation} (observed {observed})")


def condition_current(obj: Obj, condition: Mapping[str, Any]) -> bool:
    """False when the condition says it was computed for an older generation."""
    observed = condition.get("observedGeneration")
    return not isinstance(observed, int) or observed >= int_field(as_map(obj.get("metadata")), "generation")


# --- built-in kinds ------------------------------------------------------------------------------------------------


def deployment(obj: Obj) -> Status:
    if waiting := stale(obj, strict=True):
        return waiting
    progress = conditions_of(obj).get("Progressing", EMPTY)
    if progress.get("status") == "False" and progress.get("reason") == "ProgressDeadlineExceeded":
        return failed(obj, explain(progress))
    spec, status = spec_of(obj), status_of(obj)
    want = int_field(spec, "replicas", 1)
    replicas, updated, available = (int_field(status, k) for k in ("replicas", "updatedReplicas", "availableReplicas"))
    if updated < want:
        return progressing(obj, f"{updated}/{want} replicas updated")
    if replicas > want:
        return progressing(obj, f"{plural(replicas - want, 'old replica')} pending termination")
    if available < want:
        return progressing(obj, f"{available}/{want} replicas available")
    return healthy(obj, f"{available}/{want} replicas available")


def statefulset(obj: Obj) -> Status:
    if waiting := stale(obj, strict=True):
        return waiting
    spec, status = spec_of(obj), status_of(obj)
    want, ready = int_field(spec, "replicas", 1), int_field(status, "readyReplicas")
    replicas = int_field(status, "replicas")
    if ready < want:
        return progressing(obj, f"{ready}/{want} replicas ready")
    if replicas > want:
        return progressing(obj, f"{plural(replicas - want, 'old replica')} pending termination")
    if rollout := statefulset_rollout(obj, want):
        return progressing(obj, rollout)
    return healthy(obj, f"{ready}/{want} replicas ready")


def statefulset_rollout(obj: Obj, want: int) -> str:
    """What a StatefulSet's rolling update still has to do ("" when done or not rolling)."""
    strategy, status = as_map(spec_of(obj).get("updateStrategy")), status_of(obj)
    if strategy.get("type") == "OnDelete":
        return ""
    updated = int_field(status, "updatedReplicas")
    partition = int_field(as_map(strategy.get("rollingUpdate")), "partition")
    if partition > 0:
        target = max(want - partition, 0)
        return f"{updated}/{target} replicas updated (partition {partition})" if updated < target else ""
    revision = status.get("updateRevision")
    if status.get("currentRevision") != revision:
        return f"{updated}/{want} replicas updated to revision {revision}"
    return ""


def daemonset(obj: Obj) -> Status:
    if waiting := stale(obj, strict=True):
        return waiting
    status = status_of(obj)
    desired, updated = int_field(status, "desiredNumberScheduled"), int_field(status, "updatedNumberScheduled")
    available = int_field(status, "numberAvailable")
    on_delete = as_map(spec_of(obj).get("updateStrategy")).get("type") == "OnDelete"
    if updated < desired and not on_delete:
        return progressing(obj, f"{updated}/{desired} pods updated")
    if available < desired:
        return progressing(obj, f"{available}/{desired} pods available")
    return healthy(obj, f"{available}/{desired} pods available")


def replicaset(obj: Obj) -> Status:
    if waiting := stale(obj, strict=True):
        return waiting
    failure = conditions_of(obj).get("ReplicaFailure", EMPTY)
    if failure.get("status") == "True":
        return progressing(obj, explain(failure, "ReplicaFailure"))
    want, status = int_field(spec_of(obj), "replicas", 1), status_of(obj)
    available, replicas = int_field(status, "availableReplicas"), int_field(status, "replicas")
    if available < want:
        return progressing(obj, f"{available}/{want} replicas available")
    if replicas > want:
        return progressing(obj, f"{plural(replicas - want, 'extra replica')} pending termination")
    return healthy(obj, f"{available}/{want} replicas available")


def job(obj: Obj) -> Status:
    conditions = conditions_of(obj)
    if is_true(conditions, "Failed"):
        return failed(obj, explain(conditions["Failed"], "Failed"))
    done = job_progress(obj)
    if is_true(conditions, "Complete"):
        return healthy(obj, f"{done}, complete")
    if is_true(conditions, "FailureTarget"):
        why = explain(conditions["FailureTarget"], "FailureTarget")
        return progressing(obj, f"{done}; failing ({why}), waiting for its pods to terminate")
    if spec_of(obj).get("suspend") is True or is_true(conditions, "Suspended"):
        return progressing(obj, f"{done}; suspended")
    unschedulable = [c for c in conditions.values() if c.get("reason") == "Unschedulable"]
    if unschedulable:
        return progressing(obj, f"{done}; pods cannot be scheduled: {explain(unschedulable[0])}")
    return progressing(obj, done)


def job_progress(obj: Obj) -> str:
    """`n/m succeeded` (the API server defaults completions to 1 when neither it nor parallelism is set)."""
    spec, status = spec_of(obj), status_of(obj)
    succeeded, fails = int_field(status, "succeeded"), int_field(status, "failed")
    completions = spec.get("completions", None if "parallelism" in spec else 1)
    done = f"{succeeded}/{completions} succeeded" if isinstance(completions, int) else f"{succeeded} succeeded"
    return f"{done}, {fails} failed" if fails else done


def pod(obj: Obj) -> Status:
    status, conditions = status_of(obj), conditions_of(obj)
    phase = status.get("phase") or "Pending"
    if phase == "Succeeded":
        return healthy(obj, "Succeeded")
    if phase == "Failed":
        return failed(obj, pod_failure(status))
    if phase == "Running" and is_true(conditions, "Ready"):
        return healthy(obj, "Running and ready")
    scheduled = conditions.get("PodScheduled", EMPTY)
    if scheduled.get("status") == "False":
        return progressing(obj, f"cannot be scheduled: {explain(scheduled, 'Unschedulable')}")
    waiting = pod_waiting(status)
    state = "Running, not ready" if phase == "Running" else phase
    return progressing(obj, f"{state}; {waiting}" if waiting else state)


def pod_failure(status: Mapping[str, Any]) -> str:
    """Why a pod failed: its own reason, else the first container that exited non-zero."""
    if status.get("reason") or status.get("message"):
        return explain(status)
    for container in containers_of(status):
        ended = as_map(as_map(container.get("state")).get("terminated"))
        if int_field(ended, "exitCode"):
            why = f" ({one_line(ended['reason'])})" if ended.get("reason") else ""
            return f"container {container.get('name')} exited with code {ended['exitCode']}{why}"
    return "phase Failed"


def pod_waiting(status: Mapping[str, Any]) -> str:
    """`container NAME: reason: message` for the first container waiting on something other than creation."""
    for container in containers_of(status):
        waiting = as_map(as_map(container.get("state")).get("waiting"))
        if waiting.get("reason") and waiting.get("reason") != "ContainerCreating":
            return f"container {container.get('name')}: {explain(waiting)}"
    return ""


def containers_of(status: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    for key in ("initContainerStatuses", "containerStatuses"):
        items = status.get(key)
        found.extend(c for c in (items if isinstance(items, list) else []) if isinstance(c, Mapping))
    return found


def persistentvolumeclaim(obj: Obj) -> Status:
    phase = status_of(obj).get("phase") or "Pending"
    if phase == "Bound":
        return healthy(obj, "Bound")
    if phase == "Lost":
        return failed(obj, "Lost: its volume no longer exists")
    return progressing(obj, f"{phase}, waiting to be bound")


def service(obj: Obj) -> Status:
    kind = spec_of(obj).get("type") or "ClusterIP"
    if kind != "LoadBalancer":
        return healthy(obj, kind)
    ingress = as_map(status_of(obj).get("loadBalancer")).get("ingress")
    if not isinstance(ingress, list) or not ingress:
        return progressing(obj, "waiting for a load balancer address")
    first = as_map(ingress[0])
    return healthy(obj, f"load balancer at {first.get('ip') or first.get('hostname') or '?'}")


def customresourcedefinition(obj: Obj) -> Status:
    conditions = conditions_of(obj)
    names = conditions.get("NamesAccepted", EMPTY)
    if names.get("status") == "False":
        return failed(obj, explain(names, "names not accepted"))
    if is_true(conditions, "Established"):
        return healthy(obj, "Established")
    reason = explain(conditions.get("Established", EMPTY))
    return progressing(obj, f"not established yet ({reason})" if reason else "not established yet")


def namespace(obj: Obj) -> Status:
    phase = status_of(obj).get("phase")
    if phase == "Active":
        return healthy(obj, "Active")
    return progressing(obj, str(phase) if phase else "no phase yet")


def generic(obj: Obj) -> Status:
    """kstatus conventions for any other object: observedGeneration, then Stalled/Failed, Reconciling, Ready."""
    if waiting := stale(obj, strict=False):
        return waiting
    conditions = conditions_of(obj)
    for kind in ("Stalled", "Failed"):
        if is_true(conditions, kind) and condition_current(obj, conditions[kind]):
            return failed(obj, explain(conditions[kind], kind))
    if is_true(conditions, "Reconciling"):
        return progressing(obj, explain(conditions["Reconciling"], "Reconciling"))
    for kind in ("Ready", "Available"):
        if kind in conditions:
            return readiness(obj, kind, conditions[kind])
    return healthy(obj, "exists")


def readiness(obj: Obj, kind: str, condition: Mapping[str, Any]) -> Status:
    state = condition.get("status") or "Unknown"
    if state != "True":
        why = explain(condition)
        return progressing(obj, f"{kind}={state}: {why}" if why else f"{kind}={state}")
    if not condition_current(obj, condition):
        return progressing(obj, f"{kind} condition is from generation {condition['observedGeneration']}")
    return healthy(obj, f"{kind}")


BUILT_IN: Mapping[tuple[str, str], Callable[[Obj], Status]] = {
    ("apps", "Deployment"): deployment,
    ("apps", "StatefulSet"): statefulset,
    ("apps", "DaemonSet"): daemonset,
    ("apps", "ReplicaSet"): replicaset,
    ("batch", "Job"): job,
    ("", "Pod"): pod,
    ("", "PersistentVolumeClaim"): persistentvolumeclaim,
    ("", "Service"): service,
    ("", "Namespace"): namespace,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): customresourcedefinition,
}


def by_kind(obj: Obj) -> Status:
    return BUILT_IN.get(group_kind(obj), generic)(obj)


# --- package rules -------------------------------------------------------------------------------------------------


class InvalidRule(ValueError):
    """A health rule that can never be evaluated (the package verifier should have caught it)."""


@dataclass(frozen=True)
class Outcome:
    """One expectation checked against an object: `wanted` and `actual` are short texts for messages."""

    met: bool
    wanted: str
    actual: str


def by_package_rules(obj: Obj, rules: Sequence[HealthRule]) -> Status | None:
    """The package's verdict, or None when no rule with a healthy expectation covers this kind."""
    matching = [r for r in rules if ("" if r.group == "core" else r.group, r.kind) == group_kind(obj)]
    if not matching:
        return None
    try:
        return judge(obj, matching)
    except InvalidRule as err:
        return failed(obj, f"health rule for {matching[0].kind} is invalid: {err}")


def judge(obj: Obj, rules: Sequence[HealthRule]) -> Status | None:
    if waiting := stale(obj, strict=False):
        return waiting
    for rule in rules:
        if rule.failed and (outcome := check(obj, rule.failed)).met:
            return failed(obj, outcome.actual)
    wanted = [rule.healthy for rule in rules if rule.healthy]
    if not wanted:
        return None
    outcomes = [check(obj, expectation) for expectation in wanted]
    for outcome in outcomes:
        if not outcome.met:
            return progressing(obj, f"waiting for {outcome.wanted} (now {outcome.actual})")
    return healthy(obj, ", ".join(o.wanted for o in outcomes))


def check(obj: Obj, expectation: Expectation) -> Outcome:
    if expectation.condition:
        return check_condition(obj, expectation.condition, expectation.status)
    if expectation.json_path:
        return check_path(obj, expectation.json_path, expectation.equals)
    raise InvalidRule("an expectation needs a condition or a jsonPath")


def check_condition(obj: Obj, kind: str, status: str) -> Outcome:
    wanted = f"{kind}={status}"
    condition = conditions_of(obj).get(kind)
    if condition is None:
        return Outcome(False, wanted, f"no {kind} condition")
    actual = f"{kind}={condition.get('status') or 'Unknown'}"
    why = explain(condition)
    if not condition_current(obj, condition):
        return Outcome(False, wanted, f"{actual} from generation {condition['observedGeneration']}")
    return Outcome(condition.get("status") == status, wanted, f"{actual}: {why}" if why else actual)


def check_path(obj: Obj, path: str, equals: Any) -> Outcome:
    """The value at `path` equals `equals`; with no `equals`, it is present and truthy."""
    value = resolve(obj, parse_path(path))
    wanted = f"{path} = {text(equals)}" if equals is not None else f"{path} set"
    actual = f"{path} unset" if value is MISSING else f"{path} = {text(value)}"
    met = value is not MISSING and (bool(value) if equals is None else same(value, equals))
    return Outcome(met, wanted, actual)


def text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else one_line(value)


def same(value: Any, expected: Any) -> bool:
    """Equality that forgives YAML typing: 3 == "3", true == "true", but never 1 == true."""
    scalars = (str, int, float, bool, type(None))
    if isinstance(value, scalars) and isinstance(expected, scalars):
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (value, expected))
        return value == expected if numbers else text(value) == text(expected)
    return bool(value == expected)


# --- jsonPath: dotted keys, [index], ['key'] and [?(@.field=="value")] ----------------------------------------------


@dataclass(frozen=True)
class Key:
    name: str


@dataclass(frozen=True)
class Index:
    position: int


@dataclass(frozen=True)
class Filter:
    field: tuple[Key, ...]
    value: str


Segment = Key | Index | Filter
MISSING: Any = object()
SEGMENT = re.compile(
    r"""\.(?P<name>(?:[^.\[\\]|\\.)+)
      | \[(?P<index>-?\d+)\]
      | \[(?P<quote>['"])(?P<key>.*?)(?P=quote)\]
      | \[\?\(\s*@\.(?P<field>[\w.-]+)\s*==\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^)\s]+))\s*\)\]""",
    re.VERBOSE,
)


def parse_path(path: str) -> tuple[Segment, ...]:
    body = path.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    body = body.removeprefix("$")
    if body and body[0] not in ".[":
        body = "." + body
    if not body:
        raise InvalidRule(f"jsonPath {path!r} is empty")
    segments: list[Segment] = []
    position = 0
    while position < len(body):
        match = SEGMENT.match(body, position)
        if match is None:
            raise InvalidRule(f"jsonPath {path!r} cannot be read at {body[position:]!r}")
        segments.append(segment(match))
        position = match.end()
    return tuple(segments)


def segment(match: re.Match[str]) -> Segment:
    if match["name"] is not None:
        return Key(re.sub(r"\\(.)", r"\1", match["name"]))
    if match["index"] is not None:
        return Index(int(match["index"]))
    if match["key"] is not None:
        return Key(match["key"])
    value = next(v for v in (match["dq"], match["sq"], match["bare"]) if v is not None)
    return Filter(tuple(Key(k) for k in match["field"].split(".")), value)


def resolve(value: Any, segments: Sequence[Segment]) -> Any:
    """The value the path leads to, or MISSING."""
    for part in segments:
        value = step(value, part)
        if value is MISSING:
            break
    return value


def step(value: Any, part: Segment) -> Any:
    match part:
        case Key(name):
            return value.get(name, MISSING) if isinstance(value, Mapping) else MISSING
        case Index(position):
            in_range = isinstance(value, list) and -len(value) <= position < len(value)
            return value[position] if in_range else MISSING
        case Filter(field, expected):
            items = value if isinstance(value, list) else []
            return next((item for item in items if same(resolve(item, field), expected)), MISSING)
    return MISSING  # pragma: no cover - the match is exhaustive

"""Annotations through which a test steers the simulators; none of them exists on a real cluster.

- `devcluster.kplan.dev/duration`: how long the simulated work takes, as a Go duration ("2s", "500ms", "1m30s";
  default "0s"). A pod with restartPolicy Never/OnFailure (a Job's pod) runs that long, then ends; any other pod
  (those of Deployments, ReplicaSets, StatefulSets, DaemonSets) runs that long before it is ready. A claim waits
  that long before it is bound.
- `devcluster.kplan.dev/fail: "true"`: the work fails. Pods exit with code 1: Failed (Never/OnFailure), so their
  Job fails with BackoffLimitExceeded, or CrashLoopBackOff (Always), so their workload never becomes ready and a
  Deployment reports ProgressDeadlineExceeded after its progressDeadlineSeconds.
- `devcluster.kplan.dev/termination-message-<container>`: the termination message of that container when it ends
  (what it would have written to its terminationMessagePath), e.g. the output of a task that pipes it on.
- `devcluster.kplan.dev/output-<container>`: what that container prints when it starts (`kubectl logs` shows it).

They may sit on a pod, on a workload (Job, Deployment, ReplicaSet, StatefulSet, DaemonSet) or on its pod
template (the template wins); workloads pass theirs on to the pods they create (a Deployment through its
ReplicaSet).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

PREFIX = "devcluster.kplan.dev/"
DURATION = PREFIX + "duration"
FAIL = PREFIX + "fail"
TERMINATION_MESSAGE = PREFIX + "termination-message-"
OUTPUT = PREFIX + "output-"

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_duration(text: str) -> float | None:
    """Seconds in a Go duration string ("1h2m", "1.5s", "300ms", "0"); None if it is not one."""
    text = text.strip()
    if text in ("0", ""):
        return 0.0 if text == "0" else None
    total, pos = 0.0, 0
    for match in _PART.finditer(text):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    return total if pos == len(text) else None


def annotations_of(obj: Mapping[str, Any]) -> dict[str, str]:
    value = (obj.get("metadata") or {}).get("annotations") or {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def of(obj: Mapping[str, Any]) -> dict[str, str]:
    """The simulator annotations of an object, those on its pod template taking precedence."""
    template = (obj.get("spec") or {}).get("template") or {}
    own = annotations_of(obj)
    merged = {**own, **annotations_of(template)} if isinstance(template, dict) else own
    return {k: v for k, v in merged.items() if k.startswith(PREFIX)}


def duration_of(obj: Mapping[str, Any]) -> float:
    """The simulated duration in seconds (0 when absent or unreadable)."""
    return parse_duration(of(obj).get(DURATION, "0s")) or 0.0


def fails(obj: Mapping[str, Any]) -> bool:
    return of(obj).get(FAIL, "").strip().lower() == "true"


def termination_message(obj: Mapping[str, Any], container: str) -> str:
    return of(obj).get(TERMINATION_MESSAGE + container, "")


def output(obj: Mapping[str, Any], container: str) -> str:
    return of(obj).get(OUTPUT + container, "")

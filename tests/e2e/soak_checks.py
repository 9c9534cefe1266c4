"""The invariants of the kills soak, shared by tests/e2e/test_soak_kills.py and bench/soak.py: given the changes
committed while Instances converged (kind, name, type, object, in commit order), what went wrong, as sentences."""

from __future__ import annotations

import io
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import yaml

from engine.cli.main import main

PACKAGES = Path(__file__).parent / "packages"

Change = tuple[str, str, str, Mapping[str, Any]]  # (type, kind, name, object)


def rendered(package: str, name: str, namespace: str) -> set[tuple[str, str]]:
    """(kind, name) of every object `kplan template` renders for Instance `name` of `package`."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["template", str(PACKAGES / package), "--instance", name, "-n", namespace, "-o", "json"]) == 0
    return {(d["kind"], d["metadata"]["name"]) for d in json.loads(out.getvalue())}


def deploy_plan(package: str) -> dict[str, Any]:
    operator = yaml.safe_load((PACKAGES / package / "operator.yaml").read_text(encoding="utf-8"))
    plan: dict[str, Any] = operator["plans"]["deploy"]
    return plan


def serial_order_kept(status: Mapping[str, Any], plan: Mapping[str, Any]) -> bool:
    """No step of a serial phase is COMPLETE while one before it is not."""
    strategies = {p["name"]: p.get("strategy", "serial") for p in plan["phases"]}
    for phase in (status.get("plans") or {}).get("deploy", {}).get("phases") or []:
        if strategies.get(phase.get("name")) != "serial":
            continue
        unfinished = False
        for step in phase.get("steps") or []:
            if step.get("status") == "COMPLETE" and unfinished:
                return False
            unfinished = unfinished or step.get("status") != "COMPLETE"
    return True


def problems(instances: Mapping[str, str], namespace: str, history: Iterable[Change]) -> list[str]:
    """Objects added more than once, deleted, or given a second uid (a Job re-run); deploy plans with more than
    one uid; statuses with a serial step COMPLETE before its predecessors. `instances`: name -> package."""
    history = list(history)
    found: list[str] = []
    for name, package in sorted(instances.items()):
        for kind, obj_name in sorted(rendered(package, name, namespace)):
            of_object = [c for c in history if c[1] == kind and c[2] == obj_name]
            types = [c[0] for c in of_object]
            uids = {str(c[3]["metadata"].get("uid")) for c in of_object}
            if types.count("ADDED") != 1 or "DELETED" in types or len(uids) != 1:
                found.append(f"{kind} {obj_name}: {types.count('ADDED')} added, {types.count('DELETED')} deleted, "
                             f"{len(uids)} uids")
    plan_uids: dict[str, set[str]] = defaultdict(set)
    plans = {package: deploy_plan(package) for package in set(instances.values())}
    for _, kind, name, obj in history:
        if kind != "Instance" or name not in instances:
            continue
        status = obj.get("status") or {}
        uid = ((status.get("plans") or {}).get("deploy") or {}).get("uid")
        if uid:
            plan_uids[name].add(str(uid))
        if not serial_order_kept(status, plans[instances[name]]):
            found.append(f"Instance {name}: a serial step COMPLETE before its predecessors")
    found += [f"Instance {name}: {len(plan_uids[name])} deploy plan uids" for name in instances
              if len(plan_uids[name]) != 1]
    return found


def job_reruns(history: Iterable[Change]) -> list[str]:
    """Jobs that ran more Pods than their retries allow (backoffLimit + 1 each), counted from every Pod uid the
    feed saw with the Job's `job-name` label, not from the end state."""
    limits: dict[str, int] = {}
    pods: dict[str, set[str]] = defaultdict(set)
    for _, kind, name, obj in history:
        if kind == "Job":
            limits[name] = int((obj.get("spec") or {}).get("backoffLimit", 6)) + 1
        elif kind == "Pod":
            job = ((obj.get("metadata") or {}).get("labels") or {}).get("job-name")
            if job:
                pods[str(job)].add(str(obj["metadata"].get("uid")))
    return [f"Job {job}: {len(uids)} Pods run, its retries allow {limits[job]}"
            for job, uids in sorted(pods.items()) if job in limits and len(uids) > limits[job]]

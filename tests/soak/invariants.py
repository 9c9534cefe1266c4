"""The invariants of the kills soak (issue 12), shared by tests/e2e/test_soak_kills.py, the load soak and
bench/soak.py: given the changes the cluster committed while Instances converged (type, kind, name, object, in
commit order), what went wrong, as sentences. Checked:

- every Instance (child Instances of Operator tasks too) ends with its deploy plan COMPLETE;
- every object `kplan template` renders for an Instance (recursively for the child Instances it renders, and the
  ConfigMap each Pipe task stores) is added exactly once, never deleted, with one uid;
- no Job ran more pods than `backoffLimit + 1` (pods counted by the Job uid they name, from the change feed);
- no object of an Instance was deleted, except the one a plan deletes (none of the soak's packages does);
- status history: no step COMPLETE before the steps of its serial phase before it, nor before every earlier
  phase of a serial plan is COMPLETE; a step COMPLETE in a plan run never goes back within that run; each
  Instance's deploy plan keeps one uid, and no two Instances share a plan uid.
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from engine.cli.main import main

PACKAGES = Path(__file__).resolve().parents[1] / "e2e" / "packages"

Change = tuple[str, str, str, Mapping[str, Any]]  # (type, kind, name, object)
Json = dict[str, Any]


@dataclass(frozen=True)
class Expected:
    """What one Instance should have made: its objects (rendered), and the plan its status follows."""

    instance: str
    package: str
    objects: tuple[Json, ...]


def template(package: str, name: str, namespace: str, parameters: Mapping[str, Any] | None = None) -> list[Json]:
    """Every object `kplan template` renders for Instance `name` of tests/e2e/packages/`package`."""
    values = [arg for key, value in sorted((parameters or {}).items()) for arg in ("-p", f"{key}={value}")]
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["template", str(PACKAGES / package), "--instance", name, "-n", namespace, "-o", "json", *values])
    assert code == 0, f"kplan template {package} failed"
    documents: list[Json] = json.loads(out.getvalue())
    return documents


def expected(instances: Mapping[str, str], namespace: str) -> list[Expected]:
    """The Instances named (name -> package) and the child Instances their templates render, with their objects."""
    found: list[Expected] = []
    todo = [(name, package, None) for name, package in sorted(instances.items())]
    while todo:
        name, package, parameters = todo.pop(0)
        objects = template(package, name, namespace, parameters)
        for task in operator(package).get("tasks") or []:
            for pipe in (task.get("spec") or {}).get("pipe") or [] if task.get("kind") == "Pipe" else []:
                objects.append({"kind": pipe["kind"], "metadata": {"name": f"{name}-{pipe['key']}"}})
        found.append(Expected(name, package, tuple(objects)))
        for obj in objects:
            if obj["kind"] == "Instance":
                child_package = obj["spec"]["operatorVersion"]["name"].rsplit("-", 1)[0]
                todo.append((obj["metadata"]["name"], child_package, obj["spec"].get("parameters")))
    return found


def operator(package: str) -> Json:
    loaded: Json = yaml.safe_load((PACKAGES / package / "operator.yaml").read_text(encoding="utf-8"))
    return loaded


def problems(instances: Mapping[str, str], namespace: str, history: Iterable[Change]) -> list[str]:
    """Every broken invariant of the Instances `instances` (name -> package) and the child Instances they make,
    judged from `history`, the changes committed in their namespace in commit order."""
    history = list(history)
    found: list[str] = []
    wanted = expected(instances, namespace)
    for one in wanted:
        found += objects_once(one, history)
        found += jobs_within_retries(one, history)
    found += status_history({e.instance: operator(e.package) for e in wanted}, history)
    return found


def objects_once(one: Expected, history: list[Change]) -> list[str]:
    found = []
    for obj in one.objects:
        kind, name = obj["kind"], obj["metadata"]["name"]
        of_object = [c for c in history if c[1] == kind and c[2] == name]
        types = [c[0] for c in of_object]
        uids = {str(c[3]["metadata"].get("uid")) for c in of_object}
        if types.count("ADDED") != 1 or "DELETED" in types or len(uids) != 1:
            found.append(f"{kind} {name}: {types.count('ADDED')} added, {types.count('DELETED')} deleted, "
                         f"{len(uids)} uids")
    return found


def jobs_within_retries(one: Expected, history: list[Change]) -> list[str]:
    """No Job of the Instance started more pods than its backoffLimit allows (one run plus the retries)."""
    found = []
    for obj in one.objects:
        if obj["kind"] != "Job":
            continue
        name, limit = obj["metadata"]["name"], int((obj.get("spec") or {}).get("backoffLimit", 6))
        uids = {str(c[3]["metadata"].get("uid")) for c in history if c[1] == "Job" and c[2] == name}
        pods = {str(c[3]["metadata"].get("uid")) for c in history if c[1] == "Pod" and owner_uids(c[3]) & uids}
        if len(pods) > limit + 1:
            found.append(f"Job {name}: {len(pods)} pods ran, backoffLimit {limit} allows {limit + 1}")
    return found


def owner_uids(obj: Mapping[str, Any]) -> set[str]:
    return {str(ref.get("uid")) for ref in (obj.get("metadata") or {}).get("ownerReferences") or []}


def status_history(operators: Mapping[str, Json], history: list[Change]) -> list[str]:
    """The recorded statuses of every Instance, in order: plan order kept, no step going back, one plan uid each,
    and the last one COMPLETE."""
    found: list[str] = []
    uids: dict[str, set[str]] = defaultdict(set)
    last: dict[str, Json] = {}
    done: dict[tuple[str, str, str], bool] = {}  # (instance, plan uid, step path) -> seen COMPLETE
    for _, kind, name, obj in history:
        if kind != "Instance" or name not in operators:
            continue
        deploy = ((obj.get("status") or {}).get("plans") or {}).get("deploy") or {}
        last[name] = deploy
        if not deploy.get("uid"):
            continue
        uid = str(deploy["uid"])
        uids[name].add(uid)
        problem = plan_order(deploy, operators[name]["plans"]["deploy"])
        if problem:
            found.append(f"Instance {name}: {problem}")
        for phase in deploy.get("phases") or []:
            for step in phase.get("steps") or []:
                key = (name, uid, f"{phase.get('name')}/{step.get('name')}")
                if step.get("status") == "COMPLETE":
                    done[key] = True
                elif done.get(key):
                    found.append(f"Instance {name}: step {key[2]} went from COMPLETE back to {step.get('status')}")
                    done[key] = False
    for name in operators:
        if last.get(name, {}).get("status") != "COMPLETE":
            found.append(f"Instance {name}: deploy plan ended {last.get(name, {}).get('status') or 'never run'}")
        if len(uids[name]) != 1:
            found.append(f"Instance {name}: {len(uids[name])} deploy plan uids")
    owners: dict[str, list[str]] = defaultdict(list)
    for name, of_name in uids.items():
        for uid in of_name:
            owners[uid].append(name)
    found += [f"plan uid {uid} shared by Instances {', '.join(sorted(names))}"
              for uid, names in owners.items() if len(names) > 1]
    return found


def plan_order(status: Mapping[str, Any], plan: Mapping[str, Any]) -> str:
    """Why a recorded plan status breaks the plan's order ('' when it does not): a step COMPLETE while a step
    before it in a serial phase is not, or while an earlier phase of a serial plan is not COMPLETE."""
    strategies = {p["name"]: p.get("strategy", "serial") for p in plan["phases"]}
    serial_plan = plan.get("strategy", "serial") == "serial"
    earlier_unfinished = ""
    for phase in status.get("phases") or []:
        unfinished = ""
        for step in phase.get("steps") or []:
            complete = step.get("status") == "COMPLETE"
            if complete and earlier_unfinished:
                return f"step {phase.get('name')}/{step.get('name')} COMPLETE before phase {earlier_unfinished}"
            if complete and unfinished and strategies.get(phase.get("name")) == "serial":
                return f"step {phase.get('name')}/{step.get('name')} COMPLETE before step {unfinished}"
            unfinished = unfinished or ("" if complete else str(step.get("name")))
        if serial_plan and phase.get("status") != "COMPLETE" and not earlier_unfinished:
            earlier_unfinished = str(phase.get("name"))
    return ""

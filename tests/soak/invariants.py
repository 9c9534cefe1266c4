"""The invariants of the kills soak (issue 12), shared by tests/e2e/test_soak_kills.py, the load soak and
bench/soak.py: given the changes the cluster committed while Instances converged (type, kind, name, object, in
commit order), what went wrong, as sentences. Checked:

- every Instance (child Instances of Operator tasks too) ends with its last plan COMPLETE;
- every object `kplan template` renders for an Instance (recursively for the child Instances it renders, and the
  ConfigMap each Pipe task stores) is added exactly once, never deleted, with one uid; an Instance changed by
  `kplan update` is rendered with its new values and its objects are changed in place;
- an uninstalled Instance is gone, and each of its objects was deleted once, after it was added, never re-added;
- no Job ran more pods than `backoffLimit + 1` (pods counted by the Job uid they name, from the change feed);
- status history: no step COMPLETE before the steps of its serial phase before it, nor before every earlier
  phase of a serial plan is COMPLETE; a step COMPLETE in a plan run never goes back within that run; each plan
  ran as often as it was triggered (one uid per run: the deploy plan once, the update plan once per update),
  and no two Instances share a plan uid.
"""

from __future__ import annotations

import io
import json
import re
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
    runs: tuple[tuple[str, int], ...] = (("deploy", 1),)  # how many uids each plan should have had


def template(package: str, name: str, namespace: str, parameters: Mapping[str, Any] | None = None) -> list[Json]:
    """Every object `kplan template` renders for Instance `name` of tests/e2e/packages/`package`."""
    values = [arg for key, value in sorted((parameters or {}).items()) for arg in ("-p", f"{key}={value}")]
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["template", str(PACKAGES / package), "--instance", name, "-n", namespace, "-o", "json", *values])
    assert code == 0, f"kplan template {package} failed"
    documents: list[Json] = json.loads(out.getvalue())
    return documents


def expected(instances: Mapping[str, str], namespace: str,
             updated: Mapping[str, Mapping[str, Any]] | None = None) -> list[Expected]:
    """The Instances named (name -> package) and the child Instances their templates render, with their objects;
    `updated`: the values `kplan update` gave some of them (once each)."""
    found: list[Expected] = []
    updated = updated or {}
    todo = [(name, package, updated.get(name)) for name, package in sorted(instances.items())]
    while todo:
        name, package, parameters = todo.pop(0)
        objects = template(package, name, namespace, parameters)
        runs: tuple[tuple[str, int], ...] = (("deploy", 1),)
        if name in updated:
            runs = (("deploy", 1), ("update", 1)) if "update" in operator(package)["plans"] else (("deploy", 2),)
        for task in operator(package).get("tasks") or []:
            for pipe in (task.get("spec") or {}).get("pipe") or [] if task.get("kind") == "Pipe" else []:
                objects.append({"kind": pipe["kind"], "metadata": {"name": f"{name}-{pipe['key']}"}})
        found.append(Expected(name, package, tuple(objects), runs))
        for obj in objects:
            if obj["kind"] == "Instance":
                child_package = obj["spec"]["operatorVersion"]["name"].rsplit("-", 1)[0]
                todo.append((obj["metadata"]["name"], child_package, obj["spec"].get("parameters")))
    return found


def operator(package: str) -> Json:
    loaded: Json = yaml.safe_load((PACKAGES / package / "operator.yaml").read_text(encoding="utf-8"))
    return loaded


def problems(instances: Mapping[str, str], namespace: str, history: Iterable[Change], *,
             updated: Mapping[str, Mapping[str, Any]] | None = None, uninstalled: Iterable[str] = ()) -> list[str]:
    """Every broken invariant of the Instances `instances` (name -> package) and the child Instances they make,
    judged from `history`, the changes committed in their namespace in commit order. `updated`: the values
    `kplan update` gave some of them; `uninstalled`: those `kplan uninstall` removed."""
    history = list(history)
    feed = Feed(history)
    gone = set(uninstalled)
    found: list[str] = []
    wanted = expected(instances, namespace, updated)
    for one in wanted:
        found += objects_deleted(one, feed) if one.instance in gone else objects_once(one, feed)
        found += jobs_within_retries(one, feed)
        if one.instance in (updated or {}) and one.instance not in gone:
            found += data_updated(one, feed)
    found += status_history(wanted, history, gone)
    return found


class Feed:
    """The changes of each object, and the pods of each owner uid, in commit order."""

    def __init__(self, history: list[Change]) -> None:
        self.changes: dict[tuple[str, str], list[Change]] = defaultdict(list)
        self.pods: dict[str, set[str]] = defaultdict(set)  # owner uid -> pod uids
        for change in history:
            self.changes[(change[1], change[2])].append(change)
            if change[1] == "Pod":
                for owner in owner_uids(change[3]):
                    self.pods[owner].add(str(change[3]["metadata"].get("uid")))

    def of(self, kind: str, name: str) -> list[Change]:
        return self.changes.get((kind, name), [])


def tally(found: Iterable[str]) -> dict[str, int]:
    """The problems by what the soak's figures call them: duplicates (an object added twice or given a second
    uid), objects lost (never added, or deleted though nothing asked), Jobs re-run beyond their retries, other."""
    counts = {"duplicates": 0, "objects_lost": 0, "jobs_beyond_retries": 0, "other": 0}
    for problem in found:
        made = re.search(r": (\d+) added, (\d+) deleted, (\d+) uids$", problem)
        if "pods ran" in problem:
            counts["jobs_beyond_retries"] += 1
        elif made and (int(made[1]) > 1 or int(made[3]) > 1):
            counts["duplicates"] += 1
        elif made:
            counts["objects_lost"] += 1
        else:
            counts["other"] += 1
    return counts


def objects_deleted(one: Expected, feed: Feed) -> list[str]:
    """The Instance and each of its objects: added at most once, deleted once, last."""
    found = []
    for kind, name in [("Instance", one.instance), *((o["kind"], o["metadata"]["name"]) for o in one.objects)]:
        types = [c[0] for c in feed.of(kind, name)]
        if types.count("ADDED") > 1 or types.count("DELETED") != 1 or types[-1] != "DELETED":
            found.append(f"{kind} {name} of uninstalled {one.instance}: changes {' '.join(types) or 'none'}")
    return found


def objects_once(one: Expected, feed: Feed) -> list[str]:
    found = []
    for obj in one.objects:
        kind, name = obj["kind"], obj["metadata"]["name"]
        of_object = feed.of(kind, name)
        types = [c[0] for c in of_object]
        uids = {str(c[3]["metadata"].get("uid")) for c in of_object}
        if types.count("ADDED") != 1 or "DELETED" in types or len(uids) != 1:
            found.append(f"{kind} {name}: {types.count('ADDED')} added, {types.count('DELETED')} deleted, "
                         f"{len(uids)} uids")
    return found


def data_updated(one: Expected, feed: Feed) -> list[str]:
    """Each ConfigMap of an updated Instance ends with the data its new values render."""
    found = []
    for obj in one.objects:
        if obj["kind"] == "ConfigMap" and "data" in obj:
            name = obj["metadata"]["name"]
            versions = [c[3] for c in feed.of("ConfigMap", name)]
            if versions and versions[-1].get("data") != obj["data"]:
                found.append(f"ConfigMap {name}: data {versions[-1].get('data')} after the update, not {obj['data']}")
    return found


def jobs_within_retries(one: Expected, feed: Feed) -> list[str]:
    """No Job of the Instance started more pods than its backoffLimit allows (one run plus the retries)."""
    found = []
    for obj in one.objects:
        if obj["kind"] != "Job":
            continue
        name, limit = obj["metadata"]["name"], int((obj.get("spec") or {}).get("backoffLimit", 6))
        uids = {str(c[3]["metadata"].get("uid")) for c in feed.of("Job", name)}
        pods = {pod for uid in uids for pod in feed.pods.get(uid, ())}
        if len(pods) > limit + 1:
            found.append(f"Job {name}: {len(pods)} pods ran, backoffLimit {limit} allows {limit + 1}")
    return found


def owner_uids(obj: Mapping[str, Any]) -> set[str]:
    return {str(ref.get("uid")) for ref in (obj.get("metadata") or {}).get("ownerReferences") or []}


def status_history(wanted: Iterable[Expected], history: list[Change], uninstalled: set[str]) -> list[str]:
    """The recorded statuses of every Instance, in order: plan order kept, no step going back, one uid per plan
    run, and the last plan COMPLETE (unless the Instance was uninstalled)."""
    found: list[str] = []
    of: dict[str, Expected] = {e.instance: e for e in wanted}
    plans = {name: operator(e.package)["plans"] for name, e in of.items()}
    uids: dict[tuple[str, str], set[str]] = defaultdict(set)  # (instance, plan) -> uids
    last: dict[str, str] = {}  # instance -> status of the plan that last started
    done: dict[tuple[str, str, str], bool] = {}  # (instance, plan uid, step path) -> seen COMPLETE
    for _, kind, name, obj in history:
        if kind != "Instance" or name not in of:
            continue
        status = obj.get("status") or {}
        recorded = status.get("plans") or {}
        active = str((status.get("activePlan") or {}).get("name") or "deploy")
        last[name] = str((recorded.get(active) or {}).get("status") or "")
        for plan, record in recorded.items():
            if not record.get("uid") or plan not in plans[name]:
                continue
            uid = str(record["uid"])
            uids[(name, plan)].add(uid)
            problem = plan_order(record, plans[name][plan])
            if problem:
                found.append(f"Instance {name}: {plan} plan: {problem}")
            for phase in record.get("phases") or []:
                for step in phase.get("steps") or []:
                    key = (name, uid, f"{phase.get('name')}/{step.get('name')}")
                    if step.get("status") == "COMPLETE":
                        done[key] = True
                    elif done.get(key):
                        found.append(f"Instance {name}: step {key[2]} went from COMPLETE back to {step.get('status')}")
                        done[key] = False
    for name, one in of.items():
        if name not in uninstalled and last.get(name) != "COMPLETE":
            found.append(f"Instance {name}: its last plan ended {last.get(name) or 'never run'}")
        for plan, runs in one.runs:
            if len(uids[(name, plan)]) != runs:
                found.append(f"Instance {name}: {len(uids[(name, plan)])} {plan} plan uids, {runs} runs expected")
    owners: dict[str, list[str]] = defaultdict(list)
    for (name, _), of_name in uids.items():
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

"""Builders and a tiny cluster stand-in for the planner tests: plain dicts in, plain dicts out.

`Cluster` holds what the cluster would show after the shell carried out a decision: applied
objects land as they were sent (keeping any status already there), deletes remove them. Tests
flip statuses (a Job completes, a pod succeeds) to say what the controllers did meanwhile.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any

from engine.model import HealthRule, Package, Parameter, Phase, Plan, Step, Strategy, Task, TaskKind
from engine.planner import (
    FINALIZER,
    AddFinalizer,
    Apply,
    ClearPlanExecution,
    Decision,
    Delete,
    Ref,
    RemoveFinalizer,
    Settings,
    decide,
)

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
UID = "0b1c2d3e-0000-4000-8000-000000000001"
SETTINGS = Settings(backoff_base=10.0, backoff_max=300.0)


def configmap(name: str, value: str = "{{ Params.value | default('v') }}") -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: \"{value}\"\n"


def job(name: str) -> str:
    return (
        f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n        - name: main\n          image: busybox\n"
    )


def apply_task(name: str, *files: str, retries: int = 0, force: bool = False) -> Task:
    return Task(name=name, kind=TaskKind.APPLY, resources=files, retries=retries, force=force)


def plan(name: str, *phases: Phase, strategy: Strategy = Strategy.SERIAL) -> Plan:
    return Plan(name, phases, strategy)


def phase(name: str, *steps: Step, strategy: Strategy = Strategy.SERIAL) -> Phase:
    return Phase(name, steps, strategy)


def step(name: str, *tasks: str, depends_on: tuple[str, ...] = (), timeout: float | None = None) -> Step:
    return Step(name, tasks or (name,), depends_on, timeout)


def package(
    templates: Mapping[str, str],
    tasks: Iterable[Task],
    plans: Iterable[Plan],
    parameters: Iterable[Parameter] = (),
    version: str = "0.3.0",
    health: tuple[HealthRule, ...] = (),
) -> Package:
    return Package(
        name="redis",
        operator_version=version,
        tasks=tuple(tasks),
        plans=MappingProxyType({p.name: p for p in plans}),
        parameters=tuple(parameters),
        templates=MappingProxyType(dict(templates)),
        health=health,
    )


def simple_package(*names: str, parameters: Iterable[Parameter] = (), extra_plans: Iterable[Plan] = ()) -> Package:
    """A deploy plan of serial steps, each applying the ConfigMap of its name."""
    tasks = [apply_task(n, f"{n}.yaml") for n in names]
    deploy = plan("deploy", phase("main", *(step(n) for n in names)))
    return package({f"{n}.yaml": configmap(n) for n in names}, tasks, [deploy, *extra_plans], parameters)


def instance(
    params: Mapping[str, Any] | None = None,
    *,
    version: str = "redis-0.3.0",
    generation: int = 1,
    status: Mapping[str, Any] | None = None,
    finalizers: tuple[str, ...] = (FINALIZER,),
    plan_execution: Mapping[str, str] | None = None,
    deletion: str | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "cache", "namespace": "shop", "uid": UID, "generation": generation,
                            "finalizers": list(finalizers)}
    if deletion:
        meta["deletionTimestamp"] = deletion
    spec: dict[str, Any] = {"operatorVersion": {"name": version}, "parameters": dict(params or {})}
    if plan_execution:
        spec["planExecution"] = dict(plan_execution)
    return {"apiVersion": "kplan.dev/v1alpha1", "kind": "Instance", "metadata": meta, "spec": spec,
            "status": copy.deepcopy(dict(status or {}))}


def ref(kind: str, name: str, api_version: str = "v1", namespace: str | None = "shop") -> Ref:
    return Ref(api_version, kind, namespace, name)


def cm(name: str) -> Ref:
    return ref("ConfigMap", name)


def job_ref(name: str) -> Ref:
    return ref("Job", name, "batch/v1")


class Cluster:
    """What the cluster shows: objects by Ref."""

    def __init__(self, objects: Iterable[Mapping[str, Any]] = ()) -> None:
        self.objects: dict[Ref, dict[str, Any]] = {}
        for obj in objects:
            self.put(obj)

    def put(self, obj: Mapping[str, Any]) -> None:
        new = copy.deepcopy(dict(obj))
        key = Ref.of(new)
        old = self.objects.get(key)
        meta = new.setdefault("metadata", {})
        meta["generation"] = (old or {}).get("metadata", {}).get("generation", 0) + (
            0 if old is not None and old.get("spec") == new.get("spec") else 1
        )
        if old is not None and "status" in old:
            new["status"] = old["status"]
        self.objects[key] = new

    def carry_out(self, decision: Decision) -> None:
        for action in decision.actions:
            if isinstance(action, Apply):
                for obj in action.objects:
                    self.put(obj)
            elif isinstance(action, Delete):
                for r in action.refs:
                    self.objects.pop(r, None)

    def set_status(self, key: Ref, status: Mapping[str, Any]) -> None:
        self.objects[key]["status"] = copy.deepcopy(dict(status))

    def complete_job(self, name: str) -> None:
        self.set_status(job_ref(name), {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})

    def fail_job(self, name: str, reason: str = "BackoffLimitExceeded",
                 message: str = "Job has reached the specified backoff limit") -> None:
        condition = {"type": "Failed", "status": "True", "reason": reason, "message": message}
        self.set_status(job_ref(name), {"failed": 1, "conditions": [condition]})


class Driver:
    """Runs decide() against a Cluster, feeding each decision's status and actions back in."""

    def __init__(self, pkg: Package, inst: dict[str, Any], cluster: Cluster | None = None,
                 now: datetime = NOW, settings: Settings = SETTINGS, previous_pkg: Package | None = None) -> None:
        self.pkg, self.instance, self.cluster = pkg, inst, cluster or Cluster()
        self.now, self.settings, self.previous_pkg = now, settings, previous_pkg
        self.decisions: list[Decision] = []

    def decide(self) -> Decision:
        return decide(self.pkg, self.instance, self.cluster.objects, self.now, self.settings, self.previous_pkg)

    def step(self, seconds: float = 0.0) -> Decision:
        """Advance the clock, decide, carry out the actions and record the status."""
        self.now += timedelta(seconds=seconds)
        decision = self.decide()
        self.cluster.carry_out(decision)
        self.instance["status"] = copy.deepcopy(decision.status)
        for action in decision.actions:
            self.housekeep(action)
        self.decisions.append(decision)
        return decision

    def housekeep(self, action: object) -> None:
        meta = self.instance["metadata"]
        if isinstance(action, AddFinalizer):
            meta["finalizers"] = [*meta.get("finalizers", []), FINALIZER]
        elif isinstance(action, RemoveFinalizer):
            meta["finalizers"] = [f for f in meta.get("finalizers", []) if f != FINALIZER]
        elif isinstance(action, ClearPlanExecution):
            self.instance["spec"].pop("planExecution", None)

    def change_spec(self, **params: Any) -> None:
        self.instance["spec"]["parameters"].update(params)
        self.instance["metadata"]["generation"] += 1

    def run(self, limit: int = 30, seconds: float = 1.0) -> Decision:
        """Decide until a decision has no actions and the status stops changing."""
        decision = self.step(seconds)
        for _ in range(limit):
            before = decision.status
            decision = self.step(seconds)
            if not decision.actions and decision.status == before:
                return decision
        raise AssertionError("the plan did not settle")

    @property
    def status(self) -> dict[str, Any]:
        return dict(self.instance["status"])

    def plan_status(self, name: str = "deploy") -> str:
        return str(self.status["plans"][name]["status"])

    def step_status(self, step_name: str, plan_name: str = "deploy") -> dict[str, Any]:
        for ph in self.status["plans"][plan_name]["phases"]:
            for s in ph["steps"]:
                if s["name"] == step_name:
                    return dict(s)
        raise KeyError(step_name)


def applied(decision: Decision) -> list[str]:
    """`Kind/name` of every object the decision applies, in order."""
    return [f"{o['kind']}/{o['metadata']['name']}" for a in decision.actions if isinstance(a, Apply) for o in a.objects]


def deleted(decision: Decision) -> list[str]:
    return [f"{r.kind}/{r.name}" for a in decision.actions if isinstance(a, Delete) for r in a.refs]


def steps_applied(decision: Decision) -> list[str]:
    return sorted({a.step for a in decision.actions if isinstance(a, Apply)})


def step_statuses(status: Mapping[str, Any], plan_name: str = "deploy") -> dict[str, str]:
    return {s["name"]: s["status"] for ph in status["plans"][plan_name]["phases"] for s in ph["steps"]}


def job_driver(name: str, status: Mapping[str, Any]) -> Driver:
    """A plan of one step applying Job `name`; the Job applied, with uid `job-uid` and `status`."""
    pkg = package({"job.yaml": job(name)}, [apply_task(name, "job.yaml")], [plan("deploy", phase("main", step(name)))])
    driver = Driver(pkg, instance())
    driver.step()
    live = driver.cluster.objects[job_ref(name)]
    live["metadata"]["uid"] = "job-uid"
    live["status"] = dict(status)
    return driver


def job_pod(name: str, owner_uid: str, status: Mapping[str, Any]) -> dict[str, Any]:
    """A pod controlled by the Job `train` of uid `owner_uid`."""
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": owner_uid, "controller": True}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "ownerReferences": [owner]}, "status": dict(status)}

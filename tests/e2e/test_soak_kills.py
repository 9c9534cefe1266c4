"""The kills soak, short form (issue 12): Instances of multi-step packages (a serial chain of ConfigMap + Job
steps, a parallel phase of Jobs) while `kplan manager` is SIGKILLed at seeded random moments and restarted,
sometimes as two managers racing for the Lease. After convergence: every Instance COMPLETE; every object that
`kplan template` renders for it exists exactly once, never deleted and re-created; no Job ran twice (uids taken
from the change feed, not from the end state); each deploy plan kept one uid; and no recorded status shows a step
of a serial phase COMPLETE before its predecessors. It lives with the e2e tests to run on both backends through
their fixtures."""

from __future__ import annotations

import io
import json
import random
from collections import defaultdict
from collections.abc import Callable
from contextlib import redirect_stdout
from typing import TYPE_CHECKING, Any

import yaml

from engine.cli.main import main

if TYPE_CHECKING:
    from conftest import Changes, Kplan, ManagerProcess

    Start = Callable[..., ManagerProcess]

from conftest import PACKAGES

SHORT_LEASE = ("--lease-duration", "2", "--renew-deadline", "1.5", "--retry-period", "0.25")
INSTANCES = {"c1": "chain", "c2": "chain", "p1": "parallel"}
KILLS = 6
SEED = 12


def rendered(package: str, name: str, namespace: str) -> set[tuple[str, str]]:
    """(kind, name) of every object `kplan template` renders for Instance `name` of `package`."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["template", str(PACKAGES / package), "--instance", name, "-n", namespace, "-o", "json"]) == 0
    return {(d["kind"], d["metadata"]["name"]) for d in json.loads(out.getvalue())}


def serial_order_kept(status: dict[str, Any], plan: dict[str, Any]) -> bool:
    """No step of a serial phase is COMPLETE while one before it is not."""
    strategies = {p["name"]: p.get("strategy", "serial") for p in plan["phases"]}
    for phase in (status.get("plans") or {}).get("deploy", {}).get("phases") or []:
        if strategies.get(phase.get("name")) != "serial":
            continue
        seen_unfinished = False
        for step in phase.get("steps") or []:
            if step.get("status") == "COMPLETE" and seen_unfinished:
                return False
            seen_unfinished = seen_unfinished or step.get("status") != "COMPLETE"
    return True


def test_managers_killed_at_random_moments_leave_every_instance_complete_once(
    kplan: Kplan, manager_process: Start, changes: Changes
) -> None:
    rng = random.Random(SEED)
    running = [manager_process("m0", *SHORT_LEASE)]
    for name, package in INSTANCES.items():
        kplan.install(package, name)

    def complete() -> bool:
        return all(kplan.plan(name, "deploy").get("status") == "COMPLETE" for name in INSTANCES)

    for kill in range(1, KILLS + 1):
        target = len(changes.all) + rng.randint(1, 8)  # a seeded number of further commits, then the kill
        kplan.wait(lambda target=target: len(changes.all) >= target or complete())
        for process in running:
            process.kill()
        running = [manager_process(f"m{kill}", *SHORT_LEASE)]
        if rng.random() < 0.4:
            running.append(manager_process(f"m{kill}-rival", *SHORT_LEASE))

    for name in INSTANCES:
        kplan.wait_plan(name, "deploy", timeout=120)

    history = changes.all
    for name, package in INSTANCES.items():
        for kind, obj_name in rendered(package, name, kplan.namespace):
            of_object = [c for c in history if c.kind == kind and c.name == obj_name]
            assert [c.type for c in of_object].count("ADDED") == 1, (kind, obj_name)
            assert "DELETED" not in [c.type for c in of_object], (kind, obj_name)
            assert len({c.uid for c in of_object}) == 1, (kind, obj_name)  # a Job re-run would be a new uid
    plan_uids: dict[str, set[str]] = defaultdict(set)
    plans = {package: _plan(package) for package in set(INSTANCES.values())}
    for change in history:
        if change.kind == "Instance" and change.name in INSTANCES:
            status = change.obj.get("status") or {}
            deploy = (status.get("plans") or {}).get("deploy") or {}
            if deploy.get("uid"):
                plan_uids[change.name].add(deploy["uid"])
            assert serial_order_kept(status, plans[INSTANCES[change.name]]), change.obj["status"]
    assert {name: len(uids) for name, uids in plan_uids.items()} == dict.fromkeys(INSTANCES, 1)


def _plan(package: str) -> dict[str, Any]:
    operator = yaml.safe_load((PACKAGES / package / "operator.yaml").read_text(encoding="utf-8"))
    plan: dict[str, Any] = operator["plans"]["deploy"]
    return plan

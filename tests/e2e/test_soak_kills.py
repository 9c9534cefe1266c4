"""The kills soak, short form (issue 12): Instances of multi-step packages (soak-mixed: serial and parallel
phases, ConfigMaps, a Deployment, a StatefulSet, a Job with a duration and a retry, an Operator-task child
Instance, a Pipe task; chain: four serial ConfigMap + Job steps) while `kplan manager` is SIGKILLed at seeded
random moments and restarted, sometimes as two managers racing for the Lease. After convergence, the invariants
of tests/soak/invariants.py, judged from the change feed (not from the end state). It lives with the e2e tests to
run on both backends through their fixtures."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from soak.invariants import problems

if TYPE_CHECKING:
    from conftest import Changes, Kplan, ManagerProcess

    Start = Callable[..., ManagerProcess]

SHORT_LEASE = ("--lease-duration", "2", "--renew-deadline", "1.5", "--retry-period", "0.25")
INSTANCES = {"c1": "chain", "m1": "soak-mixed", "m2": "soak-mixed"}
KILLS = 6
SEED = 12


def test_managers_killed_at_random_moments_leave_every_instance_complete_once(
    kplan: Kplan, manager_process: Start, changes: Changes
) -> None:
    rng = random.Random(SEED)
    running = [manager_process("m0", *SHORT_LEASE)]
    kplan.operator_version("soak-child")  # what soak-mixed's Operator task installs
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

    history = [(c.type, c.kind, c.name, c.obj) for c in changes.all]
    assert problems(INSTANCES, kplan.namespace, history) == []

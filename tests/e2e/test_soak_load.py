"""The load soak, short form (issue 12): Instances of tests/e2e/packages/soak-load being installed, updated and
uninstalled at once with the `kplan` CLI while `kplan manager` is SIGKILLed after seeded numbers of commits and
restarted (sometimes with a rival for the Lease). Afterwards everything is consistent, judged from the change
feed by tests/soak/invariants.py: the installed and updated Instances COMPLETE, their objects made once and
changed in place, the updated ConfigMaps holding the new value, each plan run once per trigger; the uninstalled
Instances and their objects gone, each deleted once. bench/soak.py `--load` is the long form (1,000 Instances,
a kill every 10 s). It lives with the e2e tests to run on both backends through their fixtures."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from soak.invariants import PACKAGES, problems

from engine.cli.main import main

if TYPE_CHECKING:
    from conftest import Changes, Kplan, ManagerProcess

    Start = Callable[..., ManagerProcess]

SHORT_LEASE = ("--lease-duration", "2", "--renew-deadline", "1.5", "--retry-period", "0.25")
PACKAGE = str(PACKAGES / "soak-load")
EACH = 10  # Instances installed, updated and uninstalled: 30 in all
SEED = 12


def test_instances_installed_updated_and_uninstalled_at_once_survive_killed_managers(
    kplan: Kplan, manager_process: Start, changes: Changes, sim_kubeconfig: Path
) -> None:
    rng = random.Random(SEED)
    installed, updated, uninstalled = ([f"{group}{i}" for i in range(EACH)] for group in ("new", "upd", "del"))

    def kplan_cli(*args: str) -> int:
        return main([*args, "--kubeconfig", str(sim_kubeconfig), "-n", kplan.namespace])

    running = [manager_process("m0", *SHORT_LEASE)]
    for name in updated + uninstalled:
        assert kplan_cli("install", PACKAGE, "--instance", name) == 0
    for name in updated + uninstalled:
        kplan.wait_plan(name, "deploy", timeout=120)

    codes: list[int] = []

    def load() -> None:
        for new, changed, removed in zip(installed, updated, uninstalled, strict=True):
            codes.append(kplan_cli("install", PACKAGE, "--instance", new))
            codes.append(kplan_cli("update", "--instance", changed, "-p", "value=v2"))
            codes.append(kplan_cli("uninstall", "--instance", removed))

    def converged() -> bool:
        return all(kplan.plan(n, "deploy").get("status") == "COMPLETE" for n in installed) \
            and all(kplan.plan(n, "update").get("status") == "COMPLETE" for n in updated) \
            and all(kplan.instance(n) is None for n in uninstalled)

    commands = threading.Thread(target=load)
    commands.start()
    kills = 0
    while commands.is_alive() or kills < 8:  # the last kills after convergence: a restart must change nothing
        target = len(changes.all) + rng.randint(5, 25)  # a seeded number of further commits, then the kill
        kplan.wait(lambda target=target: len(changes.all) >= target or converged(), timeout=120)
        for process in running:
            process.kill()
        kills += 1
        running = [manager_process(f"m{kills}", *SHORT_LEASE)]
        if rng.random() < 0.3:
            running.append(manager_process(f"m{kills}-rival", *SHORT_LEASE))
    commands.join()
    assert codes == [0] * (3 * EACH)
    kplan.wait(converged, timeout=240)

    history = [(c.type, c.kind, c.name, c.obj) for c in changes.all]
    every = dict.fromkeys(installed + updated + uninstalled, "soak-load")
    assert problems(every, kplan.namespace, history, updated={key: {"value": "v2"} for key in updated},
                    uninstalled=uninstalled) == []

"""A manager that starts (or restarts) over Instances: it looks first at those with work waiting (an Instance
created while no manager ran is reconciled before the settled Instances it comes after in name order, even when
those need their drift repaired), and a shard with a selector starts over the Instances it matches."""

from __future__ import annotations

from typing import TYPE_CHECKING

from conftest import running_manager

from engine.controller.sharding import Shard
from engine.runner import INSTANCE

if TYPE_CHECKING:
    from pathlib import Path

    from conftest import Changes, Kplan

SETTLED = ("a1", "a2", "a3", "a4")


def test_an_instance_waiting_for_a_manager_goes_before_the_settled_ones(
    kplan: Kplan, changes: Changes, sim_kubeconfig: Path
) -> None:
    with running_manager(sim_kubeconfig, kplan.namespace):
        for name in SETTLED:
            kplan.install("params", name)
        for name in SETTLED:
            kplan.wait_plan(name, "deploy")
    # While no manager runs: every settled Instance's ConfigMap is deleted (drift to repair, a write per Instance
    # that shows when its pass ran) and a new Instance, last in name order, waits for its first pass.
    for name in SETTLED:
        kplan.kube.delete("v1", "ConfigMap", f"{name}-config", kplan.namespace)
    kplan.wait(lambda: all(kplan.kube.get("v1", "ConfigMap", f"{n}-config", kplan.namespace) is None
                           for n in SETTLED))
    kplan.install("params", "z-new")

    with running_manager(sim_kubeconfig, kplan.namespace, workers=1):
        kplan.wait_plan("z-new", "deploy")
        for name in SETTLED:
            kplan.wait(lambda name=name: kplan.kube.get("v1", "ConfigMap", f"{name}-config", kplan.namespace))

    added = [(i, c.name) for i, c in enumerate(changes.all) if c.kind == "ConfigMap" and c.type == "ADDED"]
    new = next(i for i, name in added if name == "z-new-config")
    repairs = [[i for i, n in added if n == f"{name}-config"][1] for name in SETTLED]  # created, then again
    assert all(new < i for i in repairs), (new, repairs)


def test_a_shard_with_a_selector_takes_over_the_instances_it_matches(kplan: Kplan, sim_kubeconfig: Path) -> None:
    """Routing an Instance's first listing reads the Instance cache being filled (is it the shard's?): a manager
    started over Instances its selector matches must not wait on that listing forever."""
    kplan.install("params", "blue-1")
    kplan.kube.patch(*INSTANCE, "blue-1", kplan.namespace, {"metadata": {"labels": {"team": "blue"}}})

    with running_manager(sim_kubeconfig, kplan.namespace, shard=Shard(selector="team=blue")) as manager:
        kplan.wait(manager.ready)
        kplan.wait_plan("blue-1", "deploy")

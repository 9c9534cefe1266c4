"""Managers split into shards: by the hash of namespace/name every Instance is reconciled by exactly one shard
(none by two, none by none), each shard holds a Lease of its own, a shard's standby takes over its Lease when
the holder is killed, and a label selector gives a shard only the Instances it matches."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.controller import shard_of

if TYPE_CHECKING:
    from conftest import Kplan, ManagerProcess

    Start = Callable[..., ManagerProcess]

SHORT_LEASE = ("--lease-duration", "2", "--renew-deadline", "1.5", "--retry-period", "0.25")
STARTED = re.compile(r" PlanStarted .*\binstance=(\S+)")


def names_on(namespace: str, index: int, count: int) -> list[str]:
    """The first `count` names web-0, web-1, ... that hash to shard `index` of 2 in `namespace` (the namespace is
    random, so a fixed list of names may put too few on one shard)."""
    names = (f"web-{i}" for i in range(10_000))
    return [n for n in names if shard_of(namespace, n, 2) == index][:count]


def holder(kplan: Kplan, lease: str) -> str | None:
    found = kplan.kube.get("coordination.k8s.io/v1", "Lease", lease, kplan.namespace)
    return ((found or {}).get("spec") or {}).get("holderIdentity") or None


def started_by(process: ManagerProcess) -> set[str]:
    """The Instances whose plans this manager started, from its log."""
    process.log.flush()
    with open(process.log.name) as log:
        return {m[1] for m in STARTED.finditer(log.read())}


def shard(start: Start, identity: str, index: int, *args: str) -> ManagerProcess:
    return start(identity, "--shards", "2", "--shard-index", str(index), *SHORT_LEASE, *args)


def test_every_instance_is_reconciled_by_exactly_the_shard_its_hash_names(kplan: Kplan, manager_process: Start) -> None:
    shards = [shard(manager_process, f"shard-{i}", i) for i in (0, 1)]
    kplan.wait(lambda: holder(kplan, "kplan-manager-shard-0") == "shard-0"
               and holder(kplan, "kplan-manager-shard-1") == "shard-1")
    assert holder(kplan, "kplan-manager") is None  # no shard campaigns for the unsharded Lease

    names = sorted(names_on(kplan.namespace, 0, 4) + names_on(kplan.namespace, 1, 4))
    for name in names:
        kplan.install("params", name)
    for name in names:
        kplan.wait_plan(name, "deploy")

    expected = [{n for n in names if shard_of(kplan.namespace, n, 2) == i} for i in (0, 1)]
    kplan.wait(lambda: [started_by(s) for s in shards] == expected)
    kplan.set_parameters(names[0], size=4)  # later passes stay on the same shard
    kplan.wait_plan(names[0], "update")
    assert [started_by(s) for s in shards] == expected


def test_a_shards_standby_takes_over_its_lease_and_its_instances(kplan: Kplan, manager_process: Start) -> None:
    first = shard(manager_process, "zero-a", 0)
    kplan.wait(lambda: holder(kplan, "kplan-manager-shard-0") == "zero-a")
    standby = shard(manager_process, "zero-b", 0)
    other = shard(manager_process, "one", 1)
    kplan.wait(lambda: holder(kplan, "kplan-manager-shard-1") == "one")
    ours = names_on(kplan.namespace, 0, 2)

    kplan.install("params", ours[0])
    kplan.wait_plan(ours[0], "deploy")
    first.kill()
    kplan.wait(lambda: holder(kplan, "kplan-manager-shard-0") == "zero-b")
    assert holder(kplan, "kplan-manager-shard-1") == "one"  # the other shard is untouched

    kplan.install("params", ours[1])
    kplan.wait_plan(ours[1], "deploy")
    kplan.wait(lambda: ours[1] in started_by(standby))
    assert started_by(other) == set()


def test_a_selector_gives_a_shard_only_the_instances_it_matches(kplan: Kplan, manager_process: Start) -> None:
    blue = manager_process("blue", "--selector", "team=blue", *SHORT_LEASE)
    green = manager_process("green", "--selector", "team in (green)", *SHORT_LEASE)
    kplan.wait(lambda: all(m.get("/readyz")[0] == 200 for m in (blue, green)))

    for name, team in (("b1", "blue"), ("g1", "green"), ("b2", "blue"), ("r1", "red")):
        kplan.install("params", name)  # matched by no selector until labelled
        labels = {"metadata": {"labels": {"team": team}}}
        kplan.kube.patch("kplan.dev/v1alpha1", "Instance", name, kplan.namespace, labels)
    for name in ("b1", "g1", "b2"):
        kplan.wait_plan(name, "deploy")

    kplan.wait(lambda: (started_by(blue), started_by(green)) == ({"b1", "b2"}, {"g1"}))
    assert kplan.plan("r1", "deploy") == {}  # no shard's selector matches it: nobody reconciles it

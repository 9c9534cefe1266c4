"""What one pass reads of a long plan, and what it may skip: the inventory reads each live object once (standing is
mine and present in one walk), and a settled step CLEAN remembers is known clean until one of its objects changes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from test_planner_heal_memo import complete, scope_of, settled

from engine.planner import inventory, steps
from engine.planner.refs import Ref

OURS = {"apiVersion": "kplan.dev/v1alpha1", "kind": "Instance", "name": "c", "uid": "u1", "controller": True}
THEIRS = {**OURS, "name": "other", "uid": "u2"}


class Counting(Mapping[Ref, Mapping[str, Any]]):
    """Observed objects that count every read, as the runner's view makes each one a call."""

    def __init__(self, objects: Mapping[Ref, Mapping[str, Any]]) -> None:
        self.objects, self.reads = dict(objects), 0

    def __getitem__(self, ref: Ref) -> Mapping[str, Any]:
        self.reads += 1
        return self.objects[ref]

    def get(self, ref: Ref, default: Any = None) -> Any:  # type: ignore[override]
        self.reads += 1
        return self.objects.get(ref, default)

    def __contains__(self, ref: object) -> bool:
        self.reads += 1
        return ref in self.objects

    def __iter__(self) -> Iterator[Ref]:
        return iter(self.objects)

    def __len__(self) -> int:
        return len(self.objects)


def live(name: str, owner: Mapping[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "shop", "ownerReferences": [owner]}}


def test_standing_is_mine_then_present_with_one_read_of_each_object() -> None:
    objects = {Ref.of(o): o for o in (live("ours", OURS), live("theirs", THEIRS))}
    names = ("zeta-gone-kept", "ours", "theirs", "gone")
    entries = [Ref("v1", "ConfigMap", "shop", n).entry("deploy") for n in names]
    pairs = inventory.paired(entries)
    keep = {Ref("v1", "ConfigMap", "shop", "zeta-gone-kept")}
    observed = Counting(objects)

    owned, shown = inventory.standing(pairs, observed, keep, "shop", "c")

    assert observed.reads == len(entries)
    mine = inventory.mine(pairs, objects, "shop", "c")
    assert owned == mine and [r.name for r, _ in owned] == ["zeta-gone-kept", "ours", "gone"]
    assert shown == inventory.present(mine, keep, objects) and [e["name"] for e in shown] == ["ours", "zeta-gone-kept"]


def test_a_settled_step_is_known_clean_only_while_its_objects_are_the_same() -> None:
    driver = settled("a")
    scope = scope_of(driver)
    a = scope.plan.steps[0]
    steps.CLEAN.clear()

    assert not steps.known_clean(scope, a, True, frozenset())
    assert steps.heal_step(scope, a, complete("a")).actions == ()
    assert steps.known_clean(scope, a, True, frozenset())
    assert not steps.known_clean(scope, a, False, frozenset())  # IN_PROGRESS is another entry
    driver.cluster.bump(Ref("v1", "ConfigMap", "shop", "a"))
    assert not steps.known_clean(scope_of(driver), a, True, frozenset())

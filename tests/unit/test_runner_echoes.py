"""Echoes: a watch event that shows no version after what a settled pass of an Instance wrote needs no pass of that
Instance; a later version, another object, a deletion, or the writes of a pass that did not settle do."""

from __future__ import annotations

from typing import Any

from engine.runner.echoes import Echoes

KEY = "shop/cache"


def instance(version: str, name: str = "cache") -> dict[str, Any]:
    return {"apiVersion": "kplan.dev/v1alpha1", "kind": "Instance",
            "metadata": {"name": name, "namespace": "shop", "resourceVersion": version}}


def configmap(version: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "shop",
                                                                   "resourceVersion": version}}


def settled_pass(*written: dict[str, Any]) -> Echoes:
    echoes = Echoes()
    for obj in written:
        echoes.wrote(obj, KEY)
    assert not echoes.settled(KEY, True)
    return echoes


def test_the_echo_of_a_settled_pass_and_older_versions_bring_no_news() -> None:
    echoes = settled_pass(configmap("11"), instance("12"))

    assert echoes.heard("MODIFIED", instance("9")) == KEY  # a late event of a version the writing pass had read
    assert echoes.heard("ADDED", configmap("11")) == KEY
    assert echoes.heard("MODIFIED", instance("12")) == KEY


def test_a_later_version_another_object_and_a_deletion_are_news() -> None:
    echoes = settled_pass(instance("12"))

    assert echoes.heard("MODIFIED", instance("13")) is None
    assert echoes.heard("MODIFIED", instance("12", name="other")) is None
    assert echoes.heard("DELETED", instance("12")) is None
    assert echoes.heard("MODIFIED", instance("12")) is None  # a deletion forgets the object


def test_the_writes_of_a_pass_that_did_not_settle_are_news_and_an_echo_heard_meanwhile_is_owed_a_pass() -> None:
    echoes = Echoes()
    echoes.wrote(configmap("11"), KEY)
    assert echoes.heard("ADDED", configmap("11")) == KEY  # arrives while the pass is still under way

    assert echoes.settled(KEY, False)  # owed: the event was taken for an echo, the pass did not settle
    assert echoes.heard("ADDED", configmap("11")) is None
    assert not echoes.settled(KEY, False)


def test_a_version_that_is_no_number_is_never_taken_for_an_echo() -> None:
    echoes = settled_pass(instance("abc"))

    assert echoes.heard("MODIFIED", instance("abc")) is None

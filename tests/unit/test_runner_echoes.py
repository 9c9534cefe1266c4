"""Echoes: a watch event that shows no version after what a settled pass of an Instance wrote needs no pass of that
Instance; a later version, another object, a deletion, or the writes of a pass that did not settle do. An event
that arrives during a pass of its Instance waits for the pass's end, which tells an echo from news."""

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


def test_an_event_during_a_pass_waits_for_its_end_and_is_no_news_when_the_pass_wrote_that_version() -> None:
    echoes = Echoes()
    echoes.begin(KEY)
    assert echoes.defer("MODIFIED", instance("12"), [KEY, "shop/other"]) == {KEY}  # before the write's answer

    echoes.wrote(instance("12"), KEY)

    assert not echoes.settled(KEY, True)
    assert echoes.heard("MODIFIED", instance("12")) is None  # the echo came: forgotten


def test_an_event_during_a_pass_is_owed_a_pass_when_it_shows_more_than_it_wrote_or_it_did_not_settle() -> None:
    newer = Echoes()
    newer.begin(KEY)
    newer.defer("MODIFIED", instance("13"), [KEY])
    newer.wrote(instance("12"), KEY)
    assert newer.settled(KEY, True)

    unwritten = Echoes()
    unwritten.begin(KEY)
    unwritten.defer("MODIFIED", configmap("11"), [KEY])
    unwritten.wrote(instance("12"), KEY)
    assert unwritten.settled(KEY, True)

    unsettled = Echoes()
    unsettled.begin(KEY)
    unsettled.defer("MODIFIED", instance("12"), [KEY])
    unsettled.wrote(instance("12"), KEY)
    assert unsettled.settled(KEY, False)


def test_only_events_of_a_pass_under_way_are_deferred_and_never_a_deletion() -> None:
    echoes = Echoes()
    assert echoes.defer("MODIFIED", instance("12"), [KEY]) == set()  # no pass under way
    echoes.begin(KEY)
    assert echoes.defer("DELETED", instance("12"), [KEY]) == set()
    assert echoes.defer("MODIFIED", instance("abc"), [KEY]) == set()
    assert not echoes.settled(KEY, True)  # nothing was deferred


def test_a_failed_pass_is_owed_a_pass_only_for_news_deferred_not_for_its_own_echoes() -> None:
    echoes = Echoes()
    echoes.begin(KEY)
    echoes.defer("ADDED", configmap("11"), [KEY])
    echoes.wrote(configmap("11"), KEY)
    assert not echoes.settled(KEY, False, failed=True)  # its own write's echo: the retry after backoff sees it

    echoes.begin(KEY)
    echoes.defer("MODIFIED", instance("13"), [KEY])  # someone changed the Instance meanwhile
    assert echoes.settled(KEY, False, failed=True)

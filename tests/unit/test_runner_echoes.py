"""Echoes: a watch event of an Instance that shows no version after the runner's last write to it needs no pass;
a later version, another Instance, or a deletion does."""

from __future__ import annotations

from typing import Any

from engine.runner.echoes import Echoes


def instance(version: str, name: str = "cache") -> dict[str, Any]:
    return {"apiVersion": "kplan.dev/v1alpha1", "kind": "Instance",
            "metadata": {"name": name, "namespace": "shop", "resourceVersion": version}}


def test_the_echo_of_a_write_and_older_versions_bring_no_news() -> None:
    echoes = Echoes()
    echoes.wrote(instance("12"))

    assert echoes.heard("MODIFIED", instance("12"))
    assert echoes.heard("MODIFIED", instance("9"))  # a late event of a version the writing pass had read


def test_a_later_version_another_instance_and_a_deletion_are_news() -> None:
    echoes = Echoes()
    echoes.wrote(instance("12"))

    assert not echoes.heard("MODIFIED", instance("13"))
    assert not echoes.heard("MODIFIED", instance("12", name="other"))
    assert not echoes.heard("DELETED", instance("12"))
    assert not echoes.heard("MODIFIED", instance("12"))  # a deletion forgets the Instance


def test_a_version_that_is_no_number_is_never_taken_for_an_echo() -> None:
    echoes = Echoes()
    echoes.wrote(instance("abc"))
    echoes.wrote(instance("5"))

    assert not echoes.heard("MODIFIED", instance("abc"))
    assert echoes.heard("MODIFIED", instance("5"))

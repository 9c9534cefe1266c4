"""Warming: an OperatorVersion that arrives while the manager runs has the kinds its deploy plan applies cached before
any Instance of it exists, and the first Instance of it then runs as usual."""

from __future__ import annotations

from typing import TYPE_CHECKING

from conftest import until

from engine.controller import Manager

if TYPE_CHECKING:
    from conftest import Kplan

KINDS = (("v1", "ConfigMap"), ("v1", "Secret"), ("apps/v1", "Deployment"))  # cli-app's Job is its cleanup plan's


def test_a_new_operator_version_has_its_kinds_cached_before_an_instance_of_it_exists(
    kplan: Kplan, manager: Manager
) -> None:
    until(manager.ready)
    assert not any(manager.caches.caching(*kind) for kind in KINDS)  # a new manager caches kplan's kinds only

    kplan.operator_version("cli-app")

    until(lambda: all(manager.caches.caching(*kind) for kind in KINDS))
    assert not manager.caches.caching("batch/v1", "Job")
    assert manager.caches.list(*("kplan.dev/v1alpha1", "Instance"), kplan.namespace) == []
    kplan.install("cli-app", "app", {"password": "not-a-real-one"})
    kplan.wait_plan("app", "deploy")

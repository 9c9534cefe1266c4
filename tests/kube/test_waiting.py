"""Kube.wait_for: list (or start from the object as just written) then watch until a predicate holds for one object,
or Timeout with a clear message."""

from __future__ import annotations

from typing import Any

import pytest

from engine.apiserver.faults import FaultProfile
from engine.devcluster.cluster import DevCluster
from engine.errors import Timeout
from engine.kube import Kube

from .helpers import WAIT, configmap


def test_wait_for_returns_at_once_when_the_predicate_holds(kube: Kube, namespace: str) -> None:
    kube.create(configmap("settings", namespace, {"phase": "ready"}))
    watches = kube.requests["watch"]

    got = kube.wait_for("v1", "ConfigMap", "settings", namespace, lambda o: o is not None, WAIT)

    assert got is not None and got["data"] == {"phase": "ready"}
    assert kube.requests["watch"] == watches


def test_wait_for_sees_a_change_made_after_it_listed(kube: Kube, namespace: str) -> None:
    kube.create(configmap("settings", namespace, {"phase": "starting"}))
    seen: list[Any] = []

    def ready(obj: dict[str, Any] | None) -> bool:
        seen.append(obj)
        if len(seen) == 1:  # the listed state; the change below can only arrive through the watch
            kube.patch("v1", "ConfigMap", "settings", namespace, {"data": {"phase": "ready"}})
        return obj is not None and obj["data"]["phase"] == "ready"

    got = kube.wait_for("v1", "ConfigMap", "settings", namespace, ready, WAIT)

    assert got is not None and got["data"] == {"phase": "ready"}
    assert seen[0]["data"] == {"phase": "starting"}


def test_wait_for_from_the_object_as_written_watches_from_its_version_without_a_list(
    kube: Kube, namespace: str
) -> None:
    written = kube.create(configmap("settings", namespace, {"phase": "starting"}))
    kube.patch("v1", "ConfigMap", "settings", namespace, {"data": {"phase": "ready"}})  # before the wait begins
    lists = kube.requests["list"]
    seen: list[Any] = []

    def ready(obj: dict[str, Any] | None) -> bool:
        seen.append(obj)
        return obj is not None and obj["data"]["phase"] == "ready"

    got = kube.wait_for("v1", "ConfigMap", "settings", namespace, ready, WAIT, seen=written)

    assert got is not None and got["data"] == {"phase": "ready"}
    assert seen[0]["data"] == {"phase": "starting"}  # tried on the object as written, then the change it missed
    assert kube.requests["list"] == lists


def test_wait_for_from_an_object_whose_version_is_gone_lists_it(own_cluster: DevCluster, own_kube: Kube) -> None:
    written = own_kube.create(configmap("settings", "default", {"phase": "starting"}))
    own_kube.patch("v1", "ConfigMap", "settings", "default", {"data": {"phase": "ready"}})
    own_cluster.faults = FaultProfile(expire_next_watch=True)
    lists = own_kube.requests["list"]

    got = own_kube.wait_for("v1", "ConfigMap", "settings", "default",
                            lambda obj: obj is not None and obj["data"]["phase"] == "ready", WAIT, seen=written)

    assert got is not None and got["data"] == {"phase": "ready"}
    assert own_kube.requests["list"] == lists + 1


def test_wait_for_an_object_to_appear(kube: Kube, namespace: str) -> None:
    def exists(obj: dict[str, Any] | None) -> bool:
        if obj is None and kube.get("v1", "ConfigMap", "settings", namespace) is None:
            kube.create(configmap("settings", namespace))
        return obj is not None

    got = kube.wait_for("v1", "ConfigMap", "settings", namespace, exists, WAIT)

    assert got is not None and got["metadata"]["name"] == "settings"


def test_wait_for_an_object_to_be_gone(kube: Kube, namespace: str) -> None:
    kube.create(configmap("settings", namespace))

    def gone(obj: dict[str, Any] | None) -> bool:
        if obj is not None:
            kube.delete("v1", "ConfigMap", "settings", namespace)
        return obj is None

    assert kube.wait_for("v1", "ConfigMap", "settings", namespace, gone, WAIT) is None


def test_wait_for_times_out_naming_the_object_and_the_condition(kube: Kube, namespace: str) -> None:
    created = kube.create(configmap("settings", namespace, {"phase": "starting"}))

    with pytest.raises(Timeout) as caught:
        kube.wait_for("v1", "ConfigMap", "settings", namespace, lambda o: False, 0.5, condition="phase ready")

    assert str(caught.value) == (f"ConfigMap {namespace}/settings did not reach phase ready within 0.5s "
                                 f"(it is at resourceVersion {created['metadata']['resourceVersion']})")


def test_wait_for_a_missing_object_times_out_saying_it_does_not_exist(kube: Kube, namespace: str) -> None:
    with pytest.raises(Timeout, match=r"\(it does not exist\)"):
        kube.wait_for("v1", "ConfigMap", "absent", namespace, lambda o: o is not None, 0.5)


def test_wait_for_lists_again_when_its_watch_expires(own_cluster: DevCluster, own_kube: Kube) -> None:
    own_kube.create(configmap("settings", "default", {"phase": "starting"}))
    own_cluster.faults = FaultProfile(expire_next_watch=True)
    lists = own_kube.requests["list"]

    def ready(obj: dict[str, Any] | None) -> bool:
        if obj is not None and obj["data"]["phase"] == "starting":
            own_kube.patch("v1", "ConfigMap", "settings", "default", {"data": {"phase": "ready"}})
        return obj is not None and obj["data"]["phase"] == "ready"

    got = own_kube.wait_for("v1", "ConfigMap", "settings", "default", ready, WAIT)

    assert got is not None and got["data"] == {"phase": "ready"}
    assert own_kube.requests["list"] == lists + 2

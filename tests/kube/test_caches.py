"""Caches: informers per kind that list before returning, follow changes, notify handlers, and survive cuts and 410."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from engine.apiserver.faults import FaultProfile, WatchCut
from engine.devcluster.cluster import DevCluster
from engine.kube import Caches, Kube

from .helpers import WAIT, Changes, configmap, crd, eventually, install_crd, named


@pytest.fixture
def caches(kube: Kube) -> Iterator[Caches]:
    caches = Caches(kube)
    yield caches
    caches.stop()


@pytest.fixture
def own_caches(own_kube: Kube) -> Iterator[Caches]:
    caches = Caches(own_kube)
    yield caches
    caches.stop()


def test_ensure_returns_with_the_initial_list_in(kube: Kube, namespace: str, caches: Caches) -> None:
    kube.create(configmap("settings", namespace, {"a": "1"}))

    caches.ensure("v1", "ConfigMap")

    cached = caches.get("v1", "ConfigMap", "settings", namespace)
    assert cached is not None and cached["data"] == {"a": "1"}


def test_reads_come_from_the_cache_not_the_server(kube: Kube, namespace: str, caches: Caches) -> None:
    kube.create(configmap("settings", namespace))
    caches.ensure("v1", "ConfigMap")
    before = dict(kube.requests)

    for _ in range(10):
        caches.get("v1", "ConfigMap", "settings", namespace)
        caches.list("v1", "ConfigMap", namespace)

    assert (kube.requests["get"], kube.requests["list"]) == (before.get("get", 0), before.get("list", 0))


def test_a_kind_is_cached_on_its_first_read(kube: Kube, namespace: str, caches: Caches) -> None:
    kube.create(configmap("settings", namespace))

    assert [o["metadata"]["name"] for o in caches.list("v1", "ConfigMap", namespace)] == ["settings"]
    assert caches.get("v1", "ConfigMap", "absent", namespace) is None


def test_handlers_see_added_modified_and_deleted(kube: Kube, namespace: str, caches: Caches) -> None:
    changes = Changes()
    caches.add_handler(changes)
    caches.ensure("v1", "ConfigMap")

    kube.create(configmap("settings", namespace, {"a": "1"}))
    changes.expect(named("ADDED", "settings"))
    kube.patch("v1", "ConfigMap", "settings", namespace, {"data": {"a": "2"}})
    changes.expect(named("MODIFIED", "settings", a="2"))
    assert caches.get("v1", "ConfigMap", "settings", namespace)["data"] == {"a": "2"}
    kube.delete("v1", "ConfigMap", "settings", namespace)
    changes.expect(named("DELETED", "settings"))

    assert caches.get("v1", "ConfigMap", "settings", namespace) is None


def test_handlers_get_copies(kube: Kube, namespace: str, caches: Caches) -> None:
    caches.add_handler(lambda change, obj: obj["metadata"].update(name="mutated"))
    changes = Changes()
    caches.add_handler(changes)
    caches.ensure("v1", "ConfigMap")

    kube.create(configmap("settings", namespace))
    changes.expect(named("ADDED", "settings"))

    assert caches.get("v1", "ConfigMap", "settings", namespace)["metadata"]["name"] == "settings"


def test_readers_get_the_cached_object_and_whether_a_listing_found_it(kube: Kube, namespace: str,
                                                                      caches: Caches) -> None:
    kube.create(configmap("listed", namespace))
    seen: list[tuple[str, bool, dict[str, Any]]] = []
    changes = Changes()
    caches.add_reader(lambda change, obj, listed: seen.append((change, listed, obj)))
    caches.add_handler(changes)
    caches.ensure("v1", "ConfigMap")
    kube.create(configmap("watched", namespace))
    changes.expect(named("ADDED", "watched"))

    mine = {obj["metadata"]["name"]: (change, listed, obj) for change, listed, obj in seen
            if obj["metadata"]["name"] in ("listed", "watched")}
    assert {name: found[:2] for name, found in mine.items()} == {"listed": ("ADDED", True), "watched": ("ADDED", False)}
    for name, (_, _, obj) in mine.items():
        assert obj is caches.shared("v1", "ConfigMap", name, namespace)  # no copy


def test_a_reader_may_read_the_kind_whose_first_list_it_is_told_of(kube: Kube, namespace: str,
                                                                   caches: Caches) -> None:
    """A manager with a shard selector reads the Instance cache while the Instances' first list is handed out."""
    kube.create(configmap("listed", namespace, {"a": "1"}))
    read: list[dict[str, Any] | None] = []

    def reader(_change: str, obj: dict[str, Any], _listed: bool) -> None:
        if obj["metadata"]["name"] == "listed":
            read.append(caches.get("v1", "ConfigMap", "listed", namespace))

    caches.add_reader(reader)
    ensured = threading.Thread(target=caches.ensure, args=("v1", "ConfigMap"), daemon=True)
    ensured.start()
    ensured.join(WAIT)

    assert not ensured.is_alive(), "ensure() did not return: the reader's read waited for the list it was told of"
    assert [found["data"] for found in read if found is not None] == [{"a": "1"}]


def test_get_and_list_give_copies_and_shared_gives_the_cached_object(kube: Kube, namespace: str,
                                                                    caches: Caches) -> None:
    kube.create(configmap("settings", namespace, {"a": "1"}))
    caches.ensure("v1", "ConfigMap")

    caches.get("v1", "ConfigMap", "settings", namespace)["data"]["a"] = "changed"
    for listed in caches.list("v1", "ConfigMap", namespace):
        listed["data"] = {"a": "changed"}

    shared = caches.shared("v1", "ConfigMap", "settings", namespace)
    assert shared is not None and shared["data"] == {"a": "1"}
    assert caches.shared("v1", "ConfigMap", "settings", namespace) is shared
    assert caches.shared("v1", "ConfigMap", "absent", namespace) is None


def test_list_where_keeps_only_what_the_predicate_accepts(kube: Kube, namespace: str, caches: Caches) -> None:
    for name in ("a", "b", "c"):
        kube.create(configmap(name, namespace, {"n": name}))

    kept = caches.list("v1", "ConfigMap", namespace, where=lambda o: (o.get("data") or {}).get("n") != "b")

    assert [o["metadata"]["name"] for o in kept if o["metadata"]["name"] in {"a", "b", "c"}] == ["a", "c"]


def dependent(name: str, namespace: str, owner: dict[str, Any], *, controller: bool = True) -> dict[str, Any]:
    """A ConfigMap whose ownerReference names `owner` (its controller unless `controller` is False)."""
    obj = configmap(name, namespace)
    obj["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
         "controller": controller}]
    return obj


def names(objects: list[dict[str, Any]]) -> list[str]:
    return [o["metadata"]["name"] for o in objects]


def test_controlled_gives_what_a_controller_controls_and_follows_changes(kube: Kube, namespace: str,
                                                                         caches: Caches) -> None:
    a, b = kube.create(configmap("owner-a", namespace)), kube.create(configmap("owner-b", namespace))
    uid_a, uid_b = a["metadata"]["uid"], b["metadata"]["uid"]
    for obj in (dependent("a2", namespace, a), dependent("a1", namespace, a), dependent("b1", namespace, b),
                dependent("only-owned", namespace, a, controller=False), configmap("plain", namespace)):
        kube.create(obj)

    assert names(caches.controlled("v1", "ConfigMap", namespace, uid_a)) == ["a1", "a2"]
    assert names(caches.controlled("v1", "ConfigMap", namespace, uid_b)) == ["b1"]
    assert caches.controlled("v1", "ConfigMap", "elsewhere", uid_a) == []
    assert caches.controlled("v1", "ConfigMap", namespace, "no-such-uid") == []
    assert caches.controlled("v1", "ConfigMap", namespace, uid_a)[0] is caches.shared("v1", "ConfigMap", "a1",
                                                                                       namespace)

    kube.create(dependent("a3", namespace, a))  # the index, made by the first call, is kept from now on
    moved = kube.get("v1", "ConfigMap", "a1", namespace)
    moved["metadata"]["ownerReferences"] = dependent("a1", namespace, b)["metadata"]["ownerReferences"]
    kube.replace(moved)
    kube.delete("v1", "ConfigMap", "a2", namespace)

    eventually(lambda: names(caches.controlled("v1", "ConfigMap", namespace, uid_a)) == ["a3"])
    eventually(lambda: names(caches.controlled("v1", "ConfigMap", namespace, uid_b)) == ["a1", "b1"])
    assert caches.controlled("v1", "ConfigMap", namespace, uid_b)[0] is caches.shared("v1", "ConfigMap", "a1",
                                                                                       namespace)


def test_controlled_is_made_again_from_a_relist(own_cluster: DevCluster, own_kube: Kube, own_caches: Caches) -> None:
    owner = own_kube.create(configmap("owner", "default"))
    uid = owner["metadata"]["uid"]
    own_kube.create(dependent("kept", "default", owner))
    assert names(own_caches.controlled("v1", "ConfigMap", "default", uid)) == ["kept"]
    own_cluster.faults = FaultProfile(watch_max_events=1)
    cut = own_kube.requests["watch"]
    own_kube.apply(configmap("cut-the-watch", "default"))  # the stream ends after this event: a new one is opened
    eventually(lambda: own_kube.requests["watch"] > cut)
    own_cluster.faults = FaultProfile(watch_max_events=1, expire_next_watch=True)
    own_kube.apply(configmap("cut-again", "default"))  # the next watch is refused with 410: the informer lists

    eventually(lambda: own_kube.requests["list"] == 2)
    listed = own_caches.controlled("v1", "ConfigMap", "default", uid)
    assert names(listed) == ["kept"]
    assert listed[0] is own_caches.shared("v1", "ConfigMap", "kept", "default")  # the listed object, not the old one


def test_a_label_selected_cache_holds_only_matching_objects(kube: Kube, namespace: str, caches: Caches) -> None:
    kube.create(configmap("mine", namespace, owner="kplan"))
    kube.create(configmap("other", namespace))

    caches.ensure("v1", "ConfigMap", label_selector="owner=kplan")

    assert [o["metadata"]["name"] for o in caches.list("v1", "ConfigMap", namespace)] == ["mine"]
    with pytest.raises(ValueError, match="already cached with label selector 'owner=kplan'"):
        caches.ensure("v1", "ConfigMap", label_selector="owner=other")


def test_a_declared_selector_holds_whichever_read_comes_first(kube: Kube, namespace: str) -> None:
    kube.create(configmap("mine", namespace, owner="kplan"))
    kube.create(configmap("other", namespace))
    caches = Caches(kube, selectors={("v1", "ConfigMap"): "owner=kplan"})
    try:
        listed = caches.list("v1", "ConfigMap", namespace)  # a handler's read, before anyone ensures the kind
        caches.ensure("v1", "ConfigMap", label_selector="owner=kplan")  # the same selector: no conflict

        assert [o["metadata"]["name"] for o in listed] == ["mine"]
        assert caches.get("v1", "ConfigMap", "other", namespace) is None
    finally:
        caches.stop()


@pytest.fixture
def other_namespace(kube: Kube, namespace: str) -> Iterator[str]:
    name = f"{namespace}-other"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    kube.delete("v1", "Namespace", name)


def test_a_per_namespace_cache_holds_only_the_namespaces_read(kube: Kube, namespace: str, other_namespace: str) -> None:
    """`kplan run`'s caches: each namespace read is listed and watched on its own, all of them only when listed."""
    kube.create(configmap("here", namespace))
    kube.create(configmap("there", other_namespace))
    caches = Caches(kube, per_namespace=True)
    changes, seen = Changes(), set()
    caches.add_handler(changes)
    caches.add_handler(lambda _change, obj: seen.add(obj["metadata"]["namespace"]))
    try:
        caches.ensure("v1", "ConfigMap")  # the Kube's namespace
        kube.create(configmap("elsewhere", other_namespace))
        kube.create(configmap("later", namespace))
        changes.expect(named("ADDED", "later"))
        assert seen == {namespace}
        assert {o["metadata"]["name"] for o in caches.list("v1", "ConfigMap", namespace)} >= {"here", "later"}

        assert caches.get("v1", "ConfigMap", "there", other_namespace) is not None  # a read there caches it too
        everywhere = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in caches.list("v1", "ConfigMap")}
        assert {(namespace, "here"), (other_namespace, "there"), (other_namespace, "elsewhere")} <= everywhere
    finally:
        caches.stop()


def test_cached_objects_keep_who_manages_them_but_not_the_field_sets(kube: Kube, namespace: str,
                                                                     caches: Caches) -> None:
    kube.apply(configmap("settings", namespace, {"a": "1"}), field_manager="first")
    kube.patch("v1", "ConfigMap", "settings", namespace, {"data": {"b": "2"}})  # an Update entry too
    caches.ensure("v1", "ConfigMap")
    kube.apply(configmap("settings", namespace, {"a": "3"}), field_manager="first")  # seen through the watch

    def cached() -> dict[str, Any] | None:
        return caches.get("v1", "ConfigMap", "settings", namespace)

    eventually(lambda: (cached() or {}).get("data", {}).get("a") == "3")
    live, found = kube.get("v1", "ConfigMap", "settings", namespace), cached()
    assert live is not None and found is not None
    entries = live["metadata"]["managedFields"]
    assert all("fieldsV1" in e for e in entries)  # the server's, whole
    assert found["metadata"]["managedFields"] == [{"manager": e["manager"], "operation": e["operation"]}
                                                  for e in entries]
    without = {k: v for k, v in live["metadata"].items() if k != "managedFields"}
    assert {k: v for k, v in found["metadata"].items() if k != "managedFields"} == without
    assert {k: v for k, v in found.items() if k != "metadata"} == {k: v for k, v in live.items() if k != "metadata"}


@pytest.mark.parametrize("cut", [WatchCut.CLOSE, WatchCut.END])
def test_the_cache_follows_changes_across_watch_cuts(
    own_cluster: DevCluster, own_kube: Kube, own_caches: Caches, cut: WatchCut
) -> None:
    changes = Changes()
    own_caches.add_handler(changes)
    own_cluster.faults = FaultProfile(watch_max_events=1, watch_cut=cut)
    own_caches.ensure("v1", "ConfigMap")

    for n in range(4):
        own_kube.apply(configmap("settings", "default", {"n": str(n)}))
        changes.expect(named("ADDED" if n == 0 else "MODIFIED", "settings", n=str(n)))

    assert own_caches.get("v1", "ConfigMap", "settings", "default")["data"] == {"n": "3"}
    assert own_kube.requests["watch"] >= 4
    assert own_kube.requests["list"] == 1


def test_the_cache_lists_again_after_410_expired(own_cluster: DevCluster, own_kube: Kube, own_caches: Caches) -> None:
    changes = Changes()
    own_caches.add_handler(changes)
    own_kube.apply(configmap("before", "default"))
    own_cluster.faults = FaultProfile(expire_next_watch=True)

    own_caches.ensure("v1", "ConfigMap")
    eventually(lambda: own_kube.requests["list"] == 2)
    own_kube.apply(configmap("after", "default"))

    changes.expect(named("ADDED", "after"))
    names = {o["metadata"]["name"] for o in own_caches.list("v1", "ConfigMap", "default")}
    assert {"before", "after"} <= names


def test_the_cache_recovers_after_the_server_fails_for_a_while(
    own_cluster: DevCluster, own_kube: Kube, own_caches: Caches
) -> None:
    changes = Changes()
    own_caches.add_handler(changes)
    own_cluster.faults = FaultProfile(watch_max_events=1)  # every stream ends after one event
    own_caches.ensure("v1", "ConfigMap")
    own_kube.apply(configmap("settings", "default", {"n": "0"}))
    changes.expect(named("ADDED", "settings"))

    own_cluster.faults = FaultProfile(watch_max_events=1, error_rate={"watch": 1.0, "list": 1.0})
    own_kube.apply(configmap("settings", "default", {"n": "1"}))  # made while the cache cannot watch
    failing_since = own_kube.requests["watch"]
    eventually(lambda: own_kube.requests["watch"] >= failing_since + 2)
    own_cluster.faults = FaultProfile()
    own_kube.apply(configmap("settings", "default", {"n": "2"}))

    changes.expect(named("MODIFIED", "settings", n="1"))
    changes.expect(named("MODIFIED", "settings", n="2"))
    assert own_caches.get("v1", "ConfigMap", "settings", "default")["data"] == {"n": "2"}


def test_a_watch_list_fills_the_cache_and_follows_it_with_one_request(kube: Kube, namespace: str) -> None:
    kube.create(configmap("before", namespace, {"a": "1"}))
    caches = Caches(kube, watch_lists=True)
    changes = Changes()
    caches.add_handler(changes)
    try:
        caches.ensure("v1", "ConfigMap")
        assert caches.get("v1", "ConfigMap", "before", namespace)["data"] == {"a": "1"}
        kube.patch("v1", "ConfigMap", "before", namespace, {"data": {"a": "2"}})
        kube.create(configmap("after", namespace))

        changes.expect(named("MODIFIED", "before", a="2"))
        changes.expect(named("ADDED", "after"))
        assert (kube.requests["list"], kube.requests["watch"]) == (0, 1)
    finally:
        caches.stop()


@pytest.mark.parametrize("fault", [FaultProfile(watch_max_events=1), FaultProfile(expire_next_watch=True)],
                         ids=["cut before the initial events end", "410 expired"])
def test_a_watch_list_that_fails_falls_back_to_a_list(own_cluster: DevCluster, own_kube: Kube,
                                                      fault: FaultProfile) -> None:
    for name in ("one", "two"):
        own_kube.apply(configmap(name, "default"))
    own_cluster.faults = fault
    caches = Caches(own_kube, watch_lists=True)
    changes = Changes()
    caches.add_handler(changes)
    try:
        caches.ensure("v1", "ConfigMap")
        assert {"one", "two"} <= {o["metadata"]["name"] for o in caches.list("v1", "ConfigMap", "default")}
        own_kube.apply(configmap("three", "default"))

        changes.expect(named("ADDED", "three"))
        assert own_kube.requests["list"] == 1
    finally:
        caches.stop()


def test_custom_resources_are_cached_like_built_in_kinds(kube: Kube, namespace: str, caches: Caches) -> None:
    group = f"{namespace}.caches.tests.kplan.dev"
    install_crd(kube, crd(group, "Widget"))
    changes = Changes()
    caches.add_handler(changes)
    caches.ensure(f"{group}/v1", "Widget")

    kube.create({"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": namespace}})

    changes.expect(named("ADDED", "w"))
    assert caches.get(f"{group}/v1", "Widget", "w", namespace)["kind"] == "Widget"

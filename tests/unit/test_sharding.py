"""Shards of the Instances: the hash split is stable and total (each Instance on exactly one shard), each shard
has its own Lease name, and `kplan init --shards N` deploys one manager Deployment per shard."""

from __future__ import annotations

import pytest

from engine.cli.manifests import manifests
from engine.controller import Shard, shard_of


def test_every_instance_is_owned_by_exactly_one_shard() -> None:
    keys = [(f"ns-{i % 7}", f"instance-{i}") for i in range(600)]
    for count in (1, 2, 3, 5):
        shards = [Shard(count, index) for index in range(count)]
        for namespace, name in keys:
            assert sum(s.owns(namespace, name) for s in shards) == 1
        sizes = [sum(s.owns(*k) for k in keys) for s in shards]
        assert min(sizes) > len(keys) / count * 0.7  # spread, not piled on one shard


def test_the_hash_is_fixed_so_that_every_process_and_version_agrees() -> None:
    # sha256 of "namespace/name", first 8 bytes, modulo the count: changing it would move Instances between
    # the shards of a running cluster.
    assert [shard_of("shop", f"cache-{i}", 4) for i in range(8)] == [3, 2, 3, 0, 1, 0, 0, 1]
    assert shard_of("shop", "cache", 1) == 0


def test_each_shard_has_a_lease_of_its_own() -> None:
    assert Shard().lease_name("kplan-manager") == "kplan-manager"
    names = {Shard(3, i).lease_name("kplan-manager") for i in range(3)}
    assert names == {"kplan-manager-shard-0", "kplan-manager-shard-1", "kplan-manager-shard-2"}
    blue, green = (Shard(selector=s).lease_name("kplan-manager") for s in ("team=blue", "team=green"))
    assert blue != green and blue.startswith("kplan-manager-")


@pytest.mark.parametrize(("count", "index"), [(0, 0), (2, 2), (2, -1)])
def test_an_index_outside_the_shards_is_refused(count: int, index: int) -> None:
    with pytest.raises(ValueError, match="shard index"):
        Shard(count, index)


def test_init_deploys_one_manager_per_shard() -> None:
    deployments = [o for o in manifests(shards=3, replicas=2) if o["kind"] == "Deployment"]
    assert [d["metadata"]["name"] for d in deployments] == [f"kplan-manager-shard-{i}" for i in range(3)]
    for index, deployment in enumerate(deployments):
        spec = deployment["spec"]
        assert spec["replicas"] == 2
        assert spec["selector"]["matchLabels"]["kplan.dev/shard"] == str(index)
        assert spec["template"]["metadata"]["labels"]["kplan.dev/shard"] == str(index)
        assert spec["template"]["spec"]["containers"][0]["args"][-2:] == ["--shards=3", f"--shard-index={index}"]
    single = [o for o in manifests() if o["kind"] == "Deployment"]
    assert [d["metadata"]["name"] for d in single] == ["kplan-manager"]
    assert not any(a.startswith("--shard") for a in single[0]["spec"]["template"]["spec"]["containers"][0]["args"])

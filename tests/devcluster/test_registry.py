"""The registry answers whether a group and version are served as its listing of them does, also after a custom
resource's versions are served and taken away."""

from __future__ import annotations

from dataclasses import replace

from engine.apiserver.resources import Registry


def agree(registry: Registry, pairs: set[tuple[str, str]]) -> None:
    for group, version in pairs:
        assert registry.serves(group, version) is bool(registry.in_group_version(group, version)), (group, version)


def test_served_group_versions_are_those_the_listing_shows() -> None:
    registry = Registry()
    served = {(rt.group, rt.version) for rt in registry.types()}
    pairs = served | {("batch", "v2"), ("example.com", "v1"), ("", "v2")}
    agree(registry, pairs)
    widget = replace(registry.types()[0], group="example.com", version="v1", plural="widgets", kind="Widget")
    registry.set_custom("widgets.example.com", [widget])
    assert registry.serves("example.com", "v1")
    agree(registry, pairs)
    registry.set_custom("widgets.example.com", [])
    assert not registry.serves("example.com", "v1")
    agree(registry, pairs)

"""`kubectl kplan update -p` with map and array values, a manager running: a value given replaces the old
one (no merge of maps, at any depth), `x={}` empties a map, and an update that changes nothing says so and
returns at once, even with --wait."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_harness import INSTANCE, Cli, package

from engine.controller import Manager
from engine.kube import Kube

WAIT = ("--wait", "--timeout", "60s")


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Cli:
    return Cli(sim_kubeconfig, sim_namespace)


def spec_parameters(kube: Kube, cli: Cli) -> dict[str, Any]:
    found = kube.get(*INSTANCE, "maps", cli.namespace)
    assert found is not None
    return dict(found["spec"]["parameters"])


def rendered(kube: Kube, cli: Cli) -> dict[str, Any]:
    """The ConfigMap's settings and tags, as the last plan rendered them."""
    found = kube.get("v1", "ConfigMap", "maps-config", cli.namespace)
    assert found is not None
    return {key: json.loads(value) for key, value in found["data"].items()}


def test_a_map_value_given_replaces_the_old_map(cli: Cli, sim_kube: Kube, manager: Manager) -> None:
    cli.ok("install", package("cli-maps"), "--instance", "maps", "-p", 'settings={a: "1", n: {x: 1, y: 2}}', *WAIT)

    result = cli.ok("update", "--instance", "maps", "-p", 'settings={b: "2", n: {x: 1}}', *WAIT)

    assert "plan deploy: COMPLETE" in result.out
    assert spec_parameters(sim_kube, cli) == {"settings": {"b": "2", "n": {"x": 1}}}
    assert rendered(sim_kube, cli) == {"settings": {"b": "2", "n": {"x": 1}}, "tags": []}


def test_an_empty_map_empties_the_parameter_and_a_repeat_changes_nothing(
    cli: Cli, sim_kube: Kube, manager: Manager
) -> None:
    cli.ok("install", package("cli-maps"), "--instance", "maps", "-p", 'settings={a: "1"}', "-p", "tags=[x, y]",
           *WAIT)

    emptied = cli.ok("update", "--instance", "maps", "-p", "settings={}", "-p", "tags=[y]", *WAIT)

    assert "plan deploy: COMPLETE" in emptied.out
    assert spec_parameters(sim_kube, cli) == {"settings": {}, "tags": ["y"]}
    assert rendered(sim_kube, cli) == {"settings": {}, "tags": ["y"]}
    before = sim_kube.get(*INSTANCE, "maps", cli.namespace)

    again = cli.ok("update", "--instance", "maps", "-p", "settings={}", *WAIT)

    assert again.out.strip() == "instance.kplan.dev/maps unchanged: the parameters already have these values"
    after = sim_kube.get(*INSTANCE, "maps", cli.namespace)
    assert after is not None and before is not None
    assert after["metadata"]["generation"] == before["metadata"]["generation"]

"""Refusals of secret parameter values never quote the value: `template`, `install`, `run` and `update` say
which rule the value breaks, through the real kubectl, from `-p` and from `-P` files alike.

The harness fails any command whose output holds SECRET, so each bad value below embeds it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_harness import INSTANCE, SECRET, Cli, Result, package

from engine.kube import Kube

PACKAGE = package("secret-rules")
BAD = [
    (f"password={SECRET}!", "parameter 'password' must match the pattern '^[A-Za-z-]+$'"),
    (f"pin={SECRET}", "parameter 'pin' must be an integer"),
    (f"level={SECRET}", "parameter 'level' must be one of 'low', 'high'"),
]


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Cli:
    return Cli(sim_kubeconfig, sim_namespace)


def refusal(result: Result) -> str:
    assert result.code == 1, result.text
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    return lines[0]


@pytest.mark.parametrize(("assignment", "reason"), BAD)
@pytest.mark.parametrize("command", [("template", PACKAGE), ("install", PACKAGE), ("run", PACKAGE)])
def test_a_refused_secret_value_is_never_printed(
    cli: Cli, sim_kube: Kube, command: tuple[str, str], assignment: str, reason: str
) -> None:
    result = cli(*command, "--instance", "vault", "-p", assignment)

    assert refusal(result) == f"error: {reason}"
    assert sim_kube.get(*INSTANCE, "vault", cli.namespace) is None


def test_a_refused_secret_value_from_a_parameter_file_is_never_printed(cli: Cli, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(f"password: '{SECRET}!'\n")

    result = cli("template", PACKAGE, "-P", str(values))

    assert refusal(result) == "error: parameter 'password' must match the pattern '^[A-Za-z-]+$'"


@pytest.mark.parametrize(("assignment", "reason"), BAD)
def test_update_refuses_a_secret_value_without_printing_it(
    cli: Cli, sim_kube: Kube, assignment: str, reason: str
) -> None:
    cli.ok("install", PACKAGE, "--instance", "vault")
    before = sim_kube.get(*INSTANCE, "vault", cli.namespace)

    result = cli("update", "--instance", "vault", "-p", assignment)

    assert refusal(result) == f"error: {reason}"
    after = sim_kube.get(*INSTANCE, "vault", cli.namespace)
    assert after is not None and before is not None
    assert after["spec"] == before["spec"]

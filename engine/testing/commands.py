"""Carrying out a TestStep's commands: kplan commands through the CLI itself, node labels and deletes directly."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from engine.errors import KplanError, PermanentError
from engine.kube import Kube
from engine.testing.model import Command, Verb

__all__ = ["CliRunner", "Scope", "apply_object", "argv", "instance_of", "run_command"]

FIELD_MANAGER = "kplan-test"
CliRunner = Callable[[Sequence[str]], tuple[int, str]]  # kplan's argv -> (exit code, what it printed)
CHANGES_INSTANCE = frozenset({Verb.INSTALL, Verb.UPDATE, Verb.UPGRADE, Verb.TRIGGER})


@dataclass(frozen=True)
class Scope:
    """Where a case's commands act: its namespace, the default Instance name, the package and connection flags."""

    namespace: str
    instance: str
    source: str
    scratch: Path
    connection: tuple[str, ...]

    def package(self, relative: str) -> str:
        """The package a command names, relative to the package under test (itself when not named)."""
        if not relative:
            return self.source
        if not Path(self.source).is_dir():
            raise PermanentError(f"package {relative!r} is relative to the package under test, which is not a folder")
        return str((Path(self.source) / relative).resolve())


def instance_of(command: Command, scope: Scope) -> str | None:
    """The Instance a kplan command changes (None for labels, deletes and free-form commands)."""
    return (command.instance or scope.instance) if command.verb in CHANGES_INSTANCE else None


def argv(command: Command, scope: Scope, parameter_file: str | None = None) -> list[str]:
    """The `kplan` command line of a command (not for label and delete, which act directly)."""
    instance = ["--instance", command.instance or scope.instance]
    given = ["-P", parameter_file] if parameter_file else []
    words: dict[Verb, list[str]] = {
        Verb.INSTALL: ["install", scope.package(command.package), *instance, *given],
        Verb.UPDATE: ["update", *instance, *given],
        Verb.UPGRADE: ["upgrade", scope.package(command.package), *instance, *given],
        Verb.TRIGGER: ["plan", "trigger", command.plan, *instance],
        Verb.UNINSTALL: ["uninstall", *instance],
        Verb.KPLAN: list(command.args),
    }
    return [*words[command.verb], "-n", scope.namespace, *scope.connection]


def run_command(command: Command, number: int, scope: Scope, kube: Kube, cli: CliRunner) -> str | None:
    """Carry out one command; None when it went as expected, else why not (with its output)."""
    code, output = carry_out(command, number, scope, kube, cli)
    what = describe(command)
    if command.expect_failure is False:
        return None if code == 0 else f"{command.where}: {what} failed (exit {code}):\n{indent(output)}"
    if code == 0:
        return f"{command.where}: {what} succeeded, but the test expects it to fail:\n{indent(output)}"
    wanted = command.expect_failure
    if isinstance(wanted, str) and wanted not in output:
        return f"{command.where}: {what} failed, but its output does not say {wanted!r}:\n{indent(output)}"
    return None


def carry_out(command: Command, number: int, scope: Scope, kube: Kube, cli: CliRunner) -> tuple[int, str]:
    try:
        if command.verb is Verb.LABEL:
            return 0, label(kube, command.node, command.labels)
        if command.verb is Verb.DELETE:
            return 0, delete(kube, command.target, scope.namespace)
        given = parameter_file(scope.scratch, number, command.parameters) if command.parameters else None
        return cli(argv(command, scope, given))
    except KplanError as err:
        return 1, f"error: {err}"


def describe(command: Command) -> str:
    if command.verb is Verb.KPLAN:
        return "kplan " + " ".join(command.args)
    return f"{command.verb.value}"


def parameter_file(scratch: Path, number: int, parameters: Mapping[str, Any]) -> str:
    """The parameters as a YAML file for `-P` (types kept exactly, unlike `-p NAME=VALUE`)."""
    path = scratch / f"parameters-{number}.yaml"
    path.write_text(yaml.safe_dump(dict(parameters), sort_keys=True))
    return str(path)


def label(kube: Kube, node: str, labels: Mapping[str, Any]) -> str:
    """Set the labels on the node (null removes one), like `kubectl label node`."""
    kube.patch("v1", "Node", node, None, {"metadata": {"labels": {k: label_value(v) for k, v in labels.items()}}})
    return f"node/{node} labeled"


def label_value(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return str(value).lower() if isinstance(value, bool) else str(value)


def delete(kube: Kube, target: Mapping[str, str], namespace: str) -> str:
    found = kube.delete(target["apiVersion"], target["kind"], target["name"], target.get("namespace") or namespace)
    return f"{target['kind']} {target['name']} {'deleted' if found else 'was already gone'}"


def apply_object(kube: Kube, obj: Mapping[str, Any], namespace: str) -> None:
    """Server-side apply a step's object, in the case's namespace unless it names one (or is cluster-scoped)."""
    body = dict(obj)
    resource = kube.resource(str(body["apiVersion"]), str(body["kind"]))
    if resource.namespaced and not (body.get("metadata") or {}).get("namespace"):
        body["metadata"] = {**(body.get("metadata") or {}), "namespace": namespace}
    kube.apply(body, field_manager=FIELD_MANAGER, force=True)


def indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.rstrip().splitlines()) or "  (no output)"

"""Reading a TestStep's commands: exactly one verb each, with the fields that verb takes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.testing.model import Command, Verb

__all__ = ["read_commands"]

VERB_FIELDS: Mapping[Verb, tuple[frozenset[str], frozenset[str]]] = {  # (required, allowed)
    Verb.INSTALL: (frozenset(), frozenset({"instance", "package", "parameters"})),
    Verb.UPDATE: (frozenset({"parameters"}), frozenset({"instance", "parameters"})),
    Verb.UPGRADE: (frozenset({"package"}), frozenset({"instance", "package", "parameters"})),
    Verb.TRIGGER: (frozenset({"plan"}), frozenset({"instance", "plan"})),
    Verb.UNINSTALL: (frozenset(), frozenset({"instance"})),
    Verb.LABEL: (frozenset({"node", "labels"}), frozenset({"node", "labels"})),
    Verb.DELETE: (frozenset({"apiVersion", "kind", "name"}), frozenset({"apiVersion", "kind", "name", "namespace"})),
}


def read_commands(items: Any, where: str, problems: list[str]) -> list[Command]:
    if not isinstance(items, list):
        problems.append(f"{where}: commands must be a list")
        return []
    commands = []
    for i, item in enumerate(items):
        command = read_command(item, f"{where}: commands[{i}]", problems)
        if command is not None:
            commands.append(command)
    return commands


def read_command(item: Any, where: str, problems: list[str]) -> Command | None:
    """`{VERB: {...}, expectFailure: ...}`: exactly one verb, its fields checked."""
    verbs = [Verb(k) for k in (item if isinstance(item, Mapping) else {}) if k in Verb.__members__.values()]
    if len(verbs) != 1 or any(k not in (verbs[0], "expectFailure") for k in item):
        known = ", ".join(v.value for v in Verb)
        problems.append(f"{where}: must be one of {known} (with an optional expectFailure)")
        return None
    verb, expect = verbs[0], item.get("expectFailure", False)
    if not isinstance(expect, bool | str):
        problems.append(f"{where}: expectFailure must be true or a text the failure's output contains")
        return None
    if verb is Verb.KPLAN:
        args = item[verb.value]
        if not isinstance(args, list) or not args or not all(isinstance(a, str | int | float) for a in args):
            problems.append(f"{where}: kplan takes a list of arguments, e.g. [plan, status, --instance, NAME]")
            return None
        return Command(verb, where, args=tuple(str(a) for a in args), expect_failure=expect)
    body = item[verb.value] if item[verb.value] is not None else {}
    if not isinstance(body, Mapping):
        problems.append(f"{where}: {verb.value} takes a mapping")
        return None
    required, allowed = VERB_FIELDS[verb]
    missing = sorted(required - set(body))
    if missing or not set(body) <= allowed:
        problems.append(f"{where}: {verb.value} takes {', '.join(sorted(allowed)) or 'no fields'}"
                        f"{' and needs ' + ', '.join(missing) if missing else ''}")
        return None
    return command_of(verb, body, where, expect, problems)


def command_of(verb: Verb, body: Mapping[str, Any], where: str, expect: bool | str,
               problems: list[str]) -> Command | None:
    for key in ("parameters", "labels"):
        if key in body and not isinstance(body[key], Mapping):
            problems.append(f"{where}: {verb.value}.{key} must be a mapping")
            return None
    if verb is Verb.UPDATE and not body["parameters"]:
        problems.append(f"{where}: update needs at least one parameter")
        return None
    target = {k: str(body[k]) for k in ("apiVersion", "kind", "name", "namespace") if k in body}
    return Command(
        verb, where, instance=str(body.get("instance") or ""), package=str(body.get("package") or ""),
        parameters=dict(body.get("parameters") or {}), plan=str(body.get("plan") or ""),
        node=str(body.get("node") or ""), labels=dict(body.get("labels") or {}),
        target=target if verb is Verb.DELETE else {}, expect_failure=expect,
    )

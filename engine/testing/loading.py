"""Reading a package's tests/ folder into a Suite: cases, numbered step files, assert and errors files.

    tests/kplan-test.yaml           optional TestSuite: nodes (and their labels), default step timeout
    tests/<case>/NN-<name>.yaml     a TestStep (commands, timeout) and/or objects to apply
    tests/<case>/NN-assert.yaml     objects that must match (subset) before the step's timeout
    tests/<case>/NN-errors.yaml     objects that must not exist (or not match) at that moment

Test files may write `!regex TEXT` for a string field that must contain a match of TEXT.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import yaml

from engine.errors import PermanentError
from engine.package.durations import parse_duration
from engine.testing.commandspecs import read_commands
from engine.testing.matching import Pattern
from engine.testing.model import DEFAULT_TIMEOUT, Case, Command, Expectation, Node, Step, Suite
from engine.yamlbounds import Bounded

Json = Mapping[str, Any]

__all__ = ["SUITE_FILE", "TestsInvalid", "load_suite", "parse_documents"]

API_VERSION = "kplan.dev/v1alpha1"
TESTS = "tests/"
SUITE_FILE = "kplan-test.yaml"
STEP_FILE = re.compile(r"(\d+)-([a-z0-9][-a-z0-9_.]*)\.ya?ml")


class TestsInvalid(PermanentError):
    """The tests folder cannot be run as written; carries every problem found."""

    __test__ = False  # not a pytest test class

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("the package tests are not valid: " + "; ".join(self.problems))


class _Loader(Bounded, yaml.SafeLoader):
    """SafeLoader that reads `!regex TEXT` as a Pattern, with bounded aliases and nesting."""


def _pattern(loader: yaml.SafeLoader, node: yaml.Node) -> Pattern:
    if not isinstance(node, yaml.ScalarNode):
        raise yaml.constructor.ConstructorError(None, None, "!regex takes a string", node.start_mark)
    return Pattern(str(loader.construct_scalar(node)))


_Loader.add_constructor("!regex", _pattern)


def parse_documents(text: str, source: str) -> list[Any]:
    """The non-empty documents of a YAML text; TestsInvalid naming `source` when it does not parse."""
    try:
        return [doc for doc in yaml.load_all(text, Loader=_Loader) if doc is not None]
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise TestsInvalid([f"{where}: not valid YAML: {err.problem or err.context}"]) from None
    except yaml.YAMLError as err:
        raise TestsInvalid([f"{source}: not valid YAML: {' '.join(str(err).split())}"]) from None


def load_suite(files: Mapping[str, str], package: str, instance: str, cases: Sequence[str] = ()) -> Suite:
    """The Suite in a package's files (path in the package -> text); only the named `cases` when given."""
    problems: list[str] = []
    nodes, timeout = suite_settings(files.get(TESTS + SUITE_FILE), problems)
    folders = case_files(files)
    if not folders:
        raise TestsInvalid([f"package {package} has no test cases (folders under tests/ with NN-*.yaml files)"])
    unknown = [name for name in cases if name not in folders]
    if unknown:
        raise TestsInvalid([f"no test case named {name!r} (cases: {', '.join(sorted(folders))})" for name in unknown])
    chosen = [name for name in sorted(folders) if not cases or name in cases]
    loaded = tuple(Case(name, load_steps(name, folders[name], timeout, problems)) for name in chosen)
    if problems:
        raise TestsInvalid(problems)
    return Suite(package, instance, loaded, nodes, timeout)


def case_files(files: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Files of each case folder (tests/<case>/<file>), by case name and file name."""
    found: dict[str, dict[str, str]] = defaultdict(dict)
    for path, text in files.items():
        parts = path.removeprefix(TESTS).split("/") if path.startswith(TESTS) else []
        if len(parts) == 2 and parts[1].endswith((".yaml", ".yml")):
            found[parts[0]][parts[1]] = text
    return dict(found)


def suite_settings(text: str | None, problems: list[str]) -> tuple[tuple[Node, ...], float]:
    if text is None:
        return (), DEFAULT_TIMEOUT
    where = TESTS + SUITE_FILE
    docs = parse_documents(text, where)
    doc = docs[0] if len(docs) == 1 and isinstance(docs[0], Mapping) else None
    if doc is None or doc.get("kind") != "TestSuite":
        problems.append(f"{where}: must be one document of kind TestSuite")
        return (), DEFAULT_TIMEOUT
    check_keys(doc, {"apiVersion", "kind", "timeout", "nodes"}, where, problems)
    found = [read_node(item, f"{where}: nodes[{i}]", problems) for i, item in enumerate(doc.get("nodes") or [])]
    nodes = tuple(node for node in found if node is not None)
    return nodes, duration(doc.get("timeout", DEFAULT_TIMEOUT), where, problems)


def read_node(item: Any, where: str, problems: list[str]) -> Node | None:
    if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
        problems.append(f"{where}: must be a mapping with a name")
        return None
    check_keys(item, {"name", "labels"}, where, problems)
    labels = item.get("labels") or {}
    if not isinstance(labels, Mapping) or not all(isinstance(v, str) for v in labels.values()):
        problems.append(f"{where}: labels must map names to strings")
        return None
    return Node(item["name"], {str(k): str(v) for k, v in labels.items()})


def load_steps(case: str, files: Mapping[str, str], timeout: float, problems: list[str]) -> tuple[Step, ...]:
    """The case's steps in order of their number."""
    grouped: dict[int, list[tuple[str, str, str]]] = defaultdict(list)  # number -> (file, role, text)
    for name in sorted(files):
        match = STEP_FILE.fullmatch(name)
        if match is None:
            problems.append(f"tests/{case}/{name}: not a step file: name it NN-<name>.yaml, NN-assert.yaml or "
                            "NN-errors.yaml")
            continue
        grouped[int(match.group(1))].append((name, match.group(2), files[name]))
    return tuple(load_step(case, index, grouped[index], timeout, problems) for index in sorted(grouped))


def load_step(case: str, index: int, files: Sequence[tuple[str, str, str]], timeout: float,
              problems: list[str]) -> Step:
    name = ""
    commands: list[Command] = []
    objects: list[Json] = []
    asserts: list[Expectation] = []
    errors: list[Expectation] = []
    for file, role, text in files:
        where = f"tests/{case}/{file}"
        docs = parse_documents(text, where)
        if role in ("assert", "errors"):
            (asserts if role == "assert" else errors).extend(read_expectations(docs, where, problems))
            continue
        name = name or role
        for position, doc in enumerate(docs):
            spot = f"{where}#{position + 1}"
            if isinstance(doc, Mapping) and doc.get("kind") == "TestStep":
                check_keys(doc, {"apiVersion", "kind", "timeout", "commands"}, spot, problems)
                timeout = duration(doc.get("timeout", timeout), spot, problems)
                commands += read_commands(doc.get("commands") or [], spot, problems)
            elif (problem := object_problem(doc)) is not None:
                problems.append(f"{spot}: {problem}")
            else:
                objects.append(doc)
    return Step(index, name or "step", timeout, tuple(commands), tuple(objects), tuple(asserts), tuple(errors))


def read_expectations(docs: Iterable[Any], where: str, problems: list[str]) -> list[Expectation]:
    found = []
    for position, doc in enumerate(docs):
        spot = f"{where}#{position + 1}"
        problem = object_problem(doc, named=False)
        if problem:
            problems.append(f"{spot}: {problem}")
        else:
            found.append(Expectation(doc, spot))
    return found


def object_problem(doc: Any, *, named: bool = True) -> str | None:
    """Why a document is not a Kubernetes object kplan test can use, or None."""
    if not isinstance(doc, Mapping):
        return "must be a mapping (a Kubernetes object or a TestStep)"
    if not isinstance(doc.get("apiVersion"), str) or not isinstance(doc.get("kind"), str):
        return "an object needs apiVersion and kind"
    if named and not isinstance((doc.get("metadata") or {}).get("name"), str):
        return f"{doc['kind']} to apply needs metadata.name"
    return None


def check_keys(doc: Mapping[str, Any], allowed: set[str], where: str, problems: list[str]) -> None:
    unknown = sorted(str(k) for k in doc if k not in allowed)
    if unknown:
        problems.append(f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(allowed))})")
    if doc.get("apiVersion", API_VERSION) != API_VERSION:
        problems.append(f"{where}: apiVersion must be {API_VERSION}")


def duration(value: Any, where: str, problems: list[str]) -> float:
    seconds = parse_duration(value)
    if seconds is None or seconds <= 0:
        problems.append(f"{where}: timeout {value!r} is not a duration such as 30s or 2m")
        return DEFAULT_TIMEOUT
    return seconds

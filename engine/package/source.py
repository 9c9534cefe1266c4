"""YAML that remembers where it came from: mappings and lists carry the line of every entry.

Verification reports `file:line: field: message`, so operator.yaml and params.yaml are read
with a loader that records the 1-based line of each mapping key and list item. Timestamps stay
strings, a key given twice is kept in `duplicates` (the schema check reports it with its field
path), and no input raises anything: `parse` turns every failure into a located Problem.
"""

from __future__ import annotations

from typing import Any

import yaml

from engine.errors import Problem
from engine.yamlbounds import Bounded, OutOfBounds

__all__ = ["YList", "YMap", "line_of", "parse"]


class YMap(dict[Any, Any]):
    """A mapping with `line` (where it starts), `lines[key]` (where each key is) and `duplicates`."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.lines: dict[Any, int] = {}
        self.duplicates: list[tuple[Any, int]] = []  # (key, line) of each repeated key; the last value wins


class YList(list[Any]):
    """A list with `line` (where it starts) and `lines[i]` (where item i is)."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.lines: list[int] = []


def line_of(container: object, key: Any = None) -> int | None:
    """The line of `container[key]`, or of the container itself when key is None or unknown."""
    if isinstance(container, YMap) and key in container.lines:
        return container.lines[key]
    if isinstance(container, YList) and isinstance(key, int) and 0 <= key < len(container.lines):
        return container.lines[key]
    return getattr(container, "line", None)


# libyaml's parser when PyYAML has it (several times faster), with the same constructors and marks.
_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(Bounded, _BASE):  # type: ignore[misc,valid-type]
    """SafeLoader building YMap/YList, with bounded aliases and nesting."""


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _construct_map(loader: _Loader, node: yaml.MappingNode) -> YMap:
    loader.flatten_mapping(node)
    result = YMap(_line(node))
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "found a key that is a list or mapping", key_node.start_mark
            ) from None
        if key in result:
            result.duplicates.append((key, _line(key_node)))
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[key] = _line(key_node)
    return result


def _construct_list(loader: _Loader, node: yaml.SequenceNode) -> YList:
    result = YList(_line(node))
    for item in node.value:
        result.append(loader.construct_object(item, deep=True))
        result.lines.append(_line(item))
    return result


def _construct_text(loader: _Loader, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_Loader.add_constructor("tag:yaml.org,2002:seq", _construct_list)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_text)


def parse(file: str, text: str) -> tuple[Any, list[Problem]]:
    """Parse one YAML document; on failure the value is None and the Problem says where and why."""
    try:
        loader = _Loader(text)
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except OutOfBounds as e:
        return None, [Problem(file, _mark_line(e), "", str(e.problem))]
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = int(mark.line) + 1 if mark is not None else None
        return None, [Problem(file, line, "", f"is not valid YAML: {_reason(e, text, line)}")]
    except yaml.reader.ReaderError as e:
        line = text.count("\n", 0, e.position) + 1
        return None, [Problem(file, line, "", f"is not valid YAML: character #x{e.character:04x} is not allowed")]
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError) as e:
        return None, [Problem(file, None, "", f"is not valid YAML: {_first_line(e)}")]
    return data, []


def _mark_line(e: yaml.MarkedYAMLError) -> int | None:
    return int(e.problem_mark.line) + 1 if e.problem_mark is not None else None


def _reason(e: yaml.MarkedYAMLError, text: str, line: int | None) -> str:
    """The parser's complaint, or a plainer one for the most common mistake: tabs in indentation."""
    lines = text.splitlines()
    if line is not None and 0 < line <= len(lines):
        indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
        if "\t" in indent:
            return "line is indented with a tab; YAML needs spaces"
    return str(e.problem or e.context or "unreadable")


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__

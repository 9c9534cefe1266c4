"""Parse a rendered YAML stream into Kubernetes objects: empty documents dropped, the rest checked."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import yaml

from engine.errors import RenderError
from engine.jsoncopy import copy_json
from engine.render import fastyaml
from engine.render.limits import Budget, LimitExceeded, measure
from engine.yamlbounds import Bounded, OutOfBounds

__all__ = ["parse_objects", "pyyaml_objects"]

_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"
_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)



class _Loader(Bounded, _BaseLoader):  # type: ignore[valid-type,misc]
    """Safe YAML without implicit timestamps (like Kubernetes, a date stays a string) and without duplicate keys
    (kubectl refuses them too)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:
                continue  # merged keys may be overridden; only the mapping's own keys must differ
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                continue  # PyYAML refuses it below, with its own message
            if key in seen:
                problem = f"found duplicate key {key!r}"
                raise yaml.constructor.ConstructorError("while constructing a mapping", node.start_mark, problem,
                                                        key_node.start_mark)
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_objects(text: str, file: str, budget: Budget, *, checked: bool = False) -> list[dict[str, Any]]:
    """The objects of a rendered stream; RenderError names `file`, the document and the line.

    Most streams take the fast path (`fastyaml`; `checked`: its plain scalars are known to read alike); the rest,
    and every stream with a problem, PyYAML.
    """
    fast = fastyaml.parse(text, checked=checked)
    if fast is not None and not any(_object_problem(document) for document in fast):
        return fast
    return pyyaml_objects(text, file, budget)


def pyyaml_objects(text: str, file: str, budget: Budget) -> list[dict[str, Any]]:
    """`parse_objects` by PyYAML alone (the reference the fast path must agree with)."""
    loader = _Loader(text)
    objects: list[dict[str, Any]] = []
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            index += 1
            if node is None:
                continue
            document = loader.construct_document(node)
            if document is None:
                continue
            measure(document, budget)  # aliases may expand a small text into a huge value
            objects.append(_checked(copy_json(document), file, index, node.start_mark.line + 1))
    except OutOfBounds as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark is not None else None
        raise RenderError(file, line, f"the rendered output {exc.problem} (rendered line {line})") from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        reason = f"the rendered output is not valid YAML: {problem} (rendered line {line})"
        raise RenderError(file, line, reason) from exc
    except yaml.YAMLError as exc:
        raise RenderError(file, None, f"the rendered output is not valid YAML: {exc}") from exc
    except LimitExceeded as exc:
        raise RenderError(file, None, f"render budget exceeded: {exc}") from exc
    finally:
        loader.dispose()
    return objects


def _checked(document: Any, file: str, index: int, line: int) -> dict[str, Any]:
    problem = _object_problem(document)
    if problem:
        raise RenderError(file, line, f"document {index} is not a Kubernetes object: {problem}")
    result: dict[str, Any] = document
    return result


def _object_problem(document: Any) -> str:
    if not isinstance(document, dict):
        return f"it is a {type(document).__name__}, not a mapping"
    for field in ("apiVersion", "kind"):
        if not isinstance(document.get(field), str) or not document[field]:
            return f"{field} is missing"
    metadata = document.get("metadata")
    if not isinstance(metadata, Mapping):
        return "metadata is missing"
    if not isinstance(metadata.get("name"), str) or not metadata["name"]:
        return "metadata.name is missing"
    for field in ("labels", "annotations"):
        if metadata.get(field) is not None and not isinstance(metadata[field], Mapping):
            return f"metadata.{field} is not a mapping"
    return ""

"""Cycles of `include`, `import` and `extends` among a package's templates, found before anything renders.

A template that includes itself, directly or through others, would render until Python's recursion limit
stops it (seconds later). A cycle of literal template names, each reference taken whenever its template
renders (not under an `if`, in a loop, a macro or a block), never ends, so it is refused up front. The rest —
a template that renders a tree by including itself for each child, or a computed name — is left to the
render, where the recursion limit stops what does not end.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from jinja2 import Environment, nodes
from jinja2.exceptions import TemplateSyntaxError

__all__ = ["Cycle", "Reference", "include_cycle", "include_cycles", "references"]

_PARSER = Environment()  # parses only: the sandbox's syntax is Jinja2's default one
_VERBS = {nodes.Include: "includes", nodes.Import: "imports", nodes.FromImport: "imports", nodes.Extends: "extends"}
_UNCONDITIONAL_BODIES = (nodes.With, nodes.Scope, nodes.ScopedEvalContextModifier)


@dataclass(frozen=True)
class Reference:
    """One literal template name a template loads: where, how, and whether every render of it does."""

    target: str
    line: int
    verb: str  # includes, imports or extends
    always: bool


@dataclass(frozen=True)
class Cycle:
    """Templates that load each other in a circle: `names` starts and ends with the same template; `line` is
    where the first of them loads the second."""

    names: tuple[str, ...]
    line: int
    verbs: tuple[str, ...]

    @property
    def reason(self) -> str:
        """What is wrong, as the rest of a sentence that begins with the first template's name."""
        verb = self.verbs[0] if len(set(self.verbs)) == 1 else "loads"
        return f"{verb} itself ({' → '.join(self.names)})"


@functools.lru_cache(maxsize=1024)
def references(source: str) -> tuple[Reference, ...]:
    """The literal template names `source` loads (none when it does not parse: the render reports that). A source
    without a block tag loads none (it is not parsed: each template of a package is checked when it loads)."""
    if _PARSER.block_start_string not in source:
        return ()
    try:
        tree = _PARSER.parse(source)
    except TemplateSyntaxError:
        return ()
    always = {id(ref) for ref in _unconditional(tree.body)}
    found = []
    for node in tree.find_all(tuple(_VERBS)):
        template = node.template  # type: ignore[attr-defined]
        if isinstance(template, nodes.Const) and isinstance(template.value, str):
            found.append(Reference(template.value, node.lineno, _VERBS[type(node)], id(node) in always))
    return tuple(found)


def _unconditional(body: list[nodes.Node]) -> Iterator[nodes.Node]:
    """The include, import and extends nodes that run whenever `body` runs."""
    for node in body:
        if isinstance(node, tuple(_VERBS)):
            yield node
            if isinstance(node, nodes.Extends):
                return  # what follows renders only where the parent template lets it
        elif isinstance(node, _UNCONDITIONAL_BODIES):
            yield from _unconditional(node.body)


def include_cycle(templates: Mapping[str, str], start: str) -> Cycle | None:
    """A cycle among the templates `start` may load (through any literal reference), or None."""
    reachable, pending = set(), [start]
    while pending:
        name = pending.pop()
        if name in reachable or name not in templates:
            continue
        reachable.add(name)
        pending.extend(ref.target for ref in references(templates[name]))
    return next((cycle for name in sorted(reachable) if (cycle := _cycle_through(templates, name))), None)


def include_cycles(templates: Mapping[str, str]) -> list[Cycle]:
    """Every cycle among `templates`, each once (starting at its first template in name order)."""
    cycles = (_cycle_through(templates, name) for name in sorted(templates))
    return [cycle for cycle in cycles if cycle is not None and cycle.names[0] == min(cycle.names)]


def _cycle_through(templates: Mapping[str, str], start: str) -> Cycle | None:
    """The first cycle of references taken on every render that leads from `start` back to it."""
    path: list[tuple[str, Reference]] = []
    seen: set[str] = set()

    def walk(name: str) -> Cycle | None:
        for ref in references(templates[name]):
            if not ref.always or ref.target not in templates:
                continue
            path.append((name, ref))
            if ref.target == start:
                return Cycle((*(n for n, _ in path), start), path[0][1].line, tuple(r.verb for _, r in path))
            if ref.target not in seen:
                seen.add(ref.target)
                if (found := walk(ref.target)) is not None:
                    return found
            path.pop()
        return None

    return walk(start) if start in templates else None

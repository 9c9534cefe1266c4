"""Rules on templates: they parse, none includes itself, some task uses each, and they name only declared
parameters."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from engine import render
from engine.errors import Problem, RenderError
from engine.package.rules.tasks import template_references
from engine.package.walk import PARAMS_FILE, TEMPLATES_DIR, Docs, parameters, tasks

__all__ = ["include_cycles", "template_parameters", "template_syntax", "unused_templates"]


def template_syntax(docs: Docs) -> Iterator[Problem]:
    for name, source in sorted(docs.templates.items()):
        error = syntax_error(name, source)
        if error is not None:
            yield Problem(TEMPLATES_DIR + name, error.line, "", error.reason)


def include_cycles(docs: Docs) -> Iterator[Problem]:
    """A template that includes (imports, extends) itself on every render would never finish rendering."""
    for cycle in render.include_cycles(docs.templates):
        yield Problem(TEMPLATES_DIR + cycle.names[0], cycle.line, "", cycle.reason)


def unused_templates(docs: Docs) -> Iterator[Problem]:
    used = {file for task in tasks(docs) for _, _, file in template_references(task)}
    for name in sorted(set(docs.templates) - used):
        yield Problem(TEMPLATES_DIR + name, None, "", "is not used by any task", warning=True)


def template_parameters(docs: Docs) -> Iterator[Problem]:
    """`Params.x` in a template needs a parameter x in params.yaml."""
    declared = {p.text("name") for p in parameters(docs)}
    for name, source in sorted(docs.templates.items()):
        if syntax_error(name, source) is not None:
            continue
        for param in sorted(render.referenced_params(source) - declared):
            line = _first_use(source, param)
            yield Problem(TEMPLATES_DIR + name, line, f"Params.{param}", f"is not declared in {PARAMS_FILE}")


@functools.lru_cache(maxsize=256)
def syntax_error(name: str, source: str) -> RenderError | None:
    """`render.check_template` of template `name`, once per name and text: two rules ask, and a package is verified
    again whenever it is loaded (each OperatorVersion the manager reads, the CLI's verify then build). The code it
    compiles is kept for the renders of the template (`render.COMPILED`): a package's first render compiles nothing
    again."""
    return render.check_template(TEMPLATES_DIR + name, source, name=name, cache=render.COMPILED)


def _first_use(source: str, param: str) -> int | None:
    name = re.escape(param)
    use = re.compile(rf"Params\s*(\.\s*{name}\b|\[\s*['\"]{name}['\"]\s*\]|\.\s*get\(\s*['\"]{name}['\"])")
    for number, line in enumerate(source.splitlines(), start=1):
        if use.search(line):
            return number
    return None

"""Package verification: read the documents, run every rule, collect every Problem in one pass."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from engine.errors import Problem
from engine.model import Package
from engine.package import renders
from engine.package.build import build_package
from engine.package.rules import health, metadata, params, plans, shape, tasks, templates
from engine.package.source import YMap, parse
from engine.package.walk import OPERATOR_FILE, PARAMS_FILE, TEMPLATES_DIR, Docs

__all__ = ["RULES", "verify"]

Rule = Callable[[Docs], Iterable[Problem]]

RULES: tuple[Rule, ...] = (
    shape.shape,
    metadata.api_versions,
    metadata.package_name,
    metadata.operator_version,
    metadata.version_ranges,
    tasks.task_names,
    tasks.task_specs,
    tasks.task_templates,
    tasks.wait_resources,
    tasks.pipe_keys,
    tasks.toggle_parameters,
    health.expectation_forms,
    health.expectation_values,
    health.duplicate_health_rules,
    health.health_expressions,
    plans.deploy_plan,
    plans.plan_names,
    plans.step_tasks,
    plans.step_dependencies,
    plans.cycles,
    params.parameter_names,
    params.defaults,
    params.enums,
    params.bounds,
    params.patterns,
    params.triggers,
    params.generated,
    templates.template_syntax,
    templates.include_cycles,
    templates.unused_templates,
    templates.template_parameters,
)

# When a document cannot be read, cross-references cannot be judged: only these rules run.
RULES_FOR_BROKEN: tuple[Rule, ...] = (shape.shape, templates.template_syntax, templates.include_cycles)


def verify(files: Mapping[str, str], source: str, *, render: bool = False) -> tuple[Package | None, list[Problem]]:
    """Check a package's files; the Package when there are no errors, and every Problem, sorted.

    With `render`, every template of every plan is rendered too (engine.package.renders), as `package verify`
    does: a package that loads may still not install with its defaults. Loading a package does not render.
    """
    docs, problems = read_documents(files, source)
    for rule in RULES_FOR_BROKEN if docs.broken else RULES:
        problems.extend(rule(docs))
    errors = {p.file for p in problems if not p.warning}
    renderable = render and not docs.broken and all(file.startswith(TEMPLATES_DIR) for file in errors)
    if not renderable:
        return (None if errors else build_package(docs, files)), sorted(set(problems))
    pkg = build_package(docs, files)  # templates with errors already are not rendered: each is reported once
    found = sorted(set(problems) | set(renders.render_problems(pkg, skip=errors)))
    return (None if any(not p.warning for p in found) else pkg), found


def read_documents(files: Mapping[str, str], source: str) -> tuple[Docs, list[Problem]]:
    problems: list[Problem] = []
    broken: set[str] = set()
    absent = {PARAMS_FILE} if PARAMS_FILE not in files else set()
    if OPERATOR_FILE not in files:
        problems.append(Problem(OPERATOR_FILE, None, "", f"is missing: {source} is not a package"))
        broken.add(OPERATOR_FILE)
    documents: dict[str, YMap | None] = {}
    for name in (OPERATOR_FILE, PARAMS_FILE):
        if name in files:
            document, found = _read_mapping(name, files[name])
            problems.extend(found)
            if document is None:
                broken.add(name)
            documents[name] = document
    templates = {k.removeprefix(TEMPLATES_DIR): v for k, v in files.items() if _is_template(k)}
    docs = Docs(
        operator=_or_empty(documents.get(OPERATOR_FILE)),
        params=_or_empty(documents.get(PARAMS_FILE)),
        templates=templates,
        broken=frozenset(broken),
        absent=frozenset(absent),
    )
    return docs, problems


def _is_template(path: str) -> bool:
    return path.startswith(TEMPLATES_DIR) and path != TEMPLATES_DIR


def _or_empty(document: YMap | None) -> YMap:
    return YMap(1) if document is None else document


def _read_mapping(file: str, text: str) -> tuple[YMap | None, list[Problem]]:
    """The document when it is a mapping; otherwise None and why."""
    data, problems = parse(file, text)
    if problems and data is None:
        return None, problems
    if data is None:
        return None, [Problem(file, None, "", "is empty")]
    if not isinstance(data, YMap):
        return None, [Problem(file, 1, "", "must be a mapping of fields")]
    return data, problems

"""The render check of `package verify` (engine.package.renders): every template of every plan renders with
defaults and placeholders; each failure is one Problem with file and line, at the first place it happens."""

from __future__ import annotations

from engine.errors import Problem
from engine.package import loader, verify
from engine.package.renders import placeholder_values, render_problems

OPERATOR = """apiVersion: kplan.dev/v1alpha1
name: shop
operatorVersion: 0.1.0
tasks:
  - {name: app, kind: Apply, spec: {resources: [app.yaml]}}
  - {name: child, kind: Operator, spec: {package: db, version: "1.0", parameters: {size: "{{ Params.sise }}"}}}
plans:
  deploy:
    phases: [{name: main, steps: [{name: app, tasks: [app]}, {name: child, tasks: [child]}]}]
  update:
    phases: [{name: main, steps: [{name: again, tasks: [app]}]}]
"""
PARAMS = """apiVersion: kplan.dev/v1alpha1
parameters:
  - {name: size, type: integer, minimum: 3, description: no default}
  - {name: mode, enum: [fast, safe], description: no default}
  - {name: flags, type: map, description: no default}
"""
APP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ Name }}\ndata:\n  mode: {{ Params.mode }}\n" \
      "  size: '{{ Params.size + 1 }}'\n  plan: {{ PlanName | upper }}{{ Nmae }}\n"


def files(app: str = APP) -> dict[str, str]:
    return {"operator.yaml": OPERATOR, "params.yaml": PARAMS, "templates/app.yaml": app}


def test_required_parameters_get_placeholders_of_their_type_and_constraints() -> None:
    pkg = loader.from_files(files())

    assert placeholder_values(pkg) == {"size": 3, "mode": "fast", "flags": {}}


def test_each_failure_is_reported_once_where_it_first_happens() -> None:
    pkg = loader.from_files(files())

    assert render_problems(pkg) == [
        Problem("operator.yaml", None, "tasks[child].spec.parameters.size",
                "does not render: 'Params' has no attribute 'sise' (plan deploy, step child)"),
        Problem("templates/app.yaml", 8, "", "does not render: undefined variable 'Nmae' (plan deploy, step app)"),
    ]
    assert render_problems(pkg, skip={"templates/app.yaml"})[1:] == []


def test_verify_renders_only_when_asked() -> None:
    assert verify.verify(files(), "shop")[0] is not None
    pkg, problems = verify.verify(files(), "shop", render=True)
    assert pkg is None and len(problems) == 2

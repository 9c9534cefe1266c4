"""engine.controller.warming: the kinds the deploy plan's templates spell out, the hint warming starts caches of
(computed ones are left to the pass that reads them)."""

from __future__ import annotations

from engine.controller.warming import deploy_templates, template_kinds
from engine.package import loader

OPERATOR = """apiVersion: kplan.dev/v1alpha1
name: warm
operatorVersion: 0.1.0
tasks:
  - {name: app, kind: Apply, spec: {resources: [app.yaml, config.yaml]}}
  - {name: backup, kind: Apply, spec: {resources: [backup.yaml]}}
plans:
  deploy:
    phases:
      - name: main
        steps:
          - {name: app, tasks: [app]}
  backup:
    phases:
      - name: main
        steps:
          - {name: backup, tasks: [backup]}
"""


def test_each_document_names_its_kind() -> None:
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ Name }}\n---\n"
            "# a comment\nkind: Deployment\napiVersion: apps/v1\nspec:\n  template:\n    kind: Nested\n")

    assert template_kinds([text]) == {("v1", "ConfigMap"), ("apps/v1", "Deployment")}


def test_a_job_brings_its_pods_which_a_pass_waiting_on_it_reads() -> None:
    assert template_kinds(["apiVersion: batch/v1\nkind: Job\n"]) == {("batch/v1", "Job"), ("v1", "Pod")}


def test_computed_or_partial_kinds_are_left_out() -> None:
    texts = ["apiVersion: {{ Params.group }}/v1\nkind: Widget\n", "apiVersion: v1\nkind: {{ Params.kind }}\n",
             "kind: ConfigMap\n", "{% if Params.on %}\napiVersion: v1\nkind: Secret\n{% endif %}\n"]

    assert template_kinds(texts) == {("v1", "Secret")}


def test_only_the_deploy_plans_templates_are_looked_at() -> None:
    files = {"operator.yaml": OPERATOR, "params.yaml": "apiVersion: kplan.dev/v1alpha1\nparameters: []\n",
             "templates/app.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\n",
             "templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config}\n",
             "templates/backup.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata: {name: backup}\n"}

    kinds = template_kinds(deploy_templates(loader.from_files(files)))

    assert kinds == {("apps/v1", "Deployment"), ("v1", "ConfigMap")}

"""engine.controller.warming.template_kinds: the kinds a package's templates spell out, the hint warming starts caches
of (computed ones are left to the pass that reads them)."""

from __future__ import annotations

from engine.controller.warming import template_kinds


def test_each_document_names_its_kind() -> None:
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ Name }}\n---\n"
            "# a comment\nkind: Deployment\napiVersion: apps/v1\nspec:\n  template:\n    kind: Nested\n")

    assert template_kinds([text, "apiVersion: batch/v1\nkind: Job\n"]) == {
        ("v1", "ConfigMap"), ("apps/v1", "Deployment"), ("batch/v1", "Job")}


def test_computed_or_partial_kinds_are_left_out() -> None:
    texts = ["apiVersion: {{ Params.group }}/v1\nkind: Widget\n", "apiVersion: v1\nkind: {{ Params.kind }}\n",
             "kind: ConfigMap\n", "{% if Params.on %}\napiVersion: v1\nkind: Secret\n{% endif %}\n"]

    assert template_kinds(texts) == {("v1", "Secret")}

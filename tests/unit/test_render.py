"""Rendering one template: the context names, every kplan filter, multi-document streams, and errors
that name the file, the line and what is missing."""

from __future__ import annotations

import base64
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import yaml
from render_helpers import SMALL, configmap, context, package

from engine.errors import RenderError
from engine.model import PipeFile, Task, TaskKind
from engine.render import (
    CompiledTemplates,
    Limits,
    check_template,
    referenced_params,
    render_string,
    render_task,
    render_template,
)
from engine.render.sandbox import KplanEnvironment


def render_value(expression: str, params: dict[str, object] | None = None, **ctx: object) -> str:
    """The text `{{ expression }}` renders to, through the whole pipeline."""
    pkg = package({"t.yaml": configmap("x", "data:\n  v: {{ (" + expression + ") | string | tojson }}")})
    (obj,) = render_template(pkg, "t.yaml", context(params, **ctx), limits=SMALL)
    value: str = obj["data"]["v"]
    return value


def render_error(source: str, params: dict[str, object] | None = None, file: str = "t.yaml") -> RenderError:
    pkg = package({file: source})
    with pytest.raises(RenderError) as caught:
        render_template(pkg, file, context(params), limits=SMALL)
    return caught.value


class TestContext:
    def test_every_context_name_is_defined(self) -> None:
        names = ["Name", "Namespace", "OperatorName", "OperatorVersion", "AppVersion"]
        names += ["PlanName", "PhaseName", "StepName", "TaskName"]
        ctx = {"plan": "deploy", "phase": "main", "step": "app", "task": "apply-app"}
        values = [render_value(name, **ctx) for name in names]
        assert values == ["cache", "shop", "redis", "0.3.0", "7.2.4", "deploy", "main", "app", "apply-app"]

    def test_params_keep_their_types(self) -> None:
        params = {"replicas": 3, "ratio": 0.5, "on": True, "nodes": ["a", "b"], "labels": {"tier": "db"}}
        assert render_value("Params.replicas + 1", params) == "4"
        assert render_value("Params.ratio * 2", params) == "1.0"
        assert render_value("Params.on is sameas true", params) == "True"
        assert render_value("Params.nodes | join(',')", params) == "a,b"
        assert render_value("Params.labels.tier", params) == "db"
        assert render_value("Params['labels']['tier']", params) == "db"

    def test_a_parameter_named_like_a_mapping_method_is_the_parameter(self) -> None:
        assert render_value("Params.items", {"items": 5}) == "5"
        assert render_value("Params.keys | upper", {"keys": "k"}) == "K"

    def test_mapping_idioms_work_on_params(self) -> None:
        params = {"labels": {"b": "2", "a": "1"}}
        assert render_value("Params.labels | dictsort | map('join', '=') | join(',')", params) == "a=1,b=2"
        assert render_value("Params.labels.items() | list | length", params) == "2"

    def test_pipes_are_readable(self) -> None:
        assert render_value("Pipes.token", pipes={"token": "abc"}) == "abc"

    def test_missing_app_version_is_empty(self) -> None:
        pkg = package({"t.yaml": configmap("x", "data:\n  v: '{{ AppVersion }}'")}, app_version=None)
        (obj,) = render_template(pkg, "t.yaml", context(), limits=SMALL)
        assert obj["data"]["v"] == ""

    def test_templates_cannot_mutate_the_context(self) -> None:
        error = render_error("{% set x = Params.nodes.append(3) %}", {"nodes": [1]})
        assert "not allowed" in error.reason and "append" in error.reason


class TestFilters:
    def test_toyaml_is_block_yaml_with_sorted_keys(self) -> None:
        source = configmap("x", "data:\n  v: |\n    {{ Params.spec | toyaml | indent(4) }}")
        pkg = package({"t.yaml": source})
        (obj,) = render_template(pkg, "t.yaml", context({"spec": {"b": [1, 2], "a": {"c": "d"}}}), limits=SMALL)
        assert obj["data"]["v"] == "a:\n  c: d\nb:\n- 1\n- 2\n"

    def test_toyaml_of_a_scalar_has_no_document_end(self) -> None:
        assert render_value("'x' | toyaml") == "x"

    def test_tojson_is_plain_json_with_sorted_keys(self) -> None:
        assert render_value("Params.m | tojson", {"m": {"b": "<&>", "a": 1}}) == '{"a": 1, "b": "<&>"}'

    def test_base64_round_trip(self) -> None:
        assert render_value("'héllo' | b64encode") == base64.b64encode("héllo".encode()).decode()
        assert render_value("'aGVsbG8=' | b64decode") == "hello"

    def test_b64decode_of_garbage_fails_clearly(self) -> None:
        error = render_error(configmap("x", "data:\n  v: {{ 'not base64!' | b64decode }}"))
        assert "not valid base64" in error.reason

    def test_sha256(self) -> None:
        assert render_value("'abc' | sha256") == hashlib.sha256(b"abc").hexdigest()

    def test_quote_keeps_the_value_through_yaml(self) -> None:
        tricky = "a: b # c 'd' \"e\"\n- f"
        source = configmap("x", "data:\n  v: {{ Params.s | quote }}")
        (obj,) = render_template(package({"t.yaml": source}), "t.yaml", context({"s": tricky}), limits=SMALL)
        assert obj["data"]["v"] == tricky

    def test_shquote_is_a_single_shell_word(self) -> None:
        assert render_value("\"it's\" | shquote") == "'it'\"'\"'s'"

    def test_indent_is_available(self) -> None:
        assert render_value("'a\\nb' | indent(2)") == "a\n  b"

    @pytest.mark.parametrize("value", ["Params.missing", "None", "''", "[]", "{}"])
    def test_required_fails_with_the_authors_message(self, value: str) -> None:
        error = render_error(configmap("x", "data:\n  v: {{ " + value + " | required('set the password') }}"))
        assert error.reason == "set the password"
        assert error.line == 6

    @pytest.mark.parametrize("value", ["0", "False", "'x'"])
    def test_required_passes_values_that_are_present(self, value: str) -> None:
        assert render_value(f"{value} | required('no')") == str(eval(value))

    @pytest.mark.parametrize(
        ("version", "constraint", "expected"),
        [
            ("7.2.4", ">=7.0.0", True),
            ("6.9.0", ">=7.0.0", False),
            ("7.2.4", ">=7.0.0, <8", True),
            ("8.0.0", ">=7.0.0, <8", False),
            ("v7.2", "==7.2.0", True),
            ("7.2.4", "!=7.2.4", False),
            ("7.2.4", "7.2.4", True),
            ("1.0.0-rc.1", "<1.0.0", True),
        ],
    )
    def test_semver_compare(self, version: str, constraint: str, expected: bool) -> None:
        assert render_value(f"'{version}' | semver_compare('{constraint}')") == str(expected)

    def test_semver_compare_uses_app_version(self) -> None:
        assert render_value("AppVersion | semver_compare('>=7.0.0')") == "True"

    def test_semver_compare_rejects_a_bad_version(self) -> None:
        error = render_error(configmap("x", "data:\n  v: \"{{ 'seven' | semver_compare('>1') }}\""))
        assert "'seven' is not a semantic version" in error.reason

    def test_random_is_not_available_for_determinism(self) -> None:
        error = render_error(configmap("x", "data:\n  v: {{ [1, 2] | random }}"))
        assert "No filter named 'random'" in error.reason


class TestDocuments:
    def test_multi_document_stream_keeps_order_and_drops_empty_documents(self) -> None:
        source = "---\n" + configmap("a") + "---\n# only a comment\n---\n\n---\n" + configmap("b") + "---\n"
        objects = render_template(package({"t.yaml": source}), "t.yaml", context(), limits=SMALL)
        assert [obj["metadata"]["name"] for obj in objects] == ["a", "b"]

    def test_documents_from_a_loop(self) -> None:
        source = "{% for i in range(Params.n) %}\n---\n" + configmap("cm-{{ i }}") + "{% endfor %}\n"
        objects = render_template(package({"t.yaml": source}), "t.yaml", context({"n": 3}), limits=SMALL)
        assert [obj["metadata"]["name"] for obj in objects] == ["cm-0", "cm-1", "cm-2"]

    def test_a_conditional_that_renders_nothing_gives_no_objects(self) -> None:
        source = "{% if Params.on %}\n" + configmap("a") + "{% endif %}\n"
        assert render_template(package({"t.yaml": source}), "t.yaml", context({"on": False}), limits=SMALL) == []

    @pytest.mark.parametrize(
        ("document", "problem"),
        [
            ("- a\n", "not a mapping"),
            ("kind: ConfigMap\nmetadata: {name: a}\n", "apiVersion is missing"),
            ("apiVersion: v1\nmetadata: {name: a}\n", "kind is missing"),
            ("apiVersion: v1\nkind: ConfigMap\n", "metadata is missing"),
            ("apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {}}\n", "metadata.name is missing"),
            ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: [x]}\n", "metadata.labels is not a mapping"),
        ],
    )
    def test_a_document_that_is_not_an_object_is_named_by_index(self, document: str, problem: str) -> None:
        error = render_error(configmap("ok") + "---\n" + document)
        assert error.file == "t.yaml"
        assert error.reason.startswith("document 2 is not a Kubernetes object")
        assert problem in error.reason

    def test_invalid_yaml_names_file_and_line(self) -> None:
        error = render_error(configmap("a", "data:\n  k: v\n  bad: [unclosed\n  more: x"))
        assert error.file == "t.yaml"
        assert error.line is not None and error.line >= 6
        assert "not valid YAML" in error.reason

    def test_dates_stay_strings_as_in_kubernetes(self) -> None:
        (obj,) = render_template(package({"t.yaml": configmap("a", "data:\n  d: 2024-01-31")}), "t.yaml", context())
        assert obj["data"]["d"] == "2024-01-31"

    def test_yaml_aliases_are_expanded_into_independent_copies(self) -> None:
        source = (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: &meta\n  name: web\n"
            "spec:\n  template:\n    metadata: *meta\n"
        )
        (obj,) = render_template(package({"t.yaml": source}), "t.yaml", context(), limits=SMALL)
        assert "labels" in obj["metadata"]
        assert obj["spec"]["template"]["metadata"] == {"name": "web"}


class TestErrors:
    def test_undefined_variable_names_file_line_and_variable(self) -> None:
        error = render_error(configmap("x", "data:\n  a: b\n  c: {{ Foo }}"))
        assert (error.file, error.line, error.reason) == ("t.yaml", 7, "undefined variable 'Foo'")
        assert str(error) == "template t.yaml:7: undefined variable 'Foo'"

    def test_misspelled_parameter_names_params_and_the_key(self) -> None:
        error = render_error(configmap("x", "spec:\n  replicas: {{ Params.replicass }}"), {"replicas": 3})
        assert (error.line, error.reason) == (6, "'Params' has no attribute 'replicass'")

    def test_missing_element_of_params(self) -> None:
        assert render_error("{{ Params[0] }}").reason == "'Params' has no element 0"

    def test_nested_missing_key_names_the_path(self) -> None:
        error = render_error("{{ Params.db.hoost }}", {"db": {"host": "h"}})
        assert error.reason == "'Params.db' has no attribute 'hoost'"

    def test_error_inside_an_included_template_names_that_template(self) -> None:
        pkg = package({"main.yaml": "a: 1\n{% include 'part.yaml' %}\n", "part.yaml": "b: 2\nc: {{ Nope }}\n"})
        with pytest.raises(RenderError) as caught:
            render_template(pkg, "main.yaml", context(), limits=SMALL)
        error = caught.value
        assert (error.file, error.line, error.reason) == ("part.yaml", 2, "undefined variable 'Nope'")

    def test_syntax_error_names_file_and_line(self) -> None:
        error = render_error("a: 1\nb: 2\n{% if %}\n")
        assert (error.file, error.line) == ("t.yaml", 3)
        assert error.reason.startswith("syntax error:")

    def test_a_missing_template_is_named(self) -> None:
        with pytest.raises(RenderError) as caught:
            render_template(package({}), "nope.yaml", context())
        assert caught.value.reason == "template 'nope.yaml' is not in the package"

    def test_python_errors_become_render_errors(self) -> None:
        error = render_error("a: 1\n\n{{ 1 // 0 }}\n")
        assert (error.line, error.reason) == (3, "ZeroDivisionError: integer division or modulo by zero")

    def test_strict_undefined_refuses_truthiness_of_missing_values(self) -> None:
        error = render_error("{% if Params.maybe %}x{% endif %}")
        assert error.reason == "'Params' has no attribute 'maybe'"

    def test_default_filter_makes_a_value_optional(self) -> None:
        assert render_value("Params.maybe | default('fallback')") == "fallback"


class TestIncludesAndMacros:
    def test_package_templates_can_be_included_and_imported(self) -> None:
        pkg = package(
            {
                "t.yaml": "{% import 'lib.yaml' as lib %}" + configmap("x", "data:\n  v: {{ lib.greet(Name) }}"),
                "lib.yaml": "{% macro greet(who) %}hello {{ who }}{% endmacro %}",
            }
        )
        (obj,) = render_template(pkg, "t.yaml", context(), limits=SMALL)
        assert obj["data"]["v"] == "hello cache"

    def test_blocks_and_extends(self) -> None:
        pkg = package(
            {
                "base.yaml": configmap("{% block name %}base{% endblock %}"),
                "t.yaml": "{% extends 'base.yaml' %}{% block name %}child-{{ Name }}{% endblock %}",
            }
        )
        (obj,) = render_template(pkg, "t.yaml", context(), limits=SMALL)
        assert obj["metadata"]["name"] == "child-cache"


class TestRenderTask:
    def test_resources_render_in_order(self) -> None:
        pkg = package({"a.yaml": configmap("a"), "b.yaml": configmap("b") + "---\n" + configmap("c")})
        for kind in (TaskKind.APPLY, TaskKind.DELETE, TaskKind.TOGGLE):
            task = Task("t", kind, resources=("b.yaml", "a.yaml"), parameter="on")
            objects = render_task(pkg, task, context({"on": False}), limits=SMALL)
            assert [obj["metadata"]["name"] for obj in objects] == ["b", "c", "a"]

    def test_task_name_is_in_the_context(self) -> None:
        pkg = package({"a.yaml": configmap("{{ TaskName }}")})
        (obj,) = render_task(pkg, Task("make-it", TaskKind.APPLY, resources=("a.yaml",)), context(), limits=SMALL)
        assert obj["metadata"]["name"] == "make-it"

    def test_pipe_task_renders_its_pod(self) -> None:
        pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: gen\nspec:\n  containers: []\n"
        task = Task("p", TaskKind.PIPE, pod="pod.yaml", pipe=(PipeFile("/out", "ConfigMap", "out"),))
        (obj,) = render_task(package({"pod.yaml": pod}), task, context(), limits=SMALL)
        assert obj["kind"] == "Pod"

    @pytest.mark.parametrize("kind", [TaskKind.OPERATOR, TaskKind.WAIT, TaskKind.DUMMY])
    def test_other_kinds_render_nothing(self, kind: TaskKind) -> None:
        assert render_task(package({}), Task("t", kind), context()) == []


class TestRenderString:
    def test_renders_text_with_the_context(self) -> None:
        assert render_string("{{ Name }}-{{ Params.v }}", context({"v": 2})) == "cache-2"

    def test_package_names_need_the_package(self) -> None:
        assert render_string("{{ OperatorName }}", context(), pkg=package({})) == "redis"
        with pytest.raises(RenderError) as caught:
            render_string("{{ OperatorName }}", context(), name="task x package")
        assert (caught.value.file, caught.value.reason) == ("task x package", "undefined variable 'OperatorName'")

    def test_output_is_not_parsed_as_yaml(self) -> None:
        assert render_string("a: b: c", context()) == "a: b: c"


class TestChecks:
    def test_check_template_accepts_valid_source(self) -> None:
        assert check_template("t.yaml", configmap("{{ Name }}")) is None

    def test_check_template_reports_syntax_errors_with_line(self) -> None:
        error = check_template("templates/t.yaml", "a: 1\n{% for x in %}\n")
        assert error is not None
        assert (error.file, error.line) == ("templates/t.yaml", 2)

    def test_check_template_reports_unknown_filters(self) -> None:
        error = check_template("t.yaml", "\n{{ x | frobnicate }}")
        assert error is not None and "frobnicate" in error.reason and error.line == 2

    def test_check_template_does_not_render(self) -> None:
        assert check_template("t.yaml", "{{ Undefined.thing }}{% for i in range(10**9) %}{% endfor %}") is None

    def test_a_checked_template_renders_without_compiling_again(self, monkeypatch: pytest.MonkeyPatch) -> None:
        cache, source = CompiledTemplates(), configmap("x", "data:\n  v: {{ Name }}")
        assert check_template("templates/t.yaml", source, name="t.yaml", cache=cache) is None
        assert len(cache) == 1
        compiles: list[str] = []
        original = KplanEnvironment.compile

        def counted(self: KplanEnvironment, *args: Any, **kwargs: Any) -> Any:
            compiles.append(str(args[1] if len(args) > 1 else kwargs.get("name")))
            return original(self, *args, **kwargs)

        monkeypatch.setattr(KplanEnvironment, "compile", counted)
        (obj,) = render_template(package({"t.yaml": source}), "t.yaml", context(), limits=SMALL, cache=cache)
        assert obj["data"]["v"] == "cache" and compiles == []
        assert check_template("templates/t.yaml", source, name="t.yaml", cache=cache) is None and compiles == []

    def test_a_checked_template_that_does_not_compile_is_reported_as_before(self) -> None:
        cache = CompiledTemplates()
        error = check_template("templates/t.yaml", "a: 1\n{% for x in %}\n", name="t.yaml", cache=cache)
        before = check_template("templates/t.yaml", "a: 1\n{% for x in %}\n")
        assert error is not None and before is not None and len(cache) == 0
        assert (error.file, error.line, error.reason) == (before.file, before.line, before.reason)
        assert (error.file, error.line) == ("templates/t.yaml", 2)

    def test_referenced_params(self) -> None:
        source = (
            "{{ Params.a }} {{ Params['b'] }} {{ Params.get('c') }} {{ Params.d.e }}"
            "{% for k, v in Params.items() %}{% endfor %}{% if Params.f is defined %}{% endif %}"
            "{{ Other.g }} {{ Params[name] }}"
        )
        assert referenced_params(source) == {"a", "b", "c", "d", "f"}

    def test_referenced_params_of_unparsable_source_is_empty(self) -> None:
        assert referenced_params("{{ Params.a ") == set()


def test_rendered_objects_are_plain_data() -> None:
    pkg = package({"t.yaml": configmap("x", "data:\n  v: {{ Params.m | tojson | tojson }}")})
    objects = render_template(pkg, "t.yaml", context({"m": {"a": [1]}}), limits=SMALL)
    assert yaml.safe_load(yaml.safe_dump(objects)) == objects
    assert json.loads(objects[0]["data"]["v"]) == {"a": [1]}


class TestCompiledTemplates:
    def test_cached_renders_equal_fresh_ones(self) -> None:
        cache = CompiledTemplates()
        pkg = package({"t.yaml": configmap("{{ Name }}-{{ Params.n }}")})
        fresh = render_template(pkg, "t.yaml", context({"n": 1}))
        assert render_template(pkg, "t.yaml", context({"n": 1}), cache=cache) == fresh
        assert render_template(pkg, "t.yaml", context({"n": 1}), cache=cache) == fresh
        assert len(cache) == 1

    def test_same_name_with_other_source_is_another_entry(self) -> None:
        cache = CompiledTemplates()
        one, two = package({"t.yaml": configmap("one")}), package({"t.yaml": configmap("two")})
        for _ in range(2):
            assert render_template(one, "t.yaml", context(), cache=cache)[0]["metadata"]["name"] == "one"
            assert render_template(two, "t.yaml", context(), cache=cache)[0]["metadata"]["name"] == "two"
        assert len(cache) == 2

    def test_errors_from_cached_code_still_name_the_line(self) -> None:
        cache = CompiledTemplates()
        pkg = package({"t.yaml": "a: 1\nb: {{ Missing }}\n"})
        for _ in range(2):
            with pytest.raises(RenderError) as caught:
                render_template(pkg, "t.yaml", context(), cache=cache)
            assert (caught.value.line, caught.value.reason) == (2, "undefined variable 'Missing'")

    def test_capacity_is_bounded(self) -> None:
        cache = CompiledTemplates(capacity=2)
        for name in "abc":
            render_string(name, context(), name=name, cache=cache)
        assert len(cache) == 2

    def test_a_render_after_one_that_ran_out_of_budget_gets_a_fresh_budget(self) -> None:
        cache, limits = CompiledTemplates(), Limits(max_operations=5000)
        pkg = package({"loop.yaml": "{% for i in range(Params.n) %}{% endfor %}", "t.yaml": configmap("x")})
        with pytest.raises(RenderError, match="more than 5000 operations"):
            render_template(pkg, "loop.yaml", context({"n": 6000}), limits=limits, cache=cache)
        for _ in range(3):  # each render counts from zero again
            assert render_template(pkg, "loop.yaml", context({"n": 4000}), limits=limits, cache=cache) == []

    def test_renders_with_other_values_templates_or_limits_stay_apart(self) -> None:
        cache = CompiledTemplates()
        one, two = package({"t.yaml": configmap("{{ Params.n }}-one")}), package({"t.yaml": configmap("two")})
        for n in (1, 2, 1):
            assert render_template(one, "t.yaml", context({"n": n}), cache=cache)[0]["metadata"]["name"] == f"{n}-one"
            assert render_template(two, "t.yaml", context(), cache=cache)[0]["metadata"]["name"] == "two"
        big = package({"t.yaml": configmap("x" * 300)})
        assert render_template(big, "t.yaml", context(), cache=cache)[0]["metadata"]["name"] == "x" * 300
        with pytest.raises(RenderError, match="exceeds the limit of 100"):
            render_template(big, "t.yaml", context(), limits=Limits(max_output=100), cache=cache)

    def test_concurrent_renders_never_share_an_environment(self) -> None:
        """Each render holds its environment (and the budget in it) alone while it runs: renders in 4 threads
        that each count 4,800 operations of their own (one per loop item, and three per output) all pass."""
        cache, limits = CompiledTemplates(), Limits(max_operations=5000)
        pkg = package({"t.yaml": "{% for i in range(1200) %}{{ i | string }}{% endfor %}"})
        with ThreadPoolExecutor(4) as pool:
            texts = list(pool.map(lambda _: render_string("{% include 't.yaml' %}", context(), pkg=pkg,
                                                          limits=limits, cache=cache), range(40)))
        assert set(texts) == {"".join(str(i) for i in range(1200))}

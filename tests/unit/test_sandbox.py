"""The template sandbox: no way out to Python internals, files or the environment, and a render budget
that stops runaway loops and huge values (nested loops, recursion, amplifying operations) with a clear
RenderError. Budgets are kept small so a failure here cannot hang the test run."""

from __future__ import annotations

import itertools

import pytest
from render_helpers import SMALL, context, package

from engine.errors import RenderError
from engine.render import Limits, render_string, render_template


def failure(source: str, limits: Limits = SMALL) -> RenderError:
    with pytest.raises(RenderError) as caught:
        render_template(package({"t.yaml": source}), "t.yaml", context({"n": 3}), limits=limits)
    return caught.value


class TestEscapes:
    @pytest.mark.parametrize(
        "source",
        [
            "{{ ''.__class__.__mro__ }}",
            "{{ ''.__class__.__mro__[1].__subclasses__() }}",
            "{{ cycler.__init__.__globals__ }}",
            "{{ joiner.__init__.__globals__.os }}",
            "{{ namespace.__init__.__globals__ }}",
            "{{ Params.__class__ }}",
            "{{ (1).__class__.__base__ }}",
            "{{ dict.mro() }}",
            "{{ range.__globals__ }}",
            "{{ self.__init__.__globals__ }}",
            "{% for x in range(1) %}{{ loop.__class__ }}{% endfor %}",
            "{{ ''|attr('__class__') }}",
            "{{ '{0.__class__}'.format('') }}",
        ],
    )
    def test_python_internals_are_unreachable(self, source: str) -> None:
        error = failure(source)
        assert error.file == "t.yaml" and error.line == 1
        assert error.reason.startswith("not allowed in a template:") and "unsafe" in error.reason

    @pytest.mark.parametrize(
        ("source", "name"),
        [
            ("{{ lipsum.__globals__ }}", "lipsum"),
            ("{{ open('/etc/passwd').read() }}", "open"),
            ("{{ os.environ }}", "os"),
            ("{{ environ }}", "environ"),
            ("{{ __import__('os') }}", "__import__"),
            ("{{ config }}", "config"),
            ("{{ request }}", "request"),
        ],
    )
    def test_builtins_and_the_process_environment_are_not_there(self, source: str, name: str) -> None:
        assert failure(source).reason == f"undefined variable {name!r}"

    @pytest.mark.parametrize(
        "source",
        [
            "{% include '/etc/passwd' %}",
            "{% include '../../../../etc/passwd' %}",
            "{% import '/etc/hostname' as h %}",
            "{% extends '/etc/passwd' %}",
        ],
    )
    def test_only_package_templates_can_be_loaded(self, source: str) -> None:
        error = failure(source)
        assert error.reason.endswith("is not in the package")
        assert "root:" not in str(error)

    def test_builtin_containers_cannot_be_mutated(self) -> None:
        assert "not allowed" in failure("{% set d = {} %}{{ d.update({'a': 1}) }}").reason
        assert "not allowed" in failure("{% set l = [] %}{{ l.append(1) }}").reason


class TestBudget:
    @pytest.mark.parametrize(
        "source",
        [
            "{% for i in range(10**9) %}{% endfor %}",
            "{% for i in range(10**30) %}{% endfor %}",
            "{{ range(10**9) | list }}",
        ],
    )
    def test_range_is_capped(self, source: str) -> None:
        assert "range() of" in failure(source).reason

    @pytest.mark.parametrize(
        "source",
        [
            "{% for i in range(5000) %}{% for j in range(5000) %}{% endfor %}{% endfor %}",
            "{% for i in range(100) %}{% for j in range(100) %}{% for k in range(100) %}{{ k }}{% endfor %}"
            "{% endfor %}{% endfor %}",
            "{% for i in range(5000) %}{% for j in (range(5000) | list) %}{% endfor %}{% endfor %}",
            "{% for x in range(5000) recursive %}{% if loop.depth < 4 %}{{ loop(range(100)) }}{% endif %}{% endfor %}",
            "{% macro f(n) %}{% for i in range(3) %}{{ f(n + 1) if n < 30 }}{% endfor %}{% endmacro %}{{ f(0) }}",
        ],
    )
    def test_nested_loops_run_out_of_operations(self, source: str) -> None:
        error = failure(source)
        assert error.reason.startswith("render budget exceeded: more than 50000 operations")
        assert error.line == 1

    def test_unbounded_recursion_fails_cleanly(self) -> None:
        assert failure("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").reason == "recursion is too deep"

    @pytest.mark.parametrize(
        "source",
        [
            "{{ 'a' * 10**9 }}",
            "{{ 10**9 * 'a' }}",
            "{{ ['a'] * 10**9 }}",
            "{% set s = 'a' * 100000 %}{{ s + s + s }}",
            "{{ 'a'.ljust(10**9) }}",
            "{{ 'a'.center(10**9) }}",
            "{{ 'a'.zfill(10**9) }}",
            "{{ ('\t' * 1000).expandtabs(100000) }}",
            "{{ ('a' * 1000).replace('', 'b' * 1000) }}",
            "{{ ('a' * 1000).translate({97: 'b' * 1000}) }}",
            "{{ ','.join(['a' * 1000] * 1000) }}",
            "{{ (1).to_bytes(10**9, 'big') }}",
            "{{ '{:>1000000000}'.format(1) }}",
            "{{ '{:>{w}}'.format(1, w=10**9) }}",
            "{{ ('{:>1000000000}' | attr('format'))(1) }}",
            "{{ '{x:>1000000000}'.format_map({'x': 1}) }}",
            "{{ '%1000000000d' % 1 }}",
            "{{ '%*d' % (10**9, 1) }}",
            "{{ '%1000000000d' | format(1) }}",
            "{{ 'a' | center(1000000000) }}",
            "{{ 'a\nb' | indent(1000000000) }}",
            "{{ ('a' * 1000) | replace('', 'b' * 1000) }}",
            "{{ ('a ' * 1000) | wordwrap(1, wrapstring='x' * 1000) }}",
            "{{ [1] | batch(10**9, 'x') | list }}",
            "{{ [1] | slice(10**9) | list }}",
            "{{ ([range(5000) | list] * 5000) | sum(start=[]) }}",
            "{{ (['a' * 1000] * 1000) | join }}",
            "{% set ns = namespace(s='a') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
            "{% macro d(s, n) %}{% if n %}{{ d(s ~ s, n - 1) }}{% else %}{{ s | length }}{% endif %}{% endmacro %}"
            "{{ d('a', 60) }}",
            "{% set a = ['x' * 100] %}{% set b = [a, a, a, a, a, a, a, a] %}{% set c = [b, b, b, b, b, b, b, b] %}"
            "{% set d = [c, c, c, c, c, c, c, c] %}{% set e = [d, d, d, d, d, d, d, d] %}{{ e }}",
            "{% set a = ['x' * 100] %}{% set b = [a, a, a, a, a, a, a, a] %}{% set c = [b, b, b, b, b, b, b, b] %}"
            "{% set d = [c, c, c, c, c, c, c, c] %}{% set e = [d, d, d, d, d, d, d, d] %}{{ e | tojson }}",
            "{% set s = 'x' * 100000 %}{% for i in range(100) %}{{ s }}{% endfor %}",
            "{% set s = 'x' * 100000 %}{% set big %}{% for i in range(100) %}{{ s }}{% endfor %}{% endset %}",
        ],
    )
    def test_huge_values_are_refused_before_they_are_built(self, source: str) -> None:
        error = failure(source)
        assert error.reason.startswith("render budget exceeded:") or error.reason.startswith("not allowed")
        assert "exceeds the limit" in error.reason or "operations" in error.reason or "not allowed" in error.reason

    def test_huge_integers_are_refused(self) -> None:
        assert "integer of about" in failure("{{ 2 ** (10**9) }}").reason
        assert "integer of about" in failure("{% set x = 2 ** 500 %}{{ x * x }}").reason

    def test_the_deadline_stops_a_slow_render(self) -> None:
        ticks = itertools.count(0.0, 1.0)  # every look at the clock is one second later
        with pytest.raises(RenderError) as caught:
            render_string(
                "{% for i in range(1000) %}{{ i }}{% endfor %}",
                context(),
                limits=Limits(max_seconds=5),
                clock=lambda: next(ticks),
            )
        assert caught.value.reason == "render budget exceeded: rendering took longer than 5s"

    def test_each_render_of_a_plan_gets_a_fresh_budget(self) -> None:
        source = "{% for i in range(4000) %}{% endfor %}"
        limits = Limits(max_operations=5000)
        pkg = package({"t.yaml": source})
        assert render_template(pkg, "t.yaml", context(), limits=limits) == []
        assert render_template(pkg, "t.yaml", context(), limits=limits) == []
        assert render_string(source, context(), limits=limits, pkg=pkg) == ""
        with pytest.raises(RenderError):
            render_string(source * 2, context(), limits=limits)

    def test_reasonable_templates_fit_the_default_budget(self) -> None:
        source = (
            "{% for i in range(200) %}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{{ i }}\n"
            "data:\n{% for j in range(20) %}  k{{ j }}: {{ ('v' ~ i ~ '-' ~ j) | b64encode | quote }}\n{% endfor %}"
            "{% endfor %}"
        )
        objects = render_template(package({"t.yaml": source}), "t.yaml", context())
        assert len(objects) == 200 and len(objects[-1]["data"]) == 20

    def test_output_size_is_capped(self) -> None:
        source = "{% for i in range(3000) %}" + "x" * 100 + "{% endfor %}"
        assert "template output of" in failure(source).reason

"""CEL with the Kubernetes extensions (engine.cel): library functions, runtime errors in cel-go's words,
schema checks of field selections placed as cel-go places them, escaped property names, and compile caching."""

from __future__ import annotations

from typing import Any

import pytest

from engine import cel
from engine.cel.programs import go_words

SPEC: dict[str, Any] = {
    "size": {"type": "integer"},
    "template": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"spec": {"type": "object"}}},
    "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
}
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"spec": {"type": "object", "properties": SPEC}}}


def run(source: str, value: Any = None) -> Any:
    return cel.compile_checked(source, {"self": None}).evaluate({"self": value})


@pytest.mark.parametrize(("source", "result"), [
    ("[1, 2, 2].isSorted() && ![2, 1].isSorted()", True), ("[1, 2, 3].sum()", 6), ("[3, 1, 2].min()", 1),
    ("['b', 'a'].max()", "b"), ("'abc123'.find('[0-9]+')", "123"), ("'a1b2c3'.findAll('[0-9]', 2)", ["1", "2"]),
    ("quantity('1') == quantity('1000m')", True), ("quantity('1.5Gi').compareTo(quantity('1536Mi'))", 0),
    ("quantity('2').add(quantity('500m')).isGreaterThan(quantity('2.4'))", True),
    ("quantity('1k').sub(1).asInteger()", 999), ("quantity('-1m').sign()", -1),
    ("quantity('1.5').isInteger()", False), ("isQuantity('1Gi') && !isQuantity('1GB')", True),
    ("'Hello'.lowerAscii().startsWith('he') && 'a,b'.split(',').join('-') == 'a-b'", True),
    ("self.?spec.?size.orValue(7)", 7), ("[1, 2].exists_one(x, x == 2) && [1, 2].map(x, x * 2) == [2, 4]", True),
])
def test_library_functions(source: str, result: Any) -> None:
    assert run(source, {}) == result


@pytest.mark.parametrize(("source", "value", "error"), [
    ("self.missing == 1", {}, "no such key: missing"), ("self.items[3] == 1", {"items": [1]},
                                                          "index out of bounds: 3"),
    ("self.n / 0 == 1", {"n": 1}, "division by zero"), ("self.n % 0 == 1", {"n": 1}, "modulus by zero"),
    ("self.n + self.s == 1", {"n": 1, "s": "x"}, "no such overload"), ("[].min() == 1", {},
                                                                       "min called on empty list"),
    ("quantity(self.s).sign() == 1", {"s": "1GB"},
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
])
def test_runtime_errors_read_like_cel_go(source: str, value: Any, error: str) -> None:
    with pytest.raises(cel.EvalError) as caught:
        run(source, value)
    assert str(caught.value) == error


def test_cel_cpp_status_prefixes_are_dropped() -> None:
    assert go_words("OUT_OF_RANGE: integer overflow") == "integer overflow"


@pytest.mark.parametrize(("source", "error"), [
    ("self.spec.nope > 1", "ERROR: <input>:1:10: undefined field 'nope'\n | self.spec.nope > 1\n | .........^"),
    ("has(self.spec.size.x)", "ERROR: <input>:1:19: type 'int' does not support field selection\n"
                              " | has(self.spec.size.x)\n | ..................^"),
    ("self.metadata.labels.a == 'b'", "ERROR: <input>:1:14: undefined field 'labels'\n"
                                      " | self.metadata.labels.a == 'b'\n | .............^"),
    ("self.spec.items.all(i, i.nope)", "ERROR: <input>:1:25: undefined field 'nope'\n"
                                       " | self.spec.items.all(i, i.nope)\n | ........................^"),
    ("self.spec.labels.exists(k, k.x)", "ERROR: <input>:1:29: type 'string' does not support field selection\n"
                                        " | self.spec.labels.exists(k, k.x)\n | ............................^"),
    ("true &&\n  self.spec.nope", "ERROR: <input>:2:12: undefined field 'nope'\n |   self.spec.nope\n"
                                  " | ...........^"),
])
def test_field_selections_are_checked_against_the_schema(source: str, error: str) -> None:
    with pytest.raises(cel.CompileError) as caught:
        cel.compile_checked(source, {"self": cel.resource_root(SCHEMA)})
    assert str(caught.value) == error


@pytest.mark.parametrize("source", [
    "self.spec.labels.anything == 'x'", "self.spec.free.a.b.c == 1", "self.metadata.name.startsWith('a')",
    "'self.spec.nope' == self.metadata.name", "self.apiVersion == 'v1' && self.kind == 'K'",
    "self.spec.items.all(x, x.name != '') && self.spec.labels.all(x, x != '')",
    "self.spec.template.metadata.name == 'x' && self.spec.template.kind == 'Pod'",
])
def test_maps_open_objects_methods_and_strings_pass_the_field_check(source: str) -> None:
    cel.compile_checked(source, {"self": cel.resource_root(SCHEMA)})


def test_a_single_selection_chain_takes_its_type_from_the_schema() -> None:
    variables = {"self": cel.resource_root(SCHEMA)}
    assert cel.result_type(cel.compile_checked("self.spec.size", variables), variables) == "int"
    assert cel.result_type(cel.compile_checked("self.spec.size > 1", variables), variables) == "bool"


def test_property_names_are_escaped_for_cel() -> None:
    schema = {"type": "object", "properties": {"namespace": {"type": "string"}, "max-size": {"type": "integer"},
                                               "labels": {"type": "object",
                                                          "additionalProperties": {"type": "string"}}}}
    value = cel.to_cel(schema, {"namespace": "n", "max-size": 2, "labels": {"a-b": "c"}})
    assert value == {"__namespace__": "n", "max__dash__size": 2, "labels": {"a-b": "c"}}
    program = cel.compile_checked("self.__namespace__ == 'n' && self.max__dash__size == 2 && "
                                  "self.labels['a-b'] == 'c'", {"self": schema})
    assert program.evaluate({"self": value}) is True


def test_programs_are_compiled_once() -> None:
    first = cel.compile_checked("self.x == 1", {"self": None})
    assert cel.compile_checked("self.x == 1", {"self": None}).expression is first.expression

"""Parameter values: coercion of -p text by type, -P files, validation against declarations, redaction."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest

from engine import params
from engine.errors import KplanError, ParameterInvalid, PermanentError
from engine.model import Package, Parameter, ParamType


def package(*parameters: Parameter) -> Package:
    return Package(name="demo", operator_version="0.1.0", tasks=(), plans=MappingProxyType({}), parameters=parameters)


REPLICAS = Parameter(name="replicas", type=ParamType.INTEGER, default=3, has_default=True, required=False)
IMAGE = Parameter(name="image", default="nginx", has_default=True, required=False)
PASSWORD = Parameter(name="password", secret=True, required=True)
DEMO = package(REPLICAS, IMAGE, PASSWORD)


@pytest.mark.parametrize(
    ("kind", "raw", "value"),
    [
        (ParamType.STRING, " text with spaces ", " text with spaces "),
        (ParamType.STRING, "3", "3"),
        (ParamType.INTEGER, "3", 3),
        (ParamType.INTEGER, " -12 ", -12),
        (ParamType.NUMBER, "3", 3),
        (ParamType.NUMBER, "1.5", 1.5),
        (ParamType.NUMBER, "-2e3", -2000.0),
        (ParamType.BOOLEAN, "true", True),
        (ParamType.BOOLEAN, "Yes", True),
        (ParamType.BOOLEAN, "no", False),
        (ParamType.BOOLEAN, "FALSE", False),
        (ParamType.ARRAY, "[a, 1]", ["a", 1]),
        (ParamType.ARRAY, "[]", []),
        (ParamType.MAP, "{a: 1, b: [x]}", {"a": 1, "b": ["x"]}),
    ],
)
def test_coerce_types_text_by_the_declared_type(kind: ParamType, raw: str, value: object) -> None:
    result = params.coerce(Parameter(name="p", type=kind), raw)
    assert result == value
    assert type(result) is type(value)


@pytest.mark.parametrize(
    ("kind", "raw", "message"),
    [
        (ParamType.INTEGER, "3.5", "parameter 'p' must be an integer, got '3.5'"),
        (ParamType.INTEGER, "three", "parameter 'p' must be an integer, got 'three'"),
        (ParamType.NUMBER, "nan", "parameter 'p' must be a number, got 'nan'"),
        (ParamType.NUMBER, "1,5", "parameter 'p' must be a number, got '1,5'"),
        (ParamType.BOOLEAN, "maybe", "parameter 'p' must be a boolean, got 'maybe'"),
        (ParamType.ARRAY, "{a: 1}", "parameter 'p' must be an array, got '{a: 1}'"),
        (ParamType.MAP, "[1, 2]", "parameter 'p' must be a map, got '[1, 2]'"),
        (ParamType.MAP, "{a: [", "parameter 'p' must be a map, got '{a: ['"),
    ],
)
def test_coerce_refuses_text_of_another_type(kind: ParamType, raw: str, message: str) -> None:
    with pytest.raises(ParameterInvalid) as e:
        params.coerce(Parameter(name="p", type=kind), raw)
    assert str(e.value) == message
    assert e.value.name == "p"


def test_parse_assignments_types_each_value_and_lets_the_last_one_win() -> None:
    values = params.parse_assignments(DEMO, ["replicas=5", "image=redis:7=latest", "replicas=1"])
    assert values == {"replicas": 1, "image": "redis:7=latest"}


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("replicas", "parameter 'replicas' must be given as NAME=VALUE"),
        ("colour=red", "parameter 'colour' is not declared by package 'demo'"),
        ("replicas=many", "parameter 'replicas' must be an integer, got 'many'"),
    ],
)
def test_parse_assignments_refuses_bad_pairs(pair: str, message: str) -> None:
    with pytest.raises(ParameterInvalid, match=f"^{message}$"):
        params.parse_assignments(DEMO, [pair])


def test_resolve_fills_defaults_and_keeps_given_values() -> None:
    assert params.resolve(DEMO, {"replicas": 5, "password": "s3cret"}) == {
        "image": "nginx",
        "password": "s3cret",
        "replicas": 5,
    }


def test_resolve_gives_optional_parameters_without_default_the_value_none() -> None:
    optional = Parameter(name="extra", required=False)
    assert params.resolve(package(optional), {}) == {"extra": None}


def test_resolve_treats_an_explicit_null_as_not_given() -> None:
    assert params.resolve(DEMO, {"replicas": None, "password": "x"})["replicas"] == 3


def test_resolve_requires_required_parameters() -> None:
    with pytest.raises(ParameterInvalid, match=r"^parameter 'password' is required and has no default$"):
        params.resolve(DEMO, {})


def test_resolve_names_every_missing_required_parameter_at_once() -> None:
    token = Parameter(name="token", required=True)
    with pytest.raises(ParameterInvalid, match=r"^parameters 'password', 'token' are required and have no default$"):
        params.resolve(package(REPLICAS, PASSWORD, token), {})


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "true"), (False, "false"), (None, "null"), (3, "3"), (3.0, "3"), (2.5, "2.5"), ("text", "text"),
        ("3", "'3'"), ("true", "'true'"), ("", "''"), ({"greeting": "Warm greetings!"}, "{greeting: Warm greetings!}"),
        (["a", "b"], "[a, b]"), ({}, "{}"), ({"a": {"b": [1, True]}}, "{a: {b: [1, true]}}"), ("*****", "*****"),
    ],
)
def test_values_are_shown_as_yaml_not_python(value: object, text: str) -> None:
    assert params.value_text(value) == text


def test_resolve_refuses_undeclared_names() -> None:
    with pytest.raises(ParameterInvalid, match=r"^parameter 'colour' is not declared by package 'demo'$"):
        params.resolve(DEMO, {"colour": "red", "password": "x"})


@pytest.mark.parametrize(
    ("param", "value", "reason"),
    [
        (Parameter(name="p"), 3, "must be a string, got 3"),
        (Parameter(name="p", type=ParamType.INTEGER), True, "must be an integer, got true"),
        (Parameter(name="p", type=ParamType.INTEGER), 2.5, "must be an integer, got 2.5"),
        (Parameter(name="p", type=ParamType.NUMBER), "1", "must be a number, got '1'"),
        (Parameter(name="p", type=ParamType.BOOLEAN), "true", "must be a boolean, got 'true'"),
        (Parameter(name="p", type=ParamType.ARRAY), {"a": 1}, "must be an array, got {a: 1}"),
        (Parameter(name="p", type=ParamType.MAP), [1], "must be a map, got [1]"),
        (Parameter(name="p", type=ParamType.INTEGER, enum=(1, 3, 5)), 2, "must be one of 1, 3, 5, got 2"),
        (Parameter(name="p", enum=("a", "b")), "c", "must be one of 'a', 'b', got 'c'"),
        (Parameter(name="p", type=ParamType.INTEGER, minimum=1), 0, "must be at least 1, got 0"),
        (Parameter(name="p", type=ParamType.NUMBER, maximum=1.5), 2, "must be at most 1.5, got 2"),
        (Parameter(name="p", pattern=r"^[a-z]+$"), "Abc", "must match the pattern '^[a-z]+$', got 'Abc'"),
        (Parameter(name="p", min_length=3), "ab", "must have at least 3 characters, got 2"),
        (Parameter(name="p", max_length=2), "abc", "must have at most 2 characters, got 3"),
        (Parameter(name="p", type=ParamType.ARRAY, max_length=1), [1, 2], "must have at most 1 item, got 2"),
    ],
)
def test_violation_names_what_is_wrong(param: Parameter, value: object, reason: str) -> None:
    assert params.violation(param, value) == reason
    with pytest.raises(ParameterInvalid) as e:
        params.validate(param, value)
    assert str(e.value) == f"parameter 'p' {reason}"


@pytest.mark.parametrize(
    ("param", "value"),
    [
        (Parameter(name="p", type=ParamType.INTEGER, enum=(1, 3), minimum=1, maximum=3), 3),
        (Parameter(name="p", type=ParamType.NUMBER, minimum=0.5), 1),
        (Parameter(name="p", pattern="[0-9]"), "a1b"),
        (Parameter(name="p", min_length=2, max_length=2), "ab"),
        (Parameter(name="p", type=ParamType.BOOLEAN, enum=(True,)), True),
        (Parameter(name="p", type=ParamType.MAP), {}),
    ],
)
def test_violation_accepts_fitting_values(param: Parameter, value: object) -> None:
    assert params.violation(param, value) is None


def test_enum_keeps_booleans_apart_from_numbers() -> None:
    assert params.violation(Parameter(name="p", type=ParamType.INTEGER, enum=(1,)), True) is not None
    assert params.violation(Parameter(name="p", type=ParamType.NUMBER, enum=(1,)), 1.0) is None


def test_resolve_validates_given_values() -> None:
    strict = Parameter(name="replicas", type=ParamType.INTEGER, enum=(1, 3), default=1, has_default=True)
    with pytest.raises(ParameterInvalid, match=r"^parameter 'replicas' must be one of 1, 3, got 2$"):
        params.resolve(package(strict), {"replicas": 2})


def test_load_file_reads_a_mapping_and_types_quoted_values(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("replicas: '5'\nimage: redis\n")
    assert params.load_file(DEMO, str(path)) == {"replicas": 5, "image": "redis"}


def test_load_file_of_an_empty_file_gives_no_values(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("")
    assert params.load_file(DEMO, str(path)) == {}


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("replicas: [1]\n", ParameterInvalid, "parameter 'replicas' must be an integer, got [1]"),
        ("colour: red\n", ParameterInvalid, "parameter 'colour' is not declared by package 'demo'"),
        ("- replicas\n", PermanentError, "must hold a mapping of parameter names to values"),
        ("a: [\n", PermanentError, "is not valid YAML"),
    ],
)
def test_load_file_refuses_bad_files(tmp_path: Path, text: str, error: type[KplanError], message: str) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(text)
    with pytest.raises(error, match=message.replace("[", r"\[")):
        params.load_file(DEMO, str(path))


def test_load_file_names_the_line_of_broken_yaml(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("replicas: 3\n  image: x\n")
    with pytest.raises(PermanentError, match=r"^parameter file .*values.yaml:2 is not valid YAML: mapping values"):
        params.load_file(DEMO, str(path))


def test_load_file_of_a_missing_file_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(PermanentError, match=r"^cannot read parameter file .*missing.yaml: No such file or directory$"):
        params.load_file(DEMO, str(tmp_path / "missing.yaml"))


def test_redact_hides_secret_values_only() -> None:
    values = {"replicas": 3, "password": "s3cret", "image": "nginx", "undeclared": "x"}
    assert params.redact(DEMO, values) == {"replicas": 3, "password": "*****", "image": "nginx", "undeclared": "x"}


def test_redact_leaves_an_unset_secret_unset() -> None:
    assert params.redact(DEMO, {"password": None}) == {"password": None}

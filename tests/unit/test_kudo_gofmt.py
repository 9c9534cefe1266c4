"""Go's text for values, as converted KUDO templates print them: floats the way strconv writes them, and
sprig's toYaml the way yaml.v2 writes it (quoting what would read back as another type, key order, block
styles). The expected texts are Go's own output (a Go program outside the repository, see
tests/fixtures/kudo/README.md), for the values in tests/fixtures/kudo/toyaml/values.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.render.gofmt import format_float, value_text
from engine.render.goyaml import yaml_marshal

TOYAML = Path(__file__).resolve().parents[1] / "fixtures" / "kudo" / "toyaml"

# `{{ 0.0001 }} {{ 0.00001 }} ...` as Go's text/template printed them
GO_FLOATS = [(0.0001, "0.0001"), (0.00001, "1e-05"), (1234567.0, "1.234567e+06"), (100.5, "100.5"),
             (1e21, "1e+21"), (1e20, "1e+20"), (123456789.0, "1.23456789e+08"), (0.1, "0.1"), (2.0, "2"),
             (1.5e-7, "1.5e-07"), (999999.0, "999999")]


@pytest.mark.parametrize(("value", "text"), GO_FLOATS)
def test_floats_print_as_go_prints_them(value: float, text: str) -> None:
    assert format_float(value) == text


def test_to_yaml_writes_what_yaml_v2_writes() -> None:
    values = json.loads((TOYAML / "values.json").read_text())["Params"]["M"]
    assert yaml_marshal(values) == (TOYAML / "expected.yaml").read_text()


def test_values_print_like_fmt_v() -> None:
    assert value_text({"b": [1, None, True], "a": {"x": 2.5}}) == "map[a:map[x:2.5] b:[1 <nil> true]]"
    assert value_text(None) == "<no value>"

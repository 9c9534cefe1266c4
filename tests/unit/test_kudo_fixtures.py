"""KUDO-format fixture packages of kplan's own against what Go's text/template + sprig render for them.

tests/fixtures/kudo/constructs exercises every construct the converter translates: fields of the root and
of `$`, if/else if/else, string booleans compared with `eq`, and/or/not and comparisons, range over lists
and maps (Go's sorted key order) with `$i, $v :=`, range else, Go's variable scoping (`:=` shadowing in an
`if`, `=` assigning the outer variable, a variable set in a loop), pipelines (the piped value last), and
the sprig functions KUDO packages use (int, until, untilStep, arithmetic, index, list, toYaml, indent that
pads the first line, trim, quote, default, printf, b64enc/b64dec). Its `expected/*.yaml` are the output of
Go's text/template with sprig v2.22.0 and toYaml as KUDO's renderer defines it (pkg/engine/renderer of
kudobuilder/kudo: missingkey=error, yaml.v2's Marshal), run by a small Go program outside the repository on
the values in `expected/vars.json`; see tests/fixtures/kudo/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from engine import render
from engine.kudo.convert import convert, is_kudo_package
from engine.kudo.translate import translate
from engine.package import files, loader
from engine.render.sandbox import environment

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "kudo" / "constructs"
TEMPLATES = sorted(p.stem for p in (FIXTURE / "templates").glob("*.yaml"))
VARS = json.loads((FIXTURE / "expected" / "vars.json").read_text())
KUDO_LABELS = {"heritage": "kudo", "kudo.dev/operator": "constructs", "kudo.dev/instance": "demo"}


def kudo_files() -> dict[str, str]:
    return files.read_folder(FIXTURE)


def structured() -> frozenset[str]:
    return frozenset(k for k, v in VARS["Params"].items() if not isinstance(v, str))


@pytest.mark.parametrize("name", TEMPLATES)
def test_translated_template_renders_the_text_go_renders(name: str) -> None:
    source = (FIXTURE / "templates" / f"{name}.yaml").read_text()
    strings = frozenset(k for k, v in VARS["Params"].items() if isinstance(v, str))
    translation = translate(source, strings, {}, structured())
    variables = {k: v for k, v in VARS.items() if k not in ("Params", "Pipes")}
    text = environment().from_string(translation.text).render(
        **variables, Params=render.values.wrap("Params", VARS["Params"]), Pipes={})

    assert translation.gaps == ()
    assert text == (FIXTURE / "expected" / f"{name}.yaml").read_text()


def test_converted_package_renders_the_objects_go_renders_with_kudo_labels() -> None:
    conversion = convert(kudo_files())
    pkg = loader.from_files(conversion.files)
    ctx = render.RenderContext(instance="demo", namespace="shop", params=VARS["Params"], plan="deploy",
                               phase="main", step="everything")

    for name in TEMPLATES:
        expected = yaml.safe_load((FIXTURE / "expected" / f"{name}.yaml").read_text())
        (obj,) = render.render_template(pkg, f"{name}.yaml", ctx)
        labels = obj["metadata"].pop("labels")
        assert {k: labels[k] for k in KUDO_LABELS} == KUDO_LABELS
        obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k in expected["metadata"]}
        assert obj == expected, name


def test_fixture_is_recognised_as_kudo_and_its_parameters_keep_kudo_types() -> None:
    conversion = convert(kudo_files())
    params = {p["name"]: p for p in yaml.safe_load(conversion.files["params.yaml"])["parameters"]}

    assert is_kudo_package(kudo_files())
    assert params["COUNT"] == {"name": "COUNT", "default": "3"}  # a YAML number in KUDO is the string "3"
    assert params["ENABLED"]["default"] == "true"
    assert params["EMPTY"] == {"name": "EMPTY", "default": ""}  # not required, no default: KUDO's ""
    assert params["NODES"]["type"] == "array" and params["LABELS"]["type"] == "map"
    assert conversion.gaps == ()


def test_untranslatable_constructs_are_reported_with_their_line_and_fail_the_render() -> None:
    source = 'a: {{ .Name }}\n{{ define "x" }}y{{ end }}\nb: {{ regexFind "a" .Name }}\nc: {{ .Name 1 }}\n'
    translation = translate(source)

    assert [(g.line, g.construct) for g in translation.gaps] == [(2, "{{define}}"), (3, "regexFind"), (4, ".Name")]
    with pytest.raises(Exception, match=r"line 2: \{\{define\}\}"):
        environment().from_string(translation.text).render(Name="n")


def test_a_template_go_would_not_parse_is_a_gap_naming_its_line() -> None:
    kudo = kudo_files()
    kudo["templates/broken.yaml"] = "ok: 1\nbad: {{ if .Name }}\n"
    conversion = convert(kudo)

    assert [str(n) for n in conversion.gaps] == ["templates/broken.yaml:2: gap: does not parse as a Go template: "
                                                 "unexpected EOF in if"]


def test_eq_of_a_string_and_a_number_fails_as_in_go() -> None:
    translation = translate('{{ if eq .Params.COUNT 3 }}three{{ end }}', frozenset({"COUNT"}))
    template = environment().from_string(translation.text)

    with pytest.raises(Exception, match="incompatible types for comparison"):
        template.render(Params=render.values.wrap("Params", {"COUNT": "3"}))

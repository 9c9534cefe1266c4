"""Go template fragments translated to Jinja2 render exactly what Go's text/template + sprig render.

Each expected text is the output of Go's text/template with sprig v2.22.0 as KUDO set it up (the Go program
described in tests/fixtures/kudo/README.md) for the fragment beside it: trim markers (`{{-3}}` is the
number -3), Go's scoping in loops, `with` declaring a variable, sorted map ranges, pipelines passing the
value last, Jinja2 syntax in template text staying text.
"""

from __future__ import annotations

import pytest

from engine.kudo.translate import translate
from engine.render.gofmt import GoError
from engine.render.sandbox import environment

GO_RENDERS = [
    ('a {{- 3}} b {{-3}} c {{ 3 -}}   d {{- /* c */ -}}  e {{ "x" }}{{- "y" -}}\n z\n{{- if true }}\n  t\n{{- end }}\n',
     'a3 b -3 c 3de xyz\n  t\n'),
    ('{{ $x := 1 }}{{ range $i := until 3 }}{{ $x := 10 }}{{ $x }}{{ end }}{{ $x }}',
     '1010101'),
    ('{{ $x := 1 }}{{ range $i := until 3 }}{{ $x = add $x $i }}{{ end }}{{ $x }}',
     '4'),
    ('{{ with $y := "v" }}{{ $y }}{{ . }}{{ end }}',
     'vv'),
    ('{{ range $k, $v := dict "b" 2 "a" 1 "c" 3 }}{{ $k }}{{ $v }}{{ end }}',
     'a1b2c3'),
    ('{{ if eq "1" "1" }}s{{ end }}{{ if eq 1 1 }}i{{ end }}{{ if ne "a" "b" }}n{{ end }}',
     'sin'),
    ('{{ "a" | printf "%s%s" "b" | printf "%s-%s" "c" }}',
     'c-ba'),
    ('{{ list 1 2 | len }} {{ index (list 3 4) 1 }} {{ "abc" | trunc 2 | upper }}',
     '2 4 AB'),
    ('{{ 3 | add 1 | mul 2 | sub 20 | div 3 }}',
     '0'),
    ('{{ range $i, $e := list "x" "y" }}{{ if $i }}, {{ end }}{{ $i }}:{{ $e }}{{ else }}none{{ end }}',
     '0:x, 1:y'),
    ('{{ "{{" }} {% raw %} {# #}',
     '{{ {% raw %} {# #}'),
]


@pytest.mark.parametrize(("source", "expected"), GO_RENDERS)
def test_fragment_renders_as_go_renders_it(source: str, expected: str) -> None:
    translation = translate(source)
    assert translation.gaps == ()
    assert environment().from_string(translation.text).render() == expected


def test_and_without_arguments_fails_as_in_go() -> None:
    with pytest.raises(GoError, match="wrong number of args for and"):
        environment().from_string(translate("{{ and }}").text).render()

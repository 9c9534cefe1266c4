"""Generated values: each kind has its shape and length, two values are never alike, lengths are checked
per kind, and params.yaml's `generate` is verified (string only, no default, not required)."""

from __future__ import annotations

import base64
import re

import pytest

from engine import generating
from engine.errors import PackageInvalid
from engine.model import Generated, GenerateKind
from engine.package import loader

OPERATOR = """apiVersion: kplan.dev/v1alpha1
name: demo
operatorVersion: 0.1.0
tasks: [{name: noop, kind: Dummy}]
plans: {deploy: {phases: [{name: main, steps: [{name: noop, tasks: [noop]}]}]}}
"""


def test_each_kind_has_its_shape() -> None:
    password = generating.make(Generated(GenerateKind.PASSWORD, 30))
    token = generating.make(Generated(GenerateKind.TOKEN))
    fernet = generating.make(Generated(GenerateKind.FERNET))
    assert re.fullmatch(r"[A-Za-z0-9]{30}", password)
    assert re.fullmatch(r"[a-z0-9]{32}", token)
    assert len(base64.urlsafe_b64decode(fernet)) == 32 and re.fullmatch(r"[A-Za-z0-9_-]{43}=", fernet)
    assert generating.make(Generated(GenerateKind.RSA)).startswith("-----BEGIN PRIVATE KEY-----")
    assert len({generating.make(Generated(GenerateKind.PASSWORD)) for _ in range(50)}) == 50


@pytest.mark.parametrize(("generated", "reason"), [
    (Generated(GenerateKind.PASSWORD, 4), "must be between 8 and 4096 for kind password, got 4"),
    (Generated(GenerateKind.FERNET, 44), "is not used by kind fernet"),
    (Generated(GenerateKind.RSA, 3000), "must be a multiple of 1024 bits"),
])
def test_lengths_are_checked_per_kind(generated: Generated, reason: str) -> None:
    assert reason in (generating.length_problem(generated) or "")


def test_a_generated_parameter_is_secret_and_not_required() -> None:
    params = "apiVersion: kplan.dev/v1alpha1\nparameters:\n  - name: key\n    generate: {kind: token, length: 20}\n"
    pkg = loader.from_files({"operator.yaml": OPERATOR, "params.yaml": params})
    key = pkg.parameter("key")
    assert key.secret and not key.required and key.generate == Generated(GenerateKind.TOKEN, 20)


def test_generate_is_verified() -> None:
    params = ("apiVersion: kplan.dev/v1alpha1\nparameters:\n"
              "  - name: n\n    type: integer\n    generate: {kind: password}\n"
              "  - name: d\n    default: x\n    generate: {kind: password}\n"
              "  - name: r\n    required: true\n    generate: {kind: bogus}\n")
    with pytest.raises(PackageInvalid) as raised:
        loader.from_files({"operator.yaml": OPERATOR, "params.yaml": params})
    text = "\n".join(str(p) for p in raised.value.problems)
    assert "parameters[0].generate: applies only to string parameters" in text
    assert "parameters[1].default: cannot be given with generate" in text
    assert "parameters[2].generate.kind: must be one of password, token, fernet, rsa" in text

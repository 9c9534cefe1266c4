"""`kubectl kplan package verify` renders every template of every plan, so it refuses what `install` would:
an undefined name, output that is not YAML, a document without a kind, a broken Operator-task field and a
template that does not compile are all reported in one pass, each with its file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_harness import Cli

from engine.kube import Kube

OPERATOR = """apiVersion: kplan.dev/v1alpha1
name: shop
operatorVersion: 0.1.0
tasks:
  - {name: app, kind: Apply, spec: {resources: [service.yaml, config.yaml, bare.yaml]}}
  - {name: copy, kind: Pipe, spec: {pod: pod.yaml, pipe: [{file: /tmp/out, kind: ConfigMap, key: out}]}}
  - {name: later, kind: Apply, spec: {resources: [uses-pipe.yaml, syntax.yaml]}}
plans:
  deploy:
    phases:
      - name: main
        steps:
          - {name: app, tasks: [app]}
          - {name: copy, tasks: [copy]}
          - {name: later, tasks: [later]}
"""
PARAMS = """apiVersion: kplan.dev/v1alpha1
parameters:
  - {name: port, type: integer, default: 80}
  - {name: owner, description: "required: no default"}
"""
TEMPLATES = {
    "service.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ Nmae }}\nspec:\n"
                    "  ports: [{port: {{ Params.port }}}]\n",
    "config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ Name }}\ndata:\n"
                   "  owner: {{ Params.owner }}\n  list: [unclosed\n",
    "bare.yaml": "apiVersion: v1\nmetadata:\n  name: {{ Name }}-bare\n",
    "pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ Name }}-copy\nspec:\n  restartPolicy: Never\n"
                "  containers:\n    - {name: main, image: busybox, terminationMessagePath: /tmp/out}\n",
    "uses-pipe.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ Name }}-out\ndata:\n"
                      "  out: {{ Pipes.out | quote }}\n",
    "syntax.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {% if %}\n",
}


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Cli:
    return Cli(sim_kubeconfig, sim_namespace)


def write_package(folder: Path, templates: dict[str, str]) -> Path:
    (folder / "templates").mkdir(parents=True)
    (folder / "operator.yaml").write_text(OPERATOR)
    (folder / "params.yaml").write_text(PARAMS)
    for name, text in templates.items():
        (folder / "templates" / name).write_text(text)
    return folder


def test_verify_reports_every_template_that_does_not_render_with_file_and_line(cli: Cli, tmp_path: Path) -> None:
    pkg = write_package(tmp_path / "shop", TEMPLATES)

    result = cli("package", "verify", str(pkg), namespaced=False)

    assert result.code == 1, result.text
    lines = result.out.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [
        "templates/bare.yaml:1", "templates/config.yaml:8", "templates/service.yaml:4", "templates/syntax.yaml:4",
    ]
    assert "document 1 is not a Kubernetes object: kind is missing (plan deploy, step app)" in lines[0]
    assert "the rendered output is not valid YAML" in lines[1]
    assert "undefined variable 'Nmae'" in lines[2]
    assert result.err.strip() == f"error: {pkg} has 4 errors"


def test_what_verify_passes_install_accepts_and_what_it_refuses_install_refuses(cli: Cli, tmp_path: Path) -> None:
    good = {**TEMPLATES, "service.yaml": TEMPLATES["service.yaml"].replace("Nmae", "Name"),
            "config.yaml": TEMPLATES["config.yaml"].replace("  list: [unclosed\n", ""),
            "bare.yaml": TEMPLATES["bare.yaml"].replace("metadata:", "kind: ConfigMap\nmetadata:"),
            "syntax.yaml": TEMPLATES["syntax.yaml"].replace("{% if %}", "{{ Name }}-syntax")}
    valid = write_package(tmp_path / "good", good)
    broken = write_package(tmp_path / "bad", {**good, "service.yaml": TEMPLATES["service.yaml"]})

    assert cli("package", "verify", str(valid), namespaced=False).out.strip() == "package shop 0.1.0 is valid"
    cli.ok("install", str(valid), "--instance", "shop", "-p", "owner=ann")

    refused = cli("package", "verify", str(broken), namespaced=False)
    assert refused.code == 1 and "templates/service.yaml:4: does not render" in refused.out, refused.text
    install = cli("install", str(broken), "--instance", "other", "-p", "owner=ann")
    assert install.code == 1 and "Nmae" in install.err, install.text

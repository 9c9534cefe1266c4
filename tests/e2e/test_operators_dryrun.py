"""`kplan template operators/PKG` for every shipped package is accepted by the dev cluster through the real kubectl:
`kubectl apply --server-side --dry-run=server` applies every object of the deploy plan (in a namespace of the
test's own, kplan's CRDs installed) and the server keeps none of them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.kube import Kube

ROOT = Path(__file__).resolve().parents[2]
OPERATORS = ROOT / "operators"
GOLDEN_PARAMS = ROOT / "tests" / "unit" / "golden"  # values for parameters without a default
PACKAGES = sorted(p.name for p in OPERATORS.iterdir() if (p / "operator.yaml").is_file())
BIN = Path(sys.executable).parent
TIMEOUT = 120  # seconds one command may take before the test fails


def run(*command: str, stdin: str | None = None) -> str:
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout


def rendered(package: str, namespace: str) -> str:
    values = GOLDEN_PARAMS / package / "params.yaml"
    given = ["-P", str(values)] if values.is_file() else []
    return run(str(BIN / "kplan"), "template", str(OPERATORS / package), "-n", namespace, *given)


@pytest.mark.parametrize("package", PACKAGES)
def test_server_side_dry_run_accepts_the_rendered_package(
    package: str, sim_kubeconfig: Path, sim_kube: Kube, sim_namespace: str, tmp_path: Path
) -> None:
    manifests = rendered(package, sim_namespace)
    documents: list[dict[str, Any]] = list(yaml.safe_load_all(manifests))

    out = run(str(BIN / "kubectl"), "--kubeconfig", str(sim_kubeconfig), "--cache-dir", str(tmp_path / "cache"),
              "apply", "--server-side", "--dry-run=server", "-f", "-", stdin=manifests)

    applied = [line for line in out.splitlines() if line.endswith("serverside-applied (server dry run)")]
    assert len(applied) == len(documents) > 0, out
    for doc in documents:
        meta = doc["metadata"]
        assert meta["namespace"] == sim_namespace
        assert sim_kube.get(doc["apiVersion"], doc["kind"], meta["name"], meta["namespace"]) is None, meta["name"]

"""connect: kubeconfig from an argument or $KUBECONFIG, the context's namespace, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from engine.devcluster.cluster import DevCluster
from engine.errors import PermanentError
from engine.kube import connect


@pytest.fixture
def two_contexts(devcluster: DevCluster, tmp_path: Path) -> Path:
    """The cluster's kubeconfig plus a context "team-b" whose namespace is "team-b"."""
    path = tmp_path / "kubeconfig"
    devcluster.write_kubeconfig(path)
    config = yaml.safe_load(path.read_text())
    first = config["contexts"][0]["context"]
    config["contexts"].append({"name": "team-b", "context": {**first, "namespace": "team-b"}})
    path.write_text(yaml.safe_dump(config))
    return path


def test_connect_talks_to_the_cluster_of_the_kubeconfig(two_contexts: Path, namespace: str) -> None:
    with connect(str(two_contexts)) as kube:
        assert kube.get("v1", "Namespace", namespace) is not None


def test_the_namespace_is_the_contexts_or_default(two_contexts: Path) -> None:
    with connect(str(two_contexts)) as kube:
        assert kube.namespace == "default"
    with connect(str(two_contexts), context="team-b") as kube:
        assert kube.namespace == "team-b"
    with connect(str(two_contexts), context="team-b", namespace="team-c") as kube:
        assert kube.namespace == "team-c"


def test_kubeconfig_comes_from_the_environment(two_contexts: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(two_contexts))

    with connect(context="team-b") as kube:
        assert kube.namespace == "team-b"


def test_a_missing_kubeconfig_is_a_permanent_error(tmp_path: Path) -> None:
    with pytest.raises(PermanentError, match=f"cannot load kubeconfig {tmp_path / 'absent'}"):
        connect(str(tmp_path / "absent"))


def test_an_unknown_context_is_a_permanent_error(two_contexts: Path) -> None:
    with pytest.raises(PermanentError, match="cannot load kubeconfig"):
        connect(str(two_contexts), context="nowhere")


def test_no_kubeconfig_outside_a_cluster_says_how_to_give_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    with pytest.raises(PermanentError, match=r"^no cluster to talk to: give --kubeconfig or set KUBECONFIG"):
        connect()

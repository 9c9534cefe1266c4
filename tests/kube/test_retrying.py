"""Retrying transient failures, as kubectl does (issue 12): a Kube with `retry_for` and the CLI ride out injected
429/503 answers, give up on a server that keeps failing with one sentence, and never resend a POST after a 500 unless
it can tell the object it made (its lost answer) from someone else's."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.apiserver.faults import FaultProfile
from engine.cli.main import main
from engine.devcluster.cluster import DevCluster
from engine.errors import ApiUnavailable
from engine.kube import Kube, connect
from engine.kube.errors import AlreadyExists

from .helpers import configmap

MINIMAL = Path(__file__).parent.parent / "fixtures" / "packages" / "minimal"
FLAKY = FaultProfile(error_rate={"*": 0.3}, error_codes=(429, 503), retry_after_seconds=0, seed=12)


def test_a_kube_with_retries_rides_out_throttling(own_cluster: DevCluster, tmp_path: Path) -> None:
    with connect(str(own_cluster.write_kubeconfig(tmp_path / "k")), retry_for=60) as kube:
        kube.resource("v1", "ConfigMap")
        own_cluster.faults = FLAKY
        for i in range(20):
            kube.apply(configmap(f"c{i}", "default"))
        names = {item["metadata"]["name"] for item in kube.list("v1", "ConfigMap", "default")}
        sent = sum(kube.requests.values())
    assert {f"c{i}" for i in range(20)} <= names
    assert sent > 21  # some requests were answered 429/503 and sent again


def test_a_server_that_keeps_failing_ends_with_one_sentence(own_cluster: DevCluster, tmp_path: Path) -> None:
    with connect(str(own_cluster.write_kubeconfig(tmp_path / "k")), retry_for=3) as kube:
        kube.resource("v1", "ConfigMap")
        own_cluster.faults = FaultProfile(error_rate={"*": 1.0}, error_codes=(503,), retry_after_seconds=1)
        given_up = r"^cannot get ConfigMap default/x: .* \(gave up after \d+ attempts\)$"
        with pytest.raises(ApiUnavailable, match=given_up):
            kube.get("v1", "ConfigMap", "x", "default")


def test_a_create_answered_500_is_not_sent_again(own_cluster: DevCluster, tmp_path: Path) -> None:
    with connect(str(own_cluster.write_kubeconfig(tmp_path / "k")), retry_for=30) as kube:
        kube.resource("v1", "ConfigMap")
        own_cluster.faults = FaultProfile(error_rate={"create": 1.0}, error_codes=(500,))
        with pytest.raises(ApiUnavailable, match="Internal error occurred") as caught:
            kube.create(configmap("once", "default"))
        assert kube.requests["create"] == 1
    assert "gave up" not in str(caught.value)


def test_a_kube_without_retries_fails_at_once(own_cluster: DevCluster, own_kube: Kube) -> None:
    own_kube.resource("v1", "ConfigMap")
    own_cluster.faults = FaultProfile(error_rate={"*": 1.0}, error_codes=(429,))
    with pytest.raises(ApiUnavailable):
        own_kube.get("v1", "ConfigMap", "x", "default")
    assert own_kube.requests["get"] == 1


def test_install_through_the_cli_succeeds_against_a_throttling_server(
    own_cluster: DevCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = str(own_cluster.write_kubeconfig(tmp_path / "k"))
    assert main(["init", "--kubeconfig", kubeconfig]) == 0
    own_cluster.faults = FLAKY
    assert main(["install", str(MINIMAL), "--kubeconfig", kubeconfig, "--instance", "tiny"]) == 0
    assert "error" not in capsys.readouterr().err
    own_cluster.faults = FaultProfile()
    status, _ = own_cluster.request("GET", "/apis/kplan.dev/v1alpha1/namespaces/default/instances/tiny")
    assert status == 200


def test_install_against_a_failing_server_ends_within_its_timeout_with_one_sentence(
    own_cluster: DevCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = str(own_cluster.write_kubeconfig(tmp_path / "k"))
    assert main(["init", "--kubeconfig", kubeconfig]) == 0
    capsys.readouterr()
    own_cluster.faults = FaultProfile(error_rate={"*": 1.0}, error_codes=(503,), retry_after_seconds=1)
    assert main(["install", str(MINIMAL), "--kubeconfig", kubeconfig, "--timeout", "3s"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot ") and err.endswith("attempts)\n") and err.count("\n") == 1
    assert "Traceback" not in err


def test_a_create_told_its_own_object_is_resent_after_a_500(own_cluster: DevCluster, tmp_path: Path) -> None:
    with connect(str(own_cluster.write_kubeconfig(tmp_path / "k")), retry_for=30) as kube:
        kube.resource("v1", "ConfigMap")
        own_cluster.faults = FaultProfile(error_rate={"create": 0.5}, error_codes=(500,), seed=3)
        sent = [configmap(f"r{i}", "default") for i in range(12)]
        for obj in sent:
            kube.create(obj, same=lambda found, obj=obj: found.get("data") == obj.get("data"))
        assert kube.requests["create"] > len(sent)  # some were answered 500 and sent again
    own_cluster.faults = FaultProfile()
    status, body = own_cluster.request("GET", "/api/v1/namespaces/default/configmaps")
    assert status == 200 and {f"r{i}" for i in range(12)} <= {item["metadata"]["name"] for item in body["items"]}


def test_a_create_whose_answer_was_lost_returns_the_object_it_made(own_cluster: DevCluster, tmp_path: Path) -> None:
    with connect(str(own_cluster.write_kubeconfig(tmp_path / "k")), retry_for=30) as kube:
        kube.resource("v1", "ConfigMap")
        own_cluster.faults = FaultProfile(lost_answer_rate={"create": 1.0})
        made = kube.create(configmap("lost", "default"), same=lambda found: True)
        assert kube.requests["create"] == 2  # the first was carried out, its answer lost; the resend found it
    assert made["metadata"]["name"] == "lost" and made["metadata"]["uid"]


def test_a_resent_create_that_finds_someone_elses_object_says_it_exists(
    own_cluster: DevCluster, tmp_path: Path
) -> None:
    with connect(str(own_cluster.write_kubeconfig(tmp_path / "k")), retry_for=30) as kube:
        kube.resource("v1", "ConfigMap")
        own_cluster.faults = FaultProfile(lost_answer_rate={"create": 1.0})
        with pytest.raises(AlreadyExists):
            kube.create(configmap("theirs", "default"), same=lambda found: False)


def test_install_through_the_cli_survives_lost_answers_and_500s(
    own_cluster: DevCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = str(own_cluster.write_kubeconfig(tmp_path / "k"))
    assert main(["init", "--kubeconfig", kubeconfig]) == 0
    capsys.readouterr()
    own_cluster.faults = FaultProfile(lost_answer_rate={"create": 1.0})
    assert main(["install", str(MINIMAL), "--kubeconfig", kubeconfig, "--instance", "lost"]) == 0
    out = capsys.readouterr().out
    assert "instance.kplan.dev/lost created" in out and "operator.kplan.dev/tiny created" in out
    own_cluster.faults = FaultProfile(error_rate={"create": 0.5}, error_codes=(500,), seed=5)
    assert main(["install", str(MINIMAL), "--kubeconfig", kubeconfig, "--instance", "flaky"]) == 0
    own_cluster.faults = FaultProfile()
    for name in ("lost", "flaky"):
        status, _ = own_cluster.request("GET", f"/apis/kplan.dev/v1alpha1/namespaces/default/instances/{name}")
        assert status == 200

"""The real kubectl against the simulated dev cluster: get (tables), server-side apply and conflicts, delete,
wait, CRDs with printer columns, explain, label and rollout status."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from engine.devcluster import backends
from engine.devcluster.backends import Cluster

from .helpers import widget_crd
from .simulated import DURATION, JsonDict, deployment, job, pod

KUBECTL = Path(sys.executable).with_name("kubectl")
TIMEOUT = 120  # seconds before a hung kubectl fails the test


@dataclass(frozen=True)
class Kubectl:
    """kubectl bound to the cluster's kubeconfig, a discovery cache of the test's own and a namespace."""

    kubeconfig: Path
    cache: Path
    namespace: str

    def run(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(KUBECTL), "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache),
                   "--namespace", self.namespace, *args]
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=TIMEOUT, check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
        return done

    def apply(self, obj: JsonDict, *flags: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run("apply", "--server-side", *flags, "-f", "-", stdin=yaml.safe_dump(obj), check=check)

    def json(self, *args: str) -> JsonDict:
        answer: JsonDict = json.loads(self.run("get", *args, "-o", "json", "--show-managed-fields").stdout)
        return answer


def table(text: str) -> list[list[str]]:
    """kubectl's column output as rows of cells (header first)."""
    return [re.split(r"\s{2,}", line.strip()) for line in text.strip().splitlines()]


@pytest.fixture(scope="module")
def cluster(backend: str) -> Iterator[Cluster]:
    with backends.new(backend, simulate=True, nodes=("node1", "node2")) as running:
        yield running


@pytest.fixture(scope="module")
def kubeconfig(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cluster.write_kubeconfig(tmp_path_factory.mktemp("kubectl") / "config")


@pytest.fixture
def kubectl(cluster: Cluster, kubeconfig: Path, tmp_path: Path) -> Iterator[Kubectl]:
    namespace = f"k-{uuid.uuid4().hex[:10]}"
    code, body = cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
    assert code == 201, body
    yield Kubectl(kubeconfig, tmp_path / "cache", namespace)
    cluster.request("DELETE", f"/api/v1/namespaces/{namespace}")


def test_get_namespaces_prints_the_namespace_table(kubectl: Kubectl) -> None:
    rows = table(kubectl.run("get", "namespaces").stdout)
    assert rows[0] == ["NAME", "STATUS", "AGE"]
    names = {row[0]: row[1] for row in rows[1:]}
    assert names["default"] == names["kube-system"] == names[kubectl.namespace] == "Active"


def test_get_nodes_shows_ready_nodes_with_their_version(kubectl: Kubectl) -> None:
    rows = table(kubectl.run("get", "nodes").stdout)
    assert rows[0] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    by_name = {row[0]: row for row in rows[1:]}
    assert by_name["node1"][1] == "Ready" and by_name["node1"][4] == "v1.37.2"


def test_get_deployments_and_pods_print_their_real_columns(kubectl: Kubectl) -> None:
    kubectl.apply(deployment("web", 2))
    kubectl.apply(pod("solo"))
    kubectl.run("rollout", "status", "deployment/web", "--timeout=30s")
    kubectl.run("wait", "--for=condition=Ready", "pod/solo", "--timeout=30s")
    deployments = table(kubectl.run("get", "deployments").stdout)
    assert deployments[0] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert deployments[1][:4] == ["web", "2/2", "2", "2"]
    pods = table(kubectl.run("get", "pods", "-o", "wide").stdout)
    assert pods[0][:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    assert pods[1][:4] == ["solo", "1/1", "Running", "0"]
    assert re.fullmatch(r"10\.\d+\.\d+\.\d+", pods[1][5]) and pods[1][6] in ("node1", "node2")


def test_server_side_apply_is_idempotent_and_reports_conflicts_until_forced(kubectl: Kubectl) -> None:
    manifest = deployment("api", 2)
    assert "serverside-applied" in kubectl.apply(manifest).stdout
    first = kubectl.json("deployment", "api")["metadata"]
    kubectl.apply(manifest)
    again = kubectl.json("deployment", "api")["metadata"]  # the controllers may write status in between
    assert again["generation"] == first["generation"] == 1
    assert [m for m in again["managedFields"] if m["manager"] == "kubectl"] == \
        [m for m in first["managedFields"] if m["manager"] == "kubectl"]
    manifest["spec"]["replicas"] = 3
    refused = kubectl.apply(manifest, "--field-manager", "other", check=False)
    assert refused.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas' in refused.stderr
    assert kubectl.json("deployment", "api")["spec"]["replicas"] == 2
    kubectl.apply(manifest, "--field-manager", "other", "--force-conflicts")
    taken = kubectl.json("deployment", "api")
    assert taken["spec"]["replicas"] == 3
    owners = {e["manager"]: e["fieldsV1"] for e in taken["metadata"]["managedFields"] if e["operation"] == "Apply"}
    assert "f:replicas" in owners["other"]["f:spec"] and "f:replicas" not in owners["kubectl"]["f:spec"]


def test_delete_returns_and_the_object_is_gone(kubectl: Kubectl) -> None:
    kubectl.apply(deployment("short", 1))
    kubectl.apply(pod("brief"))
    deleted = kubectl.run("delete", "deployment/short", "pod/brief", "--timeout=30s").stdout
    assert f'deployment.apps "short" deleted from {kubectl.namespace} namespace' in deleted
    assert f'pod "brief" deleted from {kubectl.namespace} namespace' in deleted
    missing = kubectl.run("get", "deployment", "short", check=False)
    assert missing.returncode != 0 and 'deployments.apps "short" not found' in missing.stderr
    assert "No resources found" in kubectl.run("get", "pods").stderr


def test_wait_for_a_job_to_complete(kubectl: Kubectl) -> None:
    kubectl.apply(job("once", notes={DURATION: "1s"}))
    waited = kubectl.run("wait", "--for=condition=complete", "job/once", "--timeout=30s")
    assert waited.stdout.strip() == "job.batch/once condition met"
    assert kubectl.json("job", "once")["status"]["succeeded"] == 1


def test_a_custom_resource_is_listed_with_its_printer_columns(kubectl: Kubectl) -> None:
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    crd = widget_crd(group)
    kubectl.apply(crd)
    kubectl.run("wait", "--for=condition=Established", f"crd/widgets.{group}", "--timeout=30s")
    kubectl.apply({"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 4}})
    rows = table(kubectl.run("get", f"widgets.{group}").stdout)
    assert rows[0] == ["NAME", "SIZE", "PHASE", "AGE"]
    assert rows[1][:2] == ["w1", "4"]
    kubectl.run("delete", "crd", f"widgets.{group}", "--timeout=30s")


def test_explain_describes_a_field_from_the_served_schema(kubectl: Kubectl) -> None:
    text = kubectl.run("explain", "deployment.spec.replicas").stdout
    assert "KIND:       Deployment" in text and "FIELD: replicas <integer>" in text
    assert "Number of desired pods" in text


def test_label_node_adds_and_removes_a_label(kubectl: Kubectl) -> None:
    key = f"test.kplan.dev/{uuid.uuid4().hex[:8]}"
    assert kubectl.run("label", "node", "node1", f"{key}=yes").stdout.strip() == "node/node1 labeled"
    assert kubectl.json("node", "node1")["metadata"]["labels"][key] == "yes"
    selected = kubectl.run("get", "nodes", "-l", f"{key}=yes", "-o", "name").stdout.split()
    assert selected == ["node/node1"]
    kubectl.run("label", "node", "node1", f"{key}-")
    assert key not in kubectl.json("node", "node1")["metadata"]["labels"]


def test_rollout_status_follows_a_new_template(kubectl: Kubectl) -> None:
    kubectl.apply(deployment("roll", 2, notes={DURATION: "500ms"}))
    kubectl.run("rollout", "status", "deployment/roll", "--timeout=30s")
    kubectl.run("set", "image", "deployment/roll", "web=nginx:1.28")
    done = kubectl.run("rollout", "status", "deployment/roll", "--timeout=30s")
    assert 'deployment "roll" successfully rolled out' in done.stdout
    history = kubectl.run("rollout", "history", "deployment/roll").stdout
    assert re.search(r"^1\s", history, re.M) and re.search(r"^2\s", history, re.M)

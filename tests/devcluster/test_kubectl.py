"""The real kubectl against the simulated dev cluster: get (tables), server-side apply and conflicts, delete,
wait, CRDs with printer columns, explain, label, rollout status and logs (the simulated kubelet's API, as a real
server reaches a node's kubelet)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.devcluster import backends
from engine.devcluster.backends import Cluster

from .helpers import widget_crd
from .simulated import DURATION, JsonDict, deployment, job, pod

KUBECTL = Path(sys.executable).with_name("kubectl")
TIMEOUT = 120  # seconds before a hung kubectl fails the test
OUTPUT = "devcluster.kplan.dev/output-"  # what a simulated container prints


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
    def kubectls(fields: list[dict[str, Any]]) -> list[tuple[str, Any]]:
        """What kubectl's apply owns of the spec (the real server may note an empty annotations map besides, once
        the Deployment controller annotated the object)."""
        return [(m["operation"], m["fieldsV1"].get("f:spec")) for m in fields if m["manager"] == "kubectl"]

    assert kubectls(again["managedFields"]) == kubectls(first["managedFields"])
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


def test_create_generators_send_protobuf_bodies_that_the_cluster_stores(kubectl: Kubectl) -> None:
    namespace = f"n-{uuid.uuid4().hex[:8]}"
    assert kubectl.run("create", "namespace", namespace).stdout.strip() == f"namespace/{namespace} created"
    kubectl.run("create", "configmap", "settings", "--from-literal=a=b")
    kubectl.run("create", "secret", "generic", "creds", "--from-literal=password=hunter2")
    kubectl.run("create", "deployment", "idle", "--image=nginx", "--replicas=0", "--port=80")
    kubectl.run("create", "job", "once", "--image=busybox", "--", "echo", "hi")
    assert kubectl.json("namespace", namespace)["status"]["phase"] == "Active"
    assert kubectl.json("configmap", "settings")["data"] == {"a": "b"}
    assert kubectl.json("secret", "creds")["data"] == {"password": "aHVudGVyMg=="}
    idle = kubectl.json("deployment", "idle")
    assert idle["spec"]["replicas"] == 0
    assert idle["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert kubectl.json("job", "once")["spec"]["template"]["spec"]["containers"][0]["command"] == ["echo", "hi"]
    managers = {e["manager"] for e in kubectl.json("configmap", "settings")["metadata"]["managedFields"]}
    assert managers == {"kubectl-create"}
    kubectl.run("delete", "namespace", namespace, "--wait=false")


def test_create_generators_of_quotas_ingresses_and_priority_classes(kubectl: Kubectl) -> None:
    kubectl.run("create", "quota", "small", "--hard=pods=2,limits.cpu=1")
    assert kubectl.json("resourcequota", "small")["spec"]["hard"] == {"pods": "2", "limits.cpu": "1"}
    kubectl.run("create", "ingress", "front", "--class=nginx", "--rule=shop.example.com/cart=cart:8080,tls")
    rows = table(kubectl.run("get", "ingress", "front").stdout)
    assert rows[0] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert rows[1][:3] == ["front", "nginx", "shop.example.com"] and "80, 443" in rows[1]
    priority = f"p-{uuid.uuid4().hex[:8]}"
    kubectl.run("create", "priorityclass", priority, "--value=1000", "--description=batch work")
    rows = table(kubectl.run("get", "priorityclass", priority).stdout)
    assert rows[0] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert rows[1][:3] == [priority, "1000", "false"] and rows[1][-1] == "PreemptLowerPriority"
    kubectl.run("delete", "priorityclass", priority)


def test_logs_show_what_the_container_printed_and_refusals_are_the_servers(kubectl: Kubectl) -> None:
    kubectl.apply(pod("talker", notes={OUTPUT + "main": "one\ntwo\nthree\n"}))
    kubectl.apply(pod("nowhere", node_selector={"kplan.dev/no-such-node": "x"}))
    kubectl.run("wait", "--for=condition=Ready", "pod/talker", "--timeout=30s")

    assert kubectl.run("logs", "talker").stdout == "one\ntwo\nthree\n"
    assert kubectl.run("logs", "talker", "-c", "main", "--tail=1").stdout == "three\n"
    assert kubectl.run("logs", "talker", "--since=1h").stdout == "one\ntwo\nthree\n"
    stamped = kubectl.run("logs", "talker", "--timestamps", "--tail=2").stdout
    assert re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z (two|three)\n){2}", stamped), stamped
    unknown = kubectl.run("logs", "talker", "-c", "nope", check=False)
    assert (unknown.returncode, unknown.stderr) == (
        1, "error: container nope is not valid for pod talker out of: main\n")  # kubectl checks it first
    previous = kubectl.run("logs", "talker", "--previous", check=False)
    assert (previous.returncode, previous.stderr) == (1, 'Error from server (BadRequest): previous terminated '
                                                         'container "main" in pod "talker" not found\n')
    assert kubectl.run("logs", "nowhere").stdout == ""  # not scheduled yet: no node to ask, nothing to show


def test_logs_follow_ends_when_the_container_ends(kubectl: Kubectl) -> None:
    kubectl.apply(job("brief", template_notes={DURATION: "2s", OUTPUT + "main": "working\n"}))
    followed = kubectl.run("logs", "-f", "job/brief", "--pod-running-timeout=30s")
    assert followed.stdout == "working\n"
    kubectl.run("wait", "--for=condition=Complete", "job/brief", "--timeout=30s")


def test_get_events_shows_what_the_controllers_did_with_kubectls_columns(kubectl: Kubectl) -> None:
    kubectl.apply(deployment("noted", 1))
    kubectl.run("rollout", "status", "deployment/noted", "--timeout=30s")
    rows = table(kubectl.run("get", "events").stdout)
    assert rows[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    reasons = {(row[2], row[3].split("/")[0]) for row in rows[1:]}
    assert {("ScalingReplicaSet", "deployment"), ("SuccessfulCreate", "replicaset"), ("Scheduled", "pod")} <= reasons
    wide = table(kubectl.run("get", "events", "-o", "wide").stdout)
    assert wide[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN",
                       "COUNT", "NAME"]
    scaling = next(row for row in wide[1:] if row[2] == "ScalingReplicaSet")
    assert scaling[4] == "deployment-controller" and scaling[-2] == "1"  # no SUBOBJECT: the cell is blank
    events = json.loads(kubectl.run("get", "events", "-o", "json").stdout)["items"]
    stamps = [e["metadata"]["creationTimestamp"] for e in json.loads(kubectl.run(
        "get", "events", "--sort-by=.metadata.creationTimestamp", "-o", "json").stdout)["items"]]
    assert stamps == sorted(stamps) and len(stamps) == len(events)
    listed = table(kubectl.run("events", "--for", "deployment/noted").stdout)
    assert listed[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert [row[2] for row in listed[1:]] == ["ScalingReplicaSet"]


def test_explain_describes_kplans_custom_resources_from_their_crds(kubectl: Kubectl) -> None:
    crds = Path(__file__).resolve().parents[2] / "crds"
    kubectl.run("apply", "--server-side", "-f", str(crds))
    for name in ("instances", "operatorversions"):
        kubectl.run("wait", "--for=condition=Established", f"crd/{name}.kplan.dev", "--timeout=30s")
    deadline = time.monotonic() + 60  # a real server publishes a new CRD's OpenAPI a moment after Established
    while (explained := kubectl.run("explain", "instances", check=False)).returncode != 0:
        assert time.monotonic() < deadline, explained.stderr
    top = explained.stdout
    assert "GROUP:      kplan.dev" in top and "KIND:       Instance" in top and "VERSION:    v1alpha1" in top
    assert "Servers should convert recognized schemas to the latest internal value" in top  # TypeMeta's own doc
    assert re.search(r"metadata\t<ObjectMeta>", top) and re.search(r"spec\t<Object>", top)
    spec = kubectl.run("explain", "instances.spec").stdout
    assert re.search(r"operatorVersion\t<Object> -required-", spec)
    files = kubectl.run("explain", "operatorversions.spec.files").stdout
    assert "FIELD: files <map[string]string>" in files
    name = kubectl.run("explain", "instances.metadata.name").stdout
    assert "Name must be unique within a namespace" in name

"""The real backend itself: `make control-plane`'s binaries started as a local cluster, and `kplan devcluster
--backend real` as a user runs it (kubectl version, namespaces with their default ServiceAccount, stop).

Real backend only: these test the launcher of the real control plane, which the dev backend does not have.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from devcluster.helpers import wait_for
from engine.controlplane import KUBERNETES_VERSION, BinariesMissing, ControlPlane
from engine.devcluster.backends import Cluster
from engine.devcluster.real import RealCluster

BIN = Path(sys.executable).parent
KUBECTL = str(BIN / "kubectl")
KPLAN = str(BIN / "kplan")
TIMEOUT = 180


@pytest.fixture
def real(simcluster: Cluster, backend: str) -> RealCluster:
    assert isinstance(simcluster, RealCluster), backend
    return simcluster


pytestmark = pytest.mark.real_only("the launcher of the real control plane")


def kubectl(kubeconfig: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([KUBECTL, "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} exited {done.returncode}: {done.stdout}{done.stderr}")
    return done


def test_the_server_reports_the_pinned_version_and_kubectl_creates_namespaces(
    real: RealCluster, tmp_path: Path
) -> None:
    config = real.write_kubeconfig(tmp_path / "config")
    version = json.loads(kubectl(config, "version", "-o", "json").stdout)
    assert version["serverVersion"]["gitVersion"] == KUBERNETES_VERSION
    name = f"x-{uuid.uuid4().hex[:8]}"
    kubectl(config, "create", "namespace", name)
    # the real ServiceAccount controller gives every new namespace its default ServiceAccount
    wait_for(real, lambda: kubectl(config, "get", "sa", "default", "-n", name, check=False).returncode == 0, 60)
    assert real.request("GET", f"/api/v1/namespaces/{name}/configmaps/kube-root-ca.crt")[0] == 200


def test_nodes_are_ready_and_their_leases_renewed(real: RealCluster) -> None:
    def ready() -> bool:
        code, node = real.request("GET", "/api/v1/nodes/node-1")
        conditions = {c["type"]: c["status"] for c in (node.get("status") or {}).get("conditions") or []}
        taints = (node.get("spec") or {}).get("taints") or []
        return code == 200 and conditions.get("Ready") == "True" and not taints

    wait_for(real, ready, 60)
    code, lease = real.request("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1")
    assert code == 200 and lease["spec"]["holderIdentity"] == "node-1"
    first = lease["spec"]["renewTime"]
    wait_for(real, lambda: real.request("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/"
                                                "node-1")[1]["spec"]["renewTime"] != first, 30)


def test_a_deployment_is_run_by_the_real_controllers_and_the_simulated_kubelet(real: RealCluster) -> None:
    namespace = f"d-{uuid.uuid4().hex[:8]}"
    assert real.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})[0] == 201
    wait_for(real, lambda: real.request("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/default")[0] == 200,
             60)
    labels = {"app": "web"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                           "template": {"metadata": {"labels": labels},
                                        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}
    code, body = real.request("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body=deployment)
    assert code == 201, body

    def available() -> dict[str, Any] | None:
        found = real.request("GET", f"/apis/apps/v1/namespaces/{namespace}/deployments/web")[1]
        return found if (found.get("status") or {}).get("availableReplicas") == 2 else None

    wait_for(real, available, 90)
    pods = real.request("GET", f"/api/v1/namespaces/{namespace}/pods")[1]["items"]
    assert len(pods) == 2
    assert {p["spec"]["nodeName"] for p in pods} == {"node-1"}  # bound by the real kube-scheduler
    assert all(p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet" for p in pods)  # made by the real RS
    real.request("DELETE", f"/api/v1/namespaces/{namespace}")


def test_a_claim_of_the_simulated_storage_class_is_provisioned_and_bound(real: RealCluster) -> None:
    namespace = f"v-{uuid.uuid4().hex[:8]}"
    assert real.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})[0] == 201
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    code, body = real.request("POST", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", body=claim)
    assert code == 201 and body["spec"]["storageClassName"] == "standard"  # the default StorageClass
    wait_for(real, lambda: real.request("GET", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/data")[1]
             .get("status", {}).get("phase") == "Bound", 60)
    real.request("DELETE", f"/api/v1/namespaces/{namespace}")


def test_a_missing_binary_is_one_sentence_naming_make_control_plane(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KPLAN_KUBE_DIR", str(tmp_path / "empty"))
    with pytest.raises(BinariesMissing, match="make control-plane"):
        ControlPlane()
    done = subprocess.run([KPLAN, "devcluster", "--backend", "real", "--kubeconfig", str(tmp_path / "config")],
                          capture_output=True, text=True, timeout=TIMEOUT, env={**os.environ}, check=False)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "make control-plane" in done.stderr and "Traceback" not in done.stderr


def test_kplan_devcluster_backend_real_serves_until_sigterm_and_leaves_nothing(backend: str, tmp_path: Path) -> None:
    config = tmp_path / "config"
    process = subprocess.Popen([KPLAN, "devcluster", "--backend", "real", "--kubeconfig", str(config)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("real control plane listening on https://127.0.0.1:"), first
        assert process.stdout.readline().strip() == f"export KUBECONFIG={config}"
        assert yaml.safe_load(config.read_text())["current-context"] == "kplan-dev"
        kubectl(config, "create", "namespace", "x")
        kubectl(config, "wait", "--for=create", "serviceaccount/default", "-n", "x", "--timeout=60s")
        components = children_of(process.pid)
        assert {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} <= set(components.values())
        folder = data_folder(process.pid)
        assert folder.is_dir()
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
        assert not [pid for pid in components if Path(f"/proc/{pid}").exists()]
        assert not folder.exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def children_of(pid: int) -> dict[int, str]:
    """The processes whose parent is `pid`, by the name of their program."""
    done = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(pid)], capture_output=True, text=True,
                          check=False)
    return {int(line.split()[0]): Path(line.split()[1]).name for line in done.stdout.splitlines() if line.strip()}


def data_folder(pid: int) -> Path:
    """The temporary folder of the control plane `pid` runs: where its etcd keeps its data."""
    done = subprocess.run(["ps", "-o", "args=", "--ppid", str(pid)], capture_output=True, text=True, check=False)
    found = re.search(r"--data-dir=(\S+)/etcd", done.stdout)
    assert found, done.stdout
    return Path(found.group(1))

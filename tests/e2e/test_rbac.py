"""The RBAC that `kplan init` installs is what the manager needs: a manager running as that ServiceAccount (with a
token the API server issued for it) runs a plan to COMPLETE, and where its permissions stop, the step says which
permission is missing.

Real backend only: the dev backend has no authorizer (any authenticated client may do anything), so only the
real kube-apiserver can show that kplan's RBAC suffices.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_harness import Cli
from conftest import Kplan, running_manager

from engine.devcluster.backends import Cluster
from engine.devcluster.real import RealCluster

pytestmark = pytest.mark.real_only("the dev backend has no authorizer")

SYSTEM = "kplan-system"
MANAGER = "kplan-manager"
RBAC = "rbac.authorization.k8s.io/v1"


def request(cluster: Cluster, method: str, path: str, body: Any = None) -> dict[str, Any]:
    code, answer = cluster.request(method, path, body=body)
    assert code < 300, answer
    return answer


def token_kubeconfig(cluster: RealCluster, account: str, folder: Path) -> Path:
    """A kubeconfig that authenticates as the ServiceAccount kplan-system/`account` with a token for it."""
    answer = request(cluster, "POST", f"/api/v1/namespaces/{SYSTEM}/serviceaccounts/{account}/token",
                     {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                      "spec": {"expirationSeconds": 3600}})
    ca = base64.b64encode(cluster.plane.ca.cert.read_bytes()).decode()
    path = folder / f"{account}.kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": account,
        "clusters": [{"name": "c", "cluster": {"server": cluster.url, "certificate-authority-data": ca}}],
        "users": [{"name": account, "user": {"token": answer["status"]["token"]}}],
        "contexts": [{"name": account, "context": {"cluster": "c", "user": account}}],
    }))
    return path


@pytest.fixture
def initialised(simcluster: Cluster, sim_kubeconfig: Path, sim_namespace: str) -> Iterator[RealCluster]:
    """`kubectl kplan init` applied: CRDs, the manager's namespace, ServiceAccount, ClusterRole and binding."""
    assert isinstance(simcluster, RealCluster)
    done = Cli(sim_kubeconfig, sim_namespace)("init", namespaced=False)
    assert done.code == 0, done.text
    yield simcluster


def test_the_manager_runs_a_plan_as_the_service_account_kplan_init_installs(
    initialised: RealCluster, kplan: Kplan, tmp_path: Path
) -> None:
    config = token_kubeconfig(initialised, MANAGER, tmp_path)
    with running_manager(config, kplan.namespace):
        kplan.install("chain", "c")
        record = kplan.wait_plan("c", "deploy", "COMPLETE", "ERROR", "FATAL_ERROR", timeout=90)
    assert record["status"] == "COMPLETE", record
    jobs = request(initialised, "GET", f"/apis/batch/v1/namespaces/{kplan.namespace}/jobs")["items"]
    assert {j["metadata"]["name"] for j in jobs} == {"c-s1", "c-s2", "c-s3", "c-s4"}
    # the Jobs were written by the ServiceAccount, not by an administrator
    managers = {m["manager"] for j in jobs for m in j["metadata"]["managedFields"] if m["operation"] == "Apply"}
    assert managers and all(m.startswith("kplan") for m in managers)


def test_a_namespace_the_role_does_not_cover_fails_naming_the_missing_permission(
    initialised: RealCluster, kplan: Kplan, tmp_path: Path
) -> None:
    """A narrower role, as the ClusterRole's comment invites: kplan's own kinds everywhere, reading every kind
    everywhere, but writing workloads only in another namespace — so this Instance's first apply is refused."""
    account, elsewhere = "kplan-narrow", f"{kplan.namespace}-other"
    request(initialised, "POST", f"/api/v1/namespaces/{SYSTEM}/serviceaccounts",
            {"metadata": {"name": account}})
    shipped = request(initialised, "GET", f"/apis/{RBAC}/clusterroles/{MANAGER}")["rules"]
    own = [rule for rule in shipped if rule.get("apiGroups") != ["*"]]
    read = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}
    subject = [{"kind": "ServiceAccount", "name": account, "namespace": SYSTEM}]
    request(initialised, "POST", f"/apis/{RBAC}/clusterroles", {"metadata": {"name": account}, "rules": [*own, read]})
    request(initialised, "POST", f"/apis/{RBAC}/clusterrolebindings", {
        "metadata": {"name": account}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": account}})
    request(initialised, "POST", "/api/v1/namespaces", {"metadata": {"name": elsewhere}})
    request(initialised, "POST", f"/apis/{RBAC}/namespaces/{elsewhere}/rolebindings", {
        "metadata": {"name": account}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": MANAGER}})
    try:
        config = token_kubeconfig(initialised, account, tmp_path)
        with running_manager(config, kplan.namespace):
            kplan.install("chain", "c")
            step = kplan.wait(lambda: (s := kplan.steps("c", "deploy").get("s1", {})).get("message", "")
                              .find("forbidden") >= 0 and s, 90)
        message = step["message"]
        assert f'User "system:serviceaccount:{SYSTEM}:{account}" cannot patch resource' in message, message
        assert f'in the namespace "{kplan.namespace}"' in message, message
        assert step["status"] in ("ERROR", "FATAL_ERROR"), step
    finally:
        initialised.request("DELETE", f"/api/v1/namespaces/{elsewhere}")

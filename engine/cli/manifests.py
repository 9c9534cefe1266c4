"""What `kplan init` installs: kplan's CRDs, the manager's RBAC and its Deployment (or one per shard), in the
order they apply."""

from __future__ import annotations

from typing import Any

from engine import __version__, crds

__all__ = ["DEFAULT_IMAGE", "DEFAULT_NAMESPACE", "MANAGER", "PROBE_PORT", "manifests"]

DEFAULT_NAMESPACE = "kplan-system"
DEFAULT_IMAGE = f"kplan:{__version__}"
MANAGER = "kplan-manager"
PROBE_PORT = 8080
LABELS = {"app.kubernetes.io/name": "kplan", "app.kubernetes.io/component": "manager",
          "app.kubernetes.io/part-of": "kplan"}

Json = dict[str, Any]

# Packages may apply any kind, so the manager may manage any kind; narrow the last rule to the kinds your
# packages use if you know them. The other rules are what the engine itself needs.
RULES: list[Json] = [
    {"apiGroups": ["kplan.dev"], "resources": ["operators", "operatorversions", "instances", "instances/status"],
     "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch", "update", "get", "list"]},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update", "get", "list"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
     "verbs": ["get", "list", "watch", "create", "update", "patch"]},
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
]


def manifests(image: str = DEFAULT_IMAGE, namespace: str = DEFAULT_NAMESPACE, shards: int = 1,
              replicas: int = 1) -> list[Json]:
    """CRDs, Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding and the Deployment (one per shard)."""
    return [*crds.load(), namespace_object(namespace), service_account(namespace), cluster_role(),
            cluster_role_binding(namespace), *deployments(image, namespace, shards, replicas)]


def meta(name: str, namespace: str | None = None) -> Json:
    found: Json = {"name": name, "labels": dict(LABELS)}
    if namespace:
        found["namespace"] = namespace
    return found


def namespace_object(namespace: str) -> Json:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(namespace)}


def service_account(namespace: str) -> Json:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(MANAGER, namespace)}


def cluster_role() -> Json:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta(MANAGER),
            "rules": RULES}


def cluster_role_binding(namespace: str) -> Json:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": meta(MANAGER),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": MANAGER},
        "subjects": [{"kind": "ServiceAccount", "name": MANAGER, "namespace": namespace}],
    }


def deployments(image: str, namespace: str, shards: int = 1, replicas: int = 1) -> list[Json]:
    """One manager Deployment, or one per shard (`kplan-manager-shard-I`, each with its own Lease)."""
    if shards == 1:
        return [deployment(image, namespace, replicas=replicas)]
    return [deployment(image, namespace, (shards, index), replicas) for index in range(shards)]


def deployment(image: str, namespace: str, shard: tuple[int, int] | None = None, replicas: int = 1) -> Json:
    """The manager's Deployment; with `shard` = (count, index), the Deployment of that shard's managers."""
    name = MANAGER if shard is None else f"{MANAGER}-shard-{shard[1]}"
    shard_args = [] if shard is None else [f"--shards={shard[0]}", f"--shard-index={shard[1]}"]
    shard_labels = {} if shard is None else {"kplan.dev/shard": str(shard[1])}
    selector = {"app.kubernetes.io/name": "kplan", "app.kubernetes.io/component": "manager", **shard_labels}
    probe = {"httpGet": {"path": "/healthz", "port": "probes"}, "periodSeconds": 10}
    container = {
        "name": "manager",
        "image": image,
        "args": ["manager", f"--metrics-addr=0.0.0.0:{PROBE_PORT}", *shard_args],
        "ports": [{"name": "probes", "containerPort": PROBE_PORT}],
        "livenessProbe": probe,
        "readinessProbe": {**probe, "httpGet": {"path": "/readyz", "port": "probes"}},
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "runAsNonRoot": True, "runAsUser": 65532},
    }
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(name, namespace),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": {**LABELS, **shard_labels}},
                "spec": {"serviceAccountName": MANAGER, "containers": [container]},
            },
        },
    }

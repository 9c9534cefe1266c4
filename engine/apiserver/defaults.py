"""Defaults the real API server fills into built-in kinds (the ones clients and controllers rely on)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.apiserver.objects import JsonDict

Spec = dict[str, Any]


def _set(obj: dict[str, Any], key: str, value: Any) -> None:
    if obj.get(key) is None:
        obj[key] = value


def _child(obj: dict[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


def pull_policy(image: str) -> str:
    name = image.rsplit("/", 1)[-1]
    if "@" in name:
        return "IfNotPresent"
    tag = name.split(":", 1)[1] if ":" in name else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def container(c: dict[str, Any]) -> None:
    if not isinstance(c, dict):
        return
    if isinstance(c.get("image"), str):
        _set(c, "imagePullPolicy", pull_policy(c["image"]))
    _set(c, "terminationMessagePath", "/dev/termination-log")
    _set(c, "terminationMessagePolicy", "File")
    _set(c, "resources", {})
    for port in c.get("ports") or []:
        if isinstance(port, dict):
            _set(port, "protocol", "TCP")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(c.get(probe), dict):
            p = c[probe]
            for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                               ("failureThreshold", 3)):
                _set(p, key, value)


def pod_spec(spec: Spec) -> None:
    if not isinstance(spec, dict):
        return
    _set(spec, "restartPolicy", "Always")
    _set(spec, "dnsPolicy", "ClusterFirst")
    _set(spec, "schedulerName", "default-scheduler")
    _set(spec, "terminationGracePeriodSeconds", 30)
    _set(spec, "securityContext", {})
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or []:
            container(c)


def pod_template(owner_spec: Spec) -> None:
    template = owner_spec.get("template")
    if isinstance(template, dict):
        _child(template, "metadata")
        pod_spec(_child(template, "spec"))


def requests_from_limits(spec: Spec) -> None:
    """A Pod's (not a template's) containers request what they limit, for every resource they name no request."""
    for group in ("containers", "initContainers"):
        for c in spec.get(group) or []:
            resources = c.get("resources") if isinstance(c, dict) else None
            if isinstance(resources, dict) and isinstance(resources.get("limits"), dict):
                requests = _child(resources, "requests")
                for key, value in resources["limits"].items():
                    requests.setdefault(key, value)


def pod(obj: JsonDict) -> None:
    spec = _child(obj, "spec")
    requests_from_limits(spec)
    pod_spec(spec)
    _set(spec, "enableServiceLinks", True)
    _set(spec, "preemptionPolicy", "PreemptLowerPriority")
    _set(spec, "priority", 0)
    _set(spec, "serviceAccountName", "default")
    _set(spec, "serviceAccount", spec["serviceAccountName"])


def deployment(obj: JsonDict) -> None:
    spec = _child(obj, "spec")
    _set(spec, "replicas", 1)
    _set(spec, "revisionHistoryLimit", 10)
    _set(spec, "progressDeadlineSeconds", 600)
    strategy = _child(spec, "strategy")
    _set(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _child(strategy, "rollingUpdate")
        _set(rolling, "maxUnavailable", "25%")
        _set(rolling, "maxSurge", "25%")
    pod_template(spec)


def statefulset(obj: JsonDict) -> None:
    spec = _child(obj, "spec")
    _set(spec, "replicas", 1)
    _set(spec, "podManagementPolicy", "OrderedReady")
    _set(spec, "revisionHistoryLimit", 10)
    strategy = _child(spec, "updateStrategy")
    if not strategy.get("type"):  # only then is a missing rollingUpdate made
        strategy["type"] = "RollingUpdate"
        _child(strategy, "rollingUpdate")
    if strategy["type"] == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), dict):
        _set(strategy["rollingUpdate"], "partition", 0)
        _set(strategy["rollingUpdate"], "maxUnavailable", 1)  # MaxUnavailableStatefulSet is on by default
    retention = _child(spec, "persistentVolumeClaimRetentionPolicy")
    _set(retention, "whenDeleted", "Retain")
    _set(retention, "whenScaled", "Retain")
    for claim in spec.get("volumeClaimTemplates") or []:
        if isinstance(claim, dict):
            _set(claim, "apiVersion", "v1")
            _set(claim, "kind", "PersistentVolumeClaim")
            _set(_child(claim, "spec"), "volumeMode", "Filesystem")
            _set(_child(claim, "status"), "phase", "Pending")
    pod_template(spec)


def daemonset(obj: JsonDict) -> None:
    spec = _child(obj, "spec")
    _set(spec, "revisionHistoryLimit", 10)
    strategy = _child(spec, "updateStrategy")
    _set(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _child(strategy, "rollingUpdate")
        _set(rolling, "maxUnavailable", 1)
        _set(rolling, "maxSurge", 0)
    pod_template(spec)


def replicaset(obj: JsonDict) -> None:
    spec = _child(obj, "spec")
    _set(spec, "replicas", 1)
    pod_template(spec)


def replication_controller(obj: JsonDict) -> None:
    """The selector and the labels default to the template's labels (k8s.io/kubernetes core/v1 defaults)."""
    spec = _child(obj, "spec")
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if labels and not spec.get("selector"):
        spec["selector"] = dict(labels)
    if labels and not (obj.get("metadata") or {}).get("labels"):
        _child(obj, "metadata")["labels"] = dict(labels)
    _set(spec, "replicas", 1)
    pod_template(spec)


def job_spec(spec: Spec) -> None:
    _set(spec, "parallelism", 1)
    if spec.get("completions") is None and spec.get("parallelism") == 1:
        spec["completions"] = 1
    _set(spec, "backoffLimit", 6)
    _set(spec, "completionMode", "NonIndexed")
    _set(spec, "suspend", False)
    _set(spec, "podReplacementPolicy", "TerminatingOrFailed")
    pod_template(spec)


def job(obj: JsonDict) -> None:
    """As SetDefaults_Job, which also gives a Job without labels its template's (the generated ones included)."""
    spec = _child(obj, "spec")
    job_spec(spec)
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if labels and not (obj.get("metadata") or {}).get("labels"):
        _child(obj, "metadata")["labels"] = dict(labels)


def cronjob(obj: JsonDict) -> None:
    spec = _child(obj, "spec")
    _set(spec, "concurrencyPolicy", "Allow")
    _set(spec, "suspend", False)
    _set(spec, "successfulJobsHistoryLimit", 3)
    _set(spec, "failedJobsHistoryLimit", 1)
    job_template = _child(spec, "jobTemplate")
    _child(job_template, "metadata")
    pod_template(_child(job_template, "spec"))  # a template, not a Job: the Job's own defaults come when it is made


def service(obj: JsonDict) -> None:
    spec = _child(obj, "spec")
    _set(spec, "type", "ClusterIP")
    _set(spec, "sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        _set(spec, "internalTrafficPolicy", "Cluster")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        _set(spec, "externalTrafficPolicy", "Cluster")
    if spec["type"] == "LoadBalancer":
        _set(spec, "allocateLoadBalancerNodePorts", True)
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            _set(port, "protocol", "TCP")
            if port.get("targetPort") is None and port.get("port") is not None:
                port["targetPort"] = port["port"]


def secret(obj: JsonDict) -> None:
    _set(obj, "type", "Opaque")


def pvc(obj: JsonDict) -> None:
    _set(_child(obj, "spec"), "volumeMode", "Filesystem")


def pv(obj: JsonDict) -> None:
    spec = _child(obj, "spec")
    _set(spec, "persistentVolumeReclaimPolicy", "Retain")
    _set(spec, "volumeMode", "Filesystem")


def endpoints(obj: JsonDict) -> None:
    for subset in obj.get("subsets") or []:
        for port in (subset.get("ports") or []) if isinstance(subset, dict) else []:
            if isinstance(port, dict):
                _set(port, "protocol", "TCP")


def crd(obj: JsonDict) -> None:
    spec = _child(obj, "spec")
    names = _child(spec, "names")
    kind = str(names.get("kind") or "")
    _set(names, "singular", kind.lower())
    _set(names, "listKind", f"{kind}List")
    _set(_child(spec, "conversion"), "strategy", "None")


def limit_range(obj: JsonDict) -> None:
    """SetDefaults_LimitRangeItem: a Container item's default limit falls back to max, its default request to the
    default limit, then to min."""
    for item in _child(obj, "spec").get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default, request = _child(item, "default"), _child(item, "defaultRequest")
        for source, target in (("max", default), ("default", request), ("min", request)):
            for key, value in (item.get(source) or {}).items():
                target.setdefault(key, value)


def priority_class(obj: JsonDict) -> None:
    _set(obj, "preemptionPolicy", "PreemptLowerPriority")


def role_binding(obj: JsonDict) -> None:
    for subject in obj.get("subjects") or []:
        if isinstance(subject, dict) and subject.get("kind") in ("User", "Group"):
            _set(subject, "apiGroup", "rbac.authorization.k8s.io")


BY_KEY: dict[str, Callable[[JsonDict], None]] = {
    "/pods": pod,
    "/services": service,
    "/secrets": secret,
    "/persistentvolumeclaims": pvc,
    "/persistentvolumes": pv,
    "/endpoints": endpoints,
    "/limitranges": limit_range,


    "/replicationcontrollers": replication_controller,
    "apps/deployments": deployment,
    "apps/statefulsets": statefulset,
    "apps/daemonsets": daemonset,
    "apps/replicasets": replicaset,
    "batch/jobs": job,
    "batch/cronjobs": cronjob,
    "apiextensions.k8s.io/customresourcedefinitions": crd,
    "scheduling.k8s.io/priorityclasses": priority_class,
    "rbac.authorization.k8s.io/rolebindings": role_binding,
    "rbac.authorization.k8s.io/clusterrolebindings": role_binding,
}


def apply_builtin(key: str, obj: JsonDict) -> None:
    fill = BY_KEY.get(key)
    if fill is not None:
        fill(obj)


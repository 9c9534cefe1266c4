"""LimitRanges on created pods: containers get the default limits and requests (with the annotation saying so,
and the QoS class they make), a container beyond a min or max is refused (403), and a quota counts the defaults."""

from __future__ import annotations

from typing import Any

from engine.devcluster.backends import Cluster

from .test_resource_quota import create_quota, forbidden, pod, post, used

LIMITS = {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m"},
          "max": {"cpu": "1"}, "min": {"memory": "10Mi"}}


def create_limit_range(cluster: Cluster, namespace: str, *items: dict[str, Any]) -> dict[str, Any]:
    code, body = cluster.request("POST", f"/api/v1/namespaces/{namespace}/limitranges",
                                 body={"metadata": {"name": "lr"}, "spec": {"limits": list(items)}})
    assert code == 201, body
    return dict(body)


def test_a_limit_range_defaults_what_it_validates(devcluster: Cluster, namespace: str) -> None:
    stored = create_limit_range(devcluster, namespace, LIMITS)
    assert stored["spec"]["limits"][0]["defaultRequest"] == {"cpu": "100m", "memory": "256Mi"}


def test_containers_get_the_defaults_and_the_annotation(devcluster: Cluster, namespace: str) -> None:
    create_limit_range(devcluster, namespace, LIMITS)
    body = pod("p", {}, {"requests": {"memory": "50Mi"}})
    body["spec"]["initContainers"] = [{"name": "init", "image": "busybox"}]
    code, created = post(devcluster, namespace, "pods", body)
    assert code == 201, created
    spec = created["spec"]
    defaults = {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}}
    assert [c["resources"] for c in spec["containers"] + spec["initContainers"]] == [
        defaults, {"limits": defaults["limits"], "requests": {"cpu": "100m", "memory": "50Mi"}}, defaults]
    assert created["metadata"]["annotations"] == {"kubernetes.io/limit-ranger": (
        "LimitRanger plugin set: cpu, memory request for container c0; cpu, memory limit for container c0; "
        "cpu request for container c1; cpu, memory limit for container c1; cpu, memory request for init container "
        "init; cpu, memory limit for init container init")}
    assert created["status"]["qosClass"] == "Burstable"


def test_a_container_beyond_min_or_max_is_forbidden(devcluster: Cluster, namespace: str) -> None:
    create_limit_range(devcluster, namespace, LIMITS)
    forbidden(post(devcluster, namespace, "pods", pod("big", {"limits": {"cpu": "2"}})), "pods", "big",
              "maximum cpu usage per Container is 1, but limit is 2")
    forbidden(post(devcluster, namespace, "pods", pod("small", {"requests": {"memory": "1Mi"}})), "pods", "small",
              "minimum memory usage per Container is 10Mi, but request is 1Mi")


def test_a_quota_counts_the_defaults(devcluster: Cluster, namespace: str) -> None:
    create_limit_range(devcluster, namespace, LIMITS)
    create_quota(devcluster, namespace, {"requests.cpu": "1", "limits.memory": "1Gi"})
    assert post(devcluster, namespace, "pods", pod("p"))[0] == 201
    assert used(devcluster, namespace) == {"limits.memory": "256Mi", "requests.cpu": "100m"}

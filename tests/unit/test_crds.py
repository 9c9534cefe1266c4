"""kplan.dev CRDs (crds/): well-formed, structural, the agreed names and columns, packaged copies identical."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml

from engine import crds

ROOT = Path(__file__).resolve().parents[2]
CRD_DIR = ROOT / "crds"
ASSET_DIR = ROOT / "engine" / "assets" / "crds"
STATUSES = ["NEVER_RUN", "PENDING", "IN_PROGRESS", "COMPLETE", "ERROR", "FATAL_ERROR"]
EXPECTED = {
    "operators.kplan.dev": ("Operator", "kpop"),
    "operatorversions.kplan.dev": ("OperatorVersion", "kpov"),
    "instances.kplan.dev": ("Instance", "kpi"),
}


def by_name() -> dict[str, dict[str, Any]]:
    return {crd["metadata"]["name"]: crd for crd in crds.load()}


def schema_of(name: str) -> dict[str, Any]:
    version = by_name()[name]["spec"]["versions"][0]
    return dict(version["schema"]["openAPIV3Schema"])


def columns_of(name: str) -> list[tuple[str, str, str]]:
    version = by_name()[name]["spec"]["versions"][0]
    return [(c["name"], c["type"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]


def nodes(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema node with its path."""
    yield path or ".", schema
    for key, child in schema.get("properties", {}).items():
        yield from nodes(child, f"{path}.{key}")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from nodes(schema["additionalProperties"], f"{path}.*")
    if "items" in schema:
        yield from nodes(schema["items"], f"{path}[]")


@pytest.mark.parametrize("path", sorted(CRD_DIR.glob("*.yaml")), ids=lambda p: p.name)
def test_each_file_is_one_crd_named_plural_dot_group(path: Path) -> None:
    documents = list(yaml.safe_load_all(path.read_text()))
    assert len(documents) == 1
    crd = documents[0]
    assert (crd["apiVersion"], crd["kind"]) == ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    spec = crd["spec"]
    assert crd["metadata"]["name"] == f"{spec['names']['plural']}.{spec['group']}"
    assert (spec["group"], spec["scope"]) == ("kplan.dev", "Namespaced")


def test_the_three_crds_with_kinds_short_names_and_category() -> None:
    found = by_name()
    assert set(found) == set(EXPECTED)
    for name, (kind, short) in EXPECTED.items():
        names = found[name]["spec"]["names"]
        assert (names["kind"], names["listKind"], names["shortNames"], names["categories"]) == (
            kind,
            f"{kind}List",
            [short],
            ["kplan"],
        )
        assert names["singular"] == kind.lower()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_exactly_one_served_storage_version_with_a_status_subresource(name: str) -> None:
    versions = by_name()[name]["spec"]["versions"]
    assert [v["name"] for v in versions if v["storage"]] == ["v1alpha1"]
    assert all(v["served"] for v in versions)
    assert versions[0]["subresources"] == {"status": {}}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_schema_is_structural(name: str) -> None:
    schema = schema_of(name)
    assert schema["properties"]["metadata"] == {"type": "object"}
    for path, node in nodes(schema):
        assert node.get("type") or node.get("x-kubernetes-preserve-unknown-fields") is True, path
        assert not {"$ref", "allOf", "anyOf", "oneOf", "not"} & set(node), path
        assert not ("properties" in node and "additionalProperties" in node), path
        if "enum" in node:
            assert all(isinstance(value, str) for value in node["enum"]), path
        if node.get("x-kubernetes-list-type") == "map":
            keys = node["x-kubernetes-list-map-keys"]
            assert set(keys) <= set(node["items"].get("required", [])), path


def test_printer_columns() -> None:
    age = ("AGE", "date", ".metadata.creationTimestamp")
    assert columns_of("instances.kplan.dev") == [
        ("OPERATOR", "string", r".metadata.labels.kplan\.dev/operator"),
        ("VERSION", "string", ".spec.operatorVersion.name"),
        ("PLAN", "string", ".status.activePlan.name"),
        ("STATUS", "string", ".status.activePlan.status"),
        age,
    ]
    assert columns_of("operatorversions.kplan.dev") == [
        ("OPERATOR", "string", ".spec.operator.name"),
        ("VERSION", "string", ".spec.version"),
        ("APP VERSION", "string", ".spec.appVersion"),
        age,
    ]
    assert columns_of("operators.kplan.dev")[-1] == age


def test_every_plan_phase_and_step_status_is_the_status_enum() -> None:
    found = nodes(schema_of("instances.kplan.dev"))
    statuses = {path: node for path, node in found if path.endswith(".status") and "conditions" not in path}
    del statuses[".status"]
    assert sorted(statuses) == [
        ".status.activePlan.status",
        ".status.plans.*.phases[].status",
        ".status.plans.*.phases[].steps[].status",
        ".status.plans.*.status",
    ]
    assert all(node["enum"] == STATUSES for node in statuses.values())


def test_conditions_have_the_metav1_condition_shape() -> None:
    conditions = schema_of("instances.kplan.dev")["properties"]["status"]["properties"]["conditions"]
    assert (conditions["x-kubernetes-list-type"], conditions["x-kubernetes-list-map-keys"]) == ("map", ["type"])
    item = conditions["items"]
    required = ["lastTransitionTime", "message", "reason", "status", "type"]
    assert sorted(item["properties"]) == sorted([*required, "observedGeneration"])
    assert sorted(item["required"]) == required
    assert item["properties"]["status"]["enum"] == ["True", "False", "Unknown"]


# --- validating objects the engine and the CLI write -----------------------------------------------------------------


def json_schema(node: dict[str, Any]) -> dict[str, Any]:
    """The openAPIV3Schema as JSON Schema, refusing the fields the API server would prune."""
    out = {k: v for k, v in node.items() if not k.startswith("x-kubernetes-") and k not in {"nullable", "format"}}
    if node.get("nullable") and "type" in node:
        out["type"] = [node["type"], "null"]
    if "properties" in node:
        out["properties"] = {k: json_schema(v) for k, v in node["properties"].items()}
        if not node.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = json_schema(node["additionalProperties"])
    if "items" in node:
        out["items"] = json_schema(node["items"])
    return out


def errors(name: str, obj: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(json_schema(schema_of(name)))
    return sorted(f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj))


INSTANCE: dict[str, Any] = yaml.safe_load(
    """
apiVersion: kplan.dev/v1alpha1
kind: Instance
metadata: {name: cache, namespace: shop, labels: {kplan.dev/operator: redis}}
spec:
  operatorVersion: {name: redis-0.3.0}
  parameters: {replicas: 3, persistence: {size: 1Gi}, users: [a, b]}
  planExecution: {planName: backup, uid: 5b1c}
status:
  observedGeneration: 4
  conditions:
    - {type: Ready, status: "True", reason: PlanComplete, message: deploy complete,
       lastTransitionTime: "2025-01-02T03:04:05Z", observedGeneration: 4}
  activePlan: {name: deploy, uid: 9f2e, status: IN_PROGRESS}
  plans:
    deploy:
      status: IN_PROGRESS
      uid: 9f2e
      startedAt: "2025-01-02T03:04:05Z"
      lastUpdatedAt: "2025-01-02T03:04:09Z"
      message: ""
      phases:
        - name: main
          status: IN_PROGRESS
          steps:
            - {name: app, status: COMPLETE, startedAt: "2025-01-02T03:04:05Z", attempts: 1}
            - {name: init, status: IN_PROGRESS, message: "Job shop/cache-init: 0/1 succeeded", attempts: 2,
               startedAt: "2025-01-02T03:04:07Z", lastUpdatedAt: "2025-01-02T03:04:09Z"}
    backup: {status: NEVER_RUN, startedAt: null}
  lastRun: {operatorVersion: redis-0.3.0, parameters: {replicas: 3, password: "sha256:ab12"}, planExecutionUID: "",
            plan: deploy}
  history: [{operatorVersion: redis-0.2.0, parameters: {replicas: 1}, at: "2025-01-01T00:00:00Z"}]
  appliedResources:
    - {apiVersion: apps/v1, kind: StatefulSet, namespace: shop, name: cache}
    - {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: cache-reader}
  backoff: {step: init, until: "2025-01-02T03:05:00Z", attempts: 2, delaySeconds: 20}
"""
)


def test_a_full_instance_validates_and_keeps_every_field() -> None:
    assert errors("instances.kplan.dev", INSTANCE) == []


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"spec": {}}, "spec: 'operatorVersion' is a required property"),
        ({"status": {"activePlan": {"status": "DONE"}}}, "status.activePlan.status: 'DONE' is not one of"),
        ({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}, "is a required property"),
        ({"status": {"plans": {"deploy": {"phases": [{"name": "m", "stepz": []}]}}}}, "('stepz' was unexpected)"),
        ({"status": {"appliedResources": [{"kind": "Job", "name": "x"}]}}, "'apiVersion' is a required property"),
    ],
)
def test_invalid_instances_are_rejected(change: dict[str, Any], error: str) -> None:
    obj = {**INSTANCE, **change}
    assert any(error in e for e in errors("instances.kplan.dev", obj)), errors("instances.kplan.dev", obj)


def test_operator_version_carries_the_package_files() -> None:
    version: dict[str, Any] = {
        "apiVersion": "kplan.dev/v1alpha1",
        "kind": "OperatorVersion",
        "metadata": {"name": "redis-0.3.0", "namespace": "shop"},
        "spec": {
            "operator": {"name": "redis"},
            "version": "0.3.0",
            "appVersion": "7.2.4",
            "kplanVersion": ">=0.1",
            "upgradableFrom": ["0.2.x"],
            "files": {"operator.yaml": "name: redis\n", "params.yaml": "", "templates/svc.yaml": "kind: Service\n"},
        },
    }
    assert errors("operatorversions.kplan.dev", version) == []
    version["spec"]["files"]["templates/bad.yaml"] = {"not": "a string"}
    assert errors("operatorversions.kplan.dev", version) == [
        "spec.files.templates/bad.yaml: {'not': 'a string'} is not of type 'string'"
    ]


def test_operator_validates() -> None:
    operator = {
        "apiVersion": "kplan.dev/v1alpha1",
        "kind": "Operator",
        "metadata": {"name": "redis", "namespace": "shop"},
        "spec": {
            "description": "Redis cluster",
            "maintainers": [{"name": "A. Maintainer", "email": "a@example.org"}],
            "url": "https://redis.io",
            "kplanVersion": ">=0.1",
        },
    }
    assert errors("operators.kplan.dev", operator) == []


# --- finding the files ------------------------------------------------------------------------------------------------


def test_load_returns_the_crds_in_apply_order() -> None:
    assert [crd["spec"]["names"]["kind"] for crd in crds.load()] == ["Operator", "OperatorVersion", "Instance"]
    assert Path(str(crds.source())) == CRD_DIR


def test_packaged_copies_are_byte_identical_to_crds() -> None:
    canonical = sorted(p.name for p in CRD_DIR.glob("*.yaml"))
    assert canonical == sorted(crds.FILES)
    assert sorted(p.name for p in ASSET_DIR.iterdir()) == canonical
    for name in canonical:
        assert (ASSET_DIR / name).read_bytes() == (CRD_DIR / name).read_bytes(), f"cp crds/{name} engine/assets/crds/"


def test_packaged_copies_load_like_the_checkout() -> None:
    assert crds.load(crds.packaged()) == crds.load()

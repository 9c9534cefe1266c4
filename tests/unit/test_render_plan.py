"""Rendering a whole plan: every step in order with its location in the context, all-or-nothing on
errors, which task kinds render, and the config-hash annotation that rolls exactly the pods using
a changed ConfigMap or Secret."""

from __future__ import annotations

from typing import Any

import pytest
from render_helpers import SMALL, apply, configmap, context, package, serial_plan

from engine.errors import RenderError
from engine.model import Package, Phase, Plan, Step, Strategy, Task, TaskKind
from engine.render import ANNOTATION_CONFIG_HASH, render_plan, render_plan_tasks


def located(name: str) -> str:
    return configmap(name, "data:\n  where: '{{ PlanName }}/{{ PhaseName }}/{{ StepName }}/{{ TaskName }}'")


class TestSteps:
    def test_every_step_renders_its_tasks_with_its_location(self) -> None:
        plan = Plan(
            "deploy",
            (
                Phase("one", (Step("a", ("ta",)), Step("b", ("tb", "ta")))),
                Phase("two", (Step("c", ("tb",)),), Strategy.PARALLEL),
            ),
        )
        pkg = package(
            {"a.yaml": located("a-{{ StepName }}"), "b.yaml": located("b-{{ StepName }}")},
            tasks=(apply("ta", "a.yaml"), apply("tb", "b.yaml")),
            plans={"deploy": plan},
        )
        rendered = render_plan(pkg, "deploy", context(), limits=SMALL)
        assert list(rendered) == ["a", "b", "c"]
        where = {step: [obj["data"]["where"] for obj in objects] for step, objects in rendered.items()}
        assert where == {
            "a": ["deploy/one/a/ta"],
            "b": ["deploy/one/b/tb", "deploy/one/b/ta"],
            "c": ["deploy/two/c/tb"],
        }
        assert rendered["b"][0]["metadata"]["annotations"] == {"kplan.dev/plan": "deploy", "kplan.dev/step": "b"}

    def test_split_by_task_in_step_order(self) -> None:
        plan = serial_plan("deploy", ("a", ("two", "none", "one")), ("b", ()))
        tasks = (apply("two", "c.yaml", "a.yaml"), Task("none", TaskKind.DUMMY), apply("one", "b.yaml"))
        pkg = package({"a.yaml": configmap("a"), "b.yaml": configmap("b"), "c.yaml": configmap("c")},
                      tasks=tasks, plans={"deploy": plan})
        by_task = render_plan_tasks(pkg, "deploy", context(), limits=SMALL)
        names = {step: [[obj["metadata"]["name"] for obj in objects] for objects in outputs]
                 for step, outputs in by_task.items()}
        assert names == {"a": [["c", "a"], [], ["b"]], "b": []}
        assert render_plan(pkg, "deploy", context(), limits=SMALL) == {
            step: [obj for objects in outputs for obj in objects] for step, outputs in by_task.items()
        }

    def test_task_kinds(self) -> None:
        pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pipe\nspec: {containers: []}\n"
        tasks = (
            Task("toggle", TaskKind.TOGGLE, resources=("t.yaml",), parameter="on"),
            Task("delete", TaskKind.DELETE, resources=("d.yaml",)),
            Task("pipe", TaskKind.PIPE, pod="pod.yaml"),
            Task("child", TaskKind.OPERATOR, package="other", version="1.0.0"),
            Task("wait", TaskKind.WAIT),
            Task("dummy", TaskKind.DUMMY),
        )
        plan = serial_plan("deploy", *((task.name, (task.name,)) for task in tasks))
        pkg = package(
            {"t.yaml": configmap("toggled"), "d.yaml": configmap("deleted"), "pod.yaml": pod},
            tasks=tasks,
            plans={"deploy": plan},
        )
        rendered = render_plan(pkg, "deploy", context({"on": False}), limits=SMALL)
        names = {step: [obj["metadata"]["name"] for obj in objects] for step, objects in rendered.items()}
        assert names == {
            "toggle": ["toggled"],
            "delete": ["deleted"],
            "pipe": ["pipe"],
            "child": [],
            "wait": [],
            "dummy": [],
        }

    def test_all_or_nothing(self) -> None:
        pkg = package(
            {"good.yaml": configmap("good"), "bad.yaml": configmap("bad", "data:\n  x: {{ Params.nope }}")},
            tasks=(apply("good", "good.yaml"), apply("bad", "bad.yaml")),
            plans={"deploy": serial_plan("deploy", ("first", ("good",)), ("second", ("bad",)))},
        )
        with pytest.raises(RenderError) as caught:
            render_plan(pkg, "deploy", context(), limits=SMALL)
        assert (caught.value.file, caught.value.line, caught.value.reason) == (
            "bad.yaml",
            6,
            "'Params' has no attribute 'nope'",
        )

    def test_unknown_plan(self) -> None:
        with pytest.raises(RenderError) as caught:
            render_plan(package({}), "backup", context())
        assert "no plan named 'backup'" in caught.value.reason

    def test_unknown_task(self) -> None:
        pkg = package({}, plans={"deploy": serial_plan("deploy", ("s", ("ghost",)))})
        with pytest.raises(RenderError) as caught:
            render_plan(pkg, "deploy", context())
        assert "'ghost'" in caught.value.reason


DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
{spec}
"""

STATEFULSET = DEPLOYMENT.replace("apps/v1\nkind: Deployment", "apps/v1\nkind: StatefulSet")

SECRET = (
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n"
    "stringData:\n  password: '{{{{ Params.password }}}}'\n"
)

USES_MOUNT = (
    "      volumes:\n      - name: c\n        configMap: {name: settings}\n"
    "      containers: [{name: c, image: x}]"
)
USES_ENV = (
    "      containers:\n      - name: c\n        image: x\n        env:\n"
    "        - name: P\n          valueFrom: {secretKeyRef: {name: creds, key: password}}"
)
USES_NOTHING = "      containers: [{name: c, image: x}]"
USES_PROJECTED_AND_ENVFROM = (
    "      volumes:\n      - name: p\n        projected:\n          sources:\n          - configMap: {name: settings}\n"
    "      containers:\n      - name: c\n        image: x\n        envFrom:\n        - secretRef: {name: creds}"
)
USES_FOREIGN = "      volumes:\n      - name: c\n        configMap: {name: not-rendered-here}\n      containers: []"


def config_package(workloads: dict[str, str]) -> Package:
    templates = {
        "settings.yaml": configmap("settings", "data:\n  level: '{{ Params.level }}'"),
        "creds.yaml": SECRET.format(name="creds"),
        "workloads.yaml": "\n---\n".join(workloads.values()),
    }
    tasks = (apply("config", "settings.yaml", "creds.yaml"), apply("apps", "workloads.yaml"))
    plan = serial_plan("deploy", ("config", ("config",)), ("apps", ("apps",)))
    return package(templates, tasks=tasks, plans={"deploy": plan})


def hashes(workloads: dict[str, str], **params: Any) -> dict[str, str | None]:
    pkg = config_package(workloads)
    values = {"level": "info", "password": "s3cret", **params}
    rendered = render_plan(pkg, "deploy", context(values), limits=SMALL)
    found: dict[str, str | None] = {}
    for obj in rendered["apps"]:
        template = obj["spec"]["template"]
        found[obj["metadata"]["name"]] = (template["metadata"].get("annotations") or {}).get(ANNOTATION_CONFIG_HASH)
    return found


WORKLOADS = {
    "mounts": DEPLOYMENT.format(name="mounts", spec=USES_MOUNT),
    "env": STATEFULSET.format(name="env", spec=USES_ENV),
    "plain": DEPLOYMENT.format(name="plain", spec=USES_NOTHING),
    "both": DEPLOYMENT.format(name="both", spec=USES_PROJECTED_AND_ENVFROM),
    "foreign": DEPLOYMENT.format(name="foreign", spec=USES_FOREIGN),
}


class TestConfigHash:
    def test_only_pod_templates_using_rendered_config_are_annotated(self) -> None:
        found = hashes(WORKLOADS)
        assert found["plain"] is None
        assert found["foreign"] is None
        assert all(len(found[name] or "") == 64 for name in ("mounts", "env", "both"))
        assert len({found["mounts"], found["env"], found["both"]}) == 3

    def test_a_configmap_change_rolls_exactly_its_users(self) -> None:
        before, after = hashes(WORKLOADS), hashes(WORKLOADS, level="debug")
        changed = {name for name in WORKLOADS if before[name] != after[name]}
        assert changed == {"mounts", "both"}

    def test_a_secret_change_rolls_exactly_its_users(self) -> None:
        before, after = hashes(WORKLOADS), hashes(WORKLOADS, password="other")
        changed = {name for name in WORKLOADS if before[name] != after[name]}
        assert changed == {"env", "both"}

    def test_the_hash_is_deterministic(self) -> None:
        assert hashes(WORKLOADS) == hashes(WORKLOADS)

    def test_same_data_in_another_plan_order_gives_the_same_hash(self) -> None:
        reordered = dict(reversed(list(WORKLOADS.items())))
        assert hashes(reordered) == hashes(WORKLOADS)

    def test_cronjob_and_pod_templates(self) -> None:
        cronjob = (
            "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: cron\nspec:\n  schedule: '* * * * *'\n"
            "  jobTemplate:\n    spec:\n      template:\n        spec:\n          volumes:\n"
            "          - {name: c, configMap: {name: settings}}\n          containers: []\n"
        )
        pod = (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod\nspec:\n  containers:\n  - name: c\n"
            "    env:\n    - {name: L, valueFrom: {configMapKeyRef: {name: settings, key: level}}}\n"
        )
        pkg = config_package({"cron": cronjob, "pod": pod})
        rendered = render_plan(pkg, "deploy", context({"level": "x", "password": "p"}), limits=SMALL)
        cron, pod_obj = rendered["apps"]
        cron_hash = cron["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["annotations"][ANNOTATION_CONFIG_HASH]
        assert cron_hash == pod_obj["metadata"]["annotations"][ANNOTATION_CONFIG_HASH]

    def test_config_in_another_namespace_does_not_count(self) -> None:
        other = configmap("settings").replace("  name: settings\n", "  name: settings\n  namespace: elsewhere\n")
        pkg = package(
            {"c.yaml": other, "d.yaml": DEPLOYMENT.format(name="d", spec=USES_MOUNT)},
            tasks=(apply("t", "c.yaml", "d.yaml"),),
            plans={"deploy": serial_plan("deploy", ("s", ("t",)))},
        )
        (_, deployment) = render_plan(pkg, "deploy", context(), limits=SMALL)["s"]
        assert ANNOTATION_CONFIG_HASH not in (deployment["spec"]["template"]["metadata"].get("annotations") or {})

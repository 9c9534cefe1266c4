"""The Runner on its own, as `kplan run` uses it: reconciled in the foreground on every cache change, it emits
typed run events in order, it drives only the Instances of its driver (`kplan.dev/runner: cli` or not), and the pass
that ends a plan settles (the watch event of its status write calls for no pass)."""

from __future__ import annotations

import contextlib
import queue
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from engine.controller import Manager
from engine.kube import Caches, Kube, connect
from engine.runner import (
    CLI,
    DRIVER_ANNOTATION,
    PlanFinished,
    PlanStarted,
    RunEvent,
    Runner,
    StepCompleted,
    StepFailed,
    StepStarted,
)

if TYPE_CHECKING:
    from conftest import Kplan

WAIT = 30.0


@pytest.fixture
def own_kube(sim_kubeconfig: Path) -> Iterator[Kube]:
    with connect(str(sim_kubeconfig)) as kube:
        yield kube


def drive(kube: Kube, name: str, namespace: str, done: Callable[[], bool],
          then: Callable[[Runner], None] | None = None, **runner_args: Any) -> list[RunEvent]:
    """Reconcile `namespace/name` now and after every cache change (or timer) until `done()`, then hand the runner to
    `then`; the run events."""
    events: list[RunEvent] = []
    changed: queue.Queue[str] = queue.Queue()
    caches = Caches(kube)
    caches.add_handler(lambda change, _obj: changed.put(change))
    runner = Runner(kube, caches, emit=events.append, **runner_args)
    deadline = time.monotonic() + WAIT
    try:
        while not done():
            after = runner.reconcile(namespace, name)
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"not done within {WAIT}s; events: {events}"
            with contextlib.suppress(queue.Empty):
                changed.get(timeout=min(after if after is not None else remaining, remaining))
        if then is not None:
            then(runner)
    finally:
        caches.stop()
    return events


def test_the_runner_emits_plan_and_step_events_in_order(kplan: Kplan, own_kube: Kube) -> None:
    kplan.install("serial", "web")

    events = drive(own_kube, "web", kplan.namespace, lambda: kplan.plan("web", "deploy").get("status") == "COMPLETE")

    ns = kplan.namespace
    uid = kplan.plan("web", "deploy")["uid"]
    finished = [e for e in events if isinstance(e, PlanFinished)]
    assert [e for e in events if not isinstance(e, PlanFinished)] == [
        PlanStarted(ns, "web", "deploy", uid),
        StepStarted(ns, "web", "deploy", "main", "job"),
        StepCompleted(ns, "web", "deploy", "main", "job"),
        StepStarted(ns, "web", "deploy", "main", "config"),
        StepCompleted(ns, "web", "deploy", "main", "config"),
    ]
    assert len(finished) == 1 and finished[0].status == "COMPLETE" and finished[0].duration is not None
    assert events[-1] is finished[0]


def test_the_runner_reports_failed_steps(kplan: Kplan, own_kube: Kube) -> None:
    kplan.install("failing", "bad")

    events = drive(own_kube, "bad", kplan.namespace,
                   lambda: kplan.plan("bad", "deploy").get("status") == "FATAL_ERROR")

    failed = [e for e in events if isinstance(e, StepFailed)]
    assert [e.fatal for e in failed][-1] is True
    assert any(not e.fatal for e in failed)  # ERROR first, retried
    assert all("BackoffLimitExceeded" in e.message for e in failed)
    assert isinstance(events[-1], PlanFinished) and events[-1].status == "FATAL_ERROR"


def test_a_cli_runner_drives_instances_annotated_for_the_cli(kplan: Kplan, own_kube: Kube) -> None:
    kplan.install("params", "solo", annotations={DRIVER_ANNOTATION: CLI})

    drive(own_kube, "solo", kplan.namespace, lambda: kplan.plan("solo", "deploy").get("status") == "COMPLETE",
          driver=CLI)

    assert kplan.kube.get("v1", "ConfigMap", "solo-config", kplan.namespace) is not None


def test_the_manager_leaves_instances_annotated_for_the_cli_alone(kplan: Kplan, manager: Manager) -> None:
    kplan.install("params", "solo", annotations={DRIVER_ANNOTATION: CLI})
    kplan.install("params", "other")
    kplan.wait_plan("other", "deploy")
    assert manager.queue.wait_idle(WAIT)  # `solo` was queued first: it was looked at too

    assert (kplan.instance("solo") or {}).get("status") in (None, {})
    assert kplan.kube.get("v1", "ConfigMap", "solo-config", kplan.namespace) is None
    assert (kplan.instance("solo")["metadata"].get("finalizers") or []) == []


def test_status_writes_keep_the_servers_field_sets(kplan: Kplan, own_kube: Kube) -> None:
    kplan.install("params", "fields", annotations={DRIVER_ANNOTATION: CLI})

    drive(own_kube, "fields", kplan.namespace, lambda: kplan.plan("fields", "deploy").get("status") == "COMPLETE",
          driver=CLI)

    entries = kplan.instance("fields")["metadata"]["managedFields"]  # the caches keep them without field sets
    assert entries and all(e.get("fieldsType") == "FieldsV1" and e.get("fieldsV1") for e in entries)
    assert any(e.get("subresource") == "status" and "f:status" in e["fieldsV1"] for e in entries)


@pytest.mark.parametrize("package", ["params", "failing"])
def test_the_pass_that_ends_a_plan_settles_so_the_echo_of_its_status_write_calls_for_no_pass(
        kplan: Kplan, own_kube: Kube, package: str) -> None:
    kplan.install(package, "ends", annotations={DRIVER_ANNOTATION: CLI})
    echoed: list[str | None] = []

    drive(own_kube, "ends", kplan.namespace,
          lambda: kplan.plan("ends", "deploy").get("status") in ("COMPLETE", "FATAL_ERROR"),
          then=lambda runner: echoed.append(runner.echo("MODIFIED", kplan.instance("ends"))), driver=CLI)

    assert echoed == [f"{kplan.namespace}/ends"]  # the Instance as the server has it: nothing its last pass had not

"""Printing plans: one line per run event, durations, and the KUDO-style plan → phase → step tree."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine.cli import progress
from engine.package import loader
from engine.runner import PlanFinished, PlanStarted, RunEvent, StepCompleted, StepFailed, StepStarted

PKG = loader.load(str(Path(__file__).parent.parent / "e2e" / "packages" / "cli-broken-render"))
NOW = datetime(2026, 1, 1, 12, 0, 30, tzinfo=UTC)


@pytest.mark.parametrize(("event", "line"), [
    (PlanStarted("ns", "shop", "deploy", "u1"), "plan deploy: started"),
    (StepStarted("ns", "shop", "deploy", "main", "app"), "deploy/main/app: started"),
    (StepCompleted("ns", "shop", "deploy", "main", "app"), "deploy/main/app: COMPLETE"),
    (StepFailed("ns", "shop", "deploy", "main", "app", "Job ns/x failed"), "deploy/main/app: ERROR: Job ns/x failed"),
    (StepFailed("ns", "shop", "deploy", "main", "app", "conflict", fatal=True),
     "deploy/main/app: FATAL_ERROR: conflict"),
    (PlanFinished("ns", "shop", "deploy", "COMPLETE", "", 3.4), "plan deploy: COMPLETE in 3s"),
    (PlanFinished("ns", "shop", "deploy", "FATAL_ERROR", "step app: conflict", None),
     "plan deploy: FATAL_ERROR: step app: conflict"),
])
def test_each_run_event_is_one_line(event: RunEvent, line: str) -> None:
    assert progress.event_line(event) == line


@pytest.mark.parametrize(("seconds", "text"), [(0, "0s"), (42.4, "42s"), (185, "3m5s"), (3720, "1h2m"), (None, "")])
def test_durations_read_like_kubectl_ages(seconds: float | None, text: str) -> None:
    assert progress.duration_text(seconds) == text


def instance(status: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "shop", "namespace": "ns"},
            "spec": {"operatorVersion": {"name": "cli-broken-render-0.1.0"}}, "status": status}


DEPLOY = {
    "status": "IN_PROGRESS", "uid": "u1", "startedAt": "2026-01-01T12:00:00Z", "lastUpdatedAt": "2026-01-01T12:00:20Z",
    "phases": [{"name": "main", "status": "IN_PROGRESS", "steps": [
        {"name": "config", "status": "IN_PROGRESS", "message": "ConfigMap ns/shop-config: not applied yet",
         "startedAt": "2026-01-01T12:00:00Z", "attempts": 2},
    ]}],
}


def test_the_tree_shows_every_plan_with_phases_steps_messages_and_durations() -> None:
    status = {"activePlan": {"name": "deploy", "uid": "u1", "status": "IN_PROGRESS"}, "plans": {"deploy": DEPLOY}}

    tree = progress.status_tree(instance(status), PKG, NOW)

    assert tree.splitlines() == [
        'Plan(s) for "shop" in namespace "ns":',
        ".",
        '└── shop (Operator-Version: "cli-broken-render-0.1.0" Active-Plan: "deploy")',
        "    ├── Plan backup (serial strategy) [NEVER_RUN]",
        "    │   └── Phase main (serial strategy) [NEVER_RUN]",
        "    │       └── Step backup [NEVER_RUN]",
        "    └── Plan deploy (serial strategy) [IN_PROGRESS], last updated 2026-01-01T12:00:20Z (30s)",
        "        └── Phase main (serial strategy) [IN_PROGRESS]",
        "            └── Step config [IN_PROGRESS]: ConfigMap ns/shop-config: not applied yet (attempt 2) (30s)",
    ]


def test_an_ended_plan_is_timed_to_its_last_update_and_shows_why_it_failed() -> None:
    failed = {**DEPLOY, "status": "FATAL_ERROR", "message": "step config: conflict"}
    status = {"activePlan": {"name": "deploy"}, "plans": {"deploy": failed}}

    tree = progress.status_tree(instance(status), None, NOW, ["deploy"])

    assert tree.splitlines()[3] == (
        "    └── Plan deploy [FATAL_ERROR], last updated 2026-01-01T12:00:20Z (20s): step config: conflict"
    )
    assert "Phase main [IN_PROGRESS]" in tree  # without the package, strategies are unknown and left out


def test_an_instance_without_status_shows_its_plans_never_run() -> None:
    tree = progress.status_tree(instance({}), PKG, NOW)

    assert 'Active-Plan: "none"' in tree
    assert "Plan deploy (serial strategy) [NEVER_RUN]" in tree

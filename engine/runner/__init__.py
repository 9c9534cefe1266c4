"""The runner: carries out the planner's decisions through engine.kube (shared by the manager and `kplan run`)."""

from typing import TYPE_CHECKING

from engine import exports

if TYPE_CHECKING:
    from engine.runner.events import (
        PlanFinished,
        PlanStarted,
        RunEvent,
        StepCompleted,
        StepFailed,
        StepStarted,
        changes,
    )
    from engine.runner.runner import CLI, DRIVER_ANNOTATION, INSTANCE, MANAGER, OPERATOR_VERSION, Runner

__all__ = [
    "CLI",
    "DRIVER_ANNOTATION",
    "INSTANCE",
    "MANAGER",
    "OPERATOR_VERSION",
    "PlanFinished",
    "PlanStarted",
    "RunEvent",
    "Runner",
    "StepCompleted",
    "StepFailed",
    "StepStarted",
    "changes",
]

# Where each name lives: imported at its first use (engine.exports).
_HOMES = {
    "PlanFinished": "events",
    "PlanStarted": "events",
    "RunEvent": "events",
    "StepCompleted": "events",
    "StepFailed": "events",
    "StepStarted": "events",
    "changes": "events",
    "CLI": "runner",
    "DRIVER_ANNOTATION": "runner",
    "INSTANCE": "runner",
    "MANAGER": "runner",
    "OPERATOR_VERSION": "runner",
    "Runner": "runner",
}
exports.defer(__name__, _HOMES)

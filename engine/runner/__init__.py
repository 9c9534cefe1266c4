"""The runner: carries out the planner's decisions through engine.kube (shared by the manager and `kplan run`)."""

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

"""The planner: a pure function from (package, Instance, observed objects, now) to the next actions and status."""

from engine.planner.actions import (
    Action,
    AddFinalizer,
    Apply,
    ClearPlanExecution,
    Decision,
    Delete,
    Event,
    Failure,
    GenerateParameters,
    RemoveFinalizer,
    Settings,
)
from engine.planner.decide import decide
from engine.planner.failures import record_failures
from engine.planner.refs import Ref, instance_ref
from engine.planner.status import PlanStatus
from engine.planner.view import FINALIZER

__all__ = [
    "FINALIZER",
    "Action",
    "AddFinalizer",
    "Apply",
    "ClearPlanExecution",
    "Decision",
    "Delete",
    "Event",
    "Failure",
    "GenerateParameters",
    "PlanStatus",
    "Ref",
    "RemoveFinalizer",
    "Settings",
    "decide",
    "instance_ref",
    "record_failures",
]

"""The planner: a pure function from (package, Instance, observed objects, now) to the next actions and status."""

from typing import TYPE_CHECKING

from engine import exports

if TYPE_CHECKING:
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

# Where each name lives: imported at its first use (engine.exports).
_HOMES = {
    "Action": "actions",
    "AddFinalizer": "actions",
    "Apply": "actions",
    "ClearPlanExecution": "actions",
    "Decision": "actions",
    "Delete": "actions",
    "Event": "actions",
    "Failure": "actions",
    "GenerateParameters": "actions",
    "RemoveFinalizer": "actions",
    "Settings": "actions",
    "decide": "decide",
    "record_failures": "failures",
    "Ref": "refs",
    "instance_ref": "refs",
    "PlanStatus": "status",
    "FINALIZER": "view",
}
exports.defer(__name__, _HOMES)

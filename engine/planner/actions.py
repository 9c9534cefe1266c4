"""What a decision asks the shell to do (actions), what the shell reports back (Failure), and the Decision."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from engine.model import Generated
from engine.planner.ownership import LEGACY_MANAGER, Handover
from engine.planner.refs import Ref

__all__ = [
    "Action",
    "AddFinalizer",
    "Apply",
    "ClearPlanExecution",
    "Decision",
    "Delete",
    "Event",
    "Failure",
    "GenerateParameters",
    "RemoveFinalizer",
    "Settings",
]

PRUNE_STEP = "prune"
UNINSTALL_STEP = "uninstall"


@dataclass(frozen=True)
class Apply:
    """Server-side apply of fully rendered objects with the Instance's field manager (engine.planner.ownership);
    first, on each object of `handovers`, the fields of the managers named there become `manager`'s."""

    step: str
    objects: tuple[dict[str, Any], ...]
    force: bool = False
    manager: str = LEGACY_MANAGER
    handovers: tuple[Handover, ...] = ()


@dataclass(frozen=True)
class Delete:
    """Delete with background propagation; 404 counts as success."""

    step: str
    refs: tuple[Ref, ...]


@dataclass(frozen=True)
class ClearPlanExecution:
    """Merge-patch `spec.planExecution: null`: the request is recorded in `status.lastRun`."""

    step: str = ""


@dataclass(frozen=True)
class RemoveFinalizer:
    """Release the Instance: uninstall has finished."""

    step: str = ""


@dataclass(frozen=True)
class AddFinalizer:
    """Add `kplan.dev/cleanup` to a live Instance that lacks it."""

    step: str = ""


@dataclass(frozen=True)
class GenerateParameters:
    """Make a value for each of `wanted` (name, how) and add it to `secret` (created when absent); values
    already there are kept, never replaced. Nothing else is planned until the values are stored."""

    secret: dict[str, Any]
    wanted: tuple[tuple[str, Generated], ...]
    step: str = ""


Action = Apply | Delete | ClearPlanExecution | RemoveFinalizer | AddFinalizer | GenerateParameters


@dataclass(frozen=True)
class Failure:
    """An action of `step` that failed with `error` (a KplanError from the shell)."""

    step: str
    error: Exception


@dataclass(frozen=True)
class Event:
    """A Kubernetes Event to record; about the Instance when `ref` is None."""

    reason: str
    message: str
    type: Literal["Normal", "Warning"] = "Normal"
    ref: Ref | None = None


@dataclass(frozen=True)
class Settings:
    """Retry timing: the n-th retry waits min(backoff_base * 2**(n-1), backoff_max) seconds."""

    backoff_base: float = 1.0
    backoff_max: float = 60.0
    history_limit: int = 10


DEFAULT_SETTINGS = Settings()


@dataclass(frozen=True)
class Decision:
    """The outcome of one reconcile: actions to carry out, the status to write, Events, when to look again."""

    actions: tuple[Action, ...]
    status: dict[str, Any]
    events: tuple[Event, ...]
    requeue_after: float | None

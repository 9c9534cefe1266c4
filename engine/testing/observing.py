"""Checking a step's assert and errors objects against the cluster, re-checked on every watched change."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.kube import Caches, Clock, Kube, NotFound
from engine.testing.matching import Mismatch, differences
from engine.testing.model import Expectation

__all__ = ["Finding", "Observer", "caught_up"]

INSTANCE = ("kplan.dev/v1alpha1", "Instance")
Json = dict[str, Any]


@dataclass(frozen=True)
class Finding:
    """Why an expectation does not hold yet: a headline and the differing fields."""

    source: str
    headline: str
    mismatches: tuple[Mismatch, ...] = ()
    notes: tuple[str, ...] = ()  # what explains the differences, e.g. the message of the step a plan waits on

    def lines(self) -> list[str]:
        return [f"{self.source}: {self.headline}", *(f"  {m}" for m in self.mismatches),
                *(f"  {note}" for note in self.notes)]


class Observer:
    """Reads the cluster through watch caches (one per kind, all namespaces); `until` waits on their changes."""

    def __init__(self, kube: Kube, clock: Clock | None = None) -> None:
        self._kube = kube
        self._clock: Clock = clock or kube.clock
        self._caches = Caches(kube)
        self._changed = threading.Event()
        self._caches.add_handler(lambda _change, _obj: self._changed.set())

    def close(self) -> None:
        self._caches.stop()

    def until(self, check: Callable[[], list[Finding]], timeout: float) -> list[Finding]:
        """Run `check` now and after every change until it finds nothing or `timeout` s passed; its last findings."""
        deadline = self._clock.monotonic() + timeout
        while True:
            self._changed.clear()
            findings = check()
            remaining = deadline - self._clock.monotonic()
            if not findings or remaining <= 0:
                return findings
            self._clock.wait(self._changed, remaining)

    def check(self, namespace: str, asserts: Sequence[Expectation], errors: Sequence[Expectation],
              instances: Iterable[str] = ()) -> list[Finding]:
        """What keeps the step from passing: asserts not matched, errors present, Instances not caught up."""
        findings = [f for e in asserts if (f := self.asserted(e, namespace)) is not None]
        findings += [f for e in errors if (f := self.forbidden(e, namespace)) is not None]
        for name in instances:
            instance = self._caches.get(*INSTANCE, name, namespace)
            if instance is not None and not caught_up(instance):
                findings.append(Finding(f"Instance {name}", "the manager has not seen its latest change yet "
                                        "(status.observedGeneration < metadata.generation)"))
        return findings

    def asserted(self, expected: Expectation, namespace: str) -> Finding | None:
        """None when an object matches `expected`; else what is missing or differs (of the closest object)."""
        candidates, where = self._candidates(expected, namespace)
        if candidates is None:
            return Finding(expected.source, f"the cluster does not serve {expected.kind} ({expected.api_version})")
        ranked = sorted(((differences(expected.fields, obj), obj) for obj in candidates), key=lambda p: len(p[0]))
        if ranked and not ranked[0][0]:
            return None
        if not ranked:
            what = f"{expected.kind} {expected.name}" if expected.name else f"no {expected.kind}"
            return Finding(expected.source, f"{what} not found{where}" if expected.name else f"{what}{where}")
        mismatches, closest = ranked[0]
        notes = unfinished_steps(closest, mismatches) if (expected.api_version, expected.kind) == INSTANCE else ()
        if expected.name:
            return Finding(expected.source, f"{expected.kind} {expected.name}{where} differs", tuple(mismatches),
                           notes)
        return Finding(expected.source, f"no {expected.kind}{where} matches; the closest, "
                       f"{name_of(closest)}, differs", tuple(mismatches), notes)

    def forbidden(self, expected: Expectation, namespace: str) -> Finding | None:
        """None when no object matches `expected`; else the one that does."""
        candidates, where = self._candidates(expected, namespace)
        present = next((obj for obj in candidates or [] if not differences(expected.fields, obj)), None)
        if present is None:
            return None
        return Finding(expected.source, f"{expected.kind} {name_of(present)}{where} exists, and must not")

    def _candidates(self, expected: Expectation, namespace: str) -> tuple[list[Json] | None, str]:
        """The objects that could match (by name when it is given), or None when the kind is not served."""
        try:
            namespaced = self._kube.resource(expected.api_version, expected.kind).namespaced
        except NotFound:
            return None, ""
        where = expected.namespace or namespace if namespaced else None
        text = f" in namespace {where}" if where else ""
        if expected.name:
            found = self._caches.get(expected.api_version, expected.kind, expected.name, where)
            return ([found] if found is not None else []), text
        return self._caches.list(expected.api_version, expected.kind, where), text


def unfinished_steps(instance: Mapping[str, Any], mismatches: Sequence[Mismatch]) -> tuple[str, ...]:
    """For each plan a differing field is about (`status.plans.NAME...`, else the active plan), its steps that
    are not COMPLETE, with their messages: why the Instance is not where the test expects it."""
    status = instance.get("status") or {}
    records = status.get("plans") or {}
    paths = [m.path.split(".") for m in mismatches]
    named = [p[2] for p in paths if len(p) > 2 and p[:2] == ["status", "plans"]]
    if not named and any(p[0] == "status" for p in paths):
        named = [str((status.get("activePlan") or {}).get("name") or "")]
    steps = [(plan, phase, step) for plan in dict.fromkeys(named)
             for phase in (records.get(plan) or {}).get("phases") or [] for step in phase.get("steps") or []]
    return tuple(f"step {plan}/{phase.get('name')}/{step.get('name')} is {step['status']}{message_of(step)}"
                 for plan, phase, step in steps if step.get("status") not in (None, "COMPLETE", "PENDING"))


def message_of(step: Mapping[str, Any]) -> str:
    return f": {step['message']}" if step.get("message") else ""


def caught_up(instance: Mapping[str, Any]) -> bool:
    """True once the manager recorded the Instance's latest spec (observedGeneration reached generation)."""
    generation = (instance.get("metadata") or {}).get("generation")
    observed = (instance.get("status") or {}).get("observedGeneration")
    return not isinstance(generation, int) or (isinstance(observed, int) and observed >= generation)


def name_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "?")

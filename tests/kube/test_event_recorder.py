"""EventRecorder: Events written on a thread of their own, in the order recorded, a failure told and not raised, the
queue bounded, and `flush` the point after which every recorded Event is on the server."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from engine.devcluster.partition import Tap
from engine.errors import KplanError
from engine.kube import Fence, Kube, connect
from engine.kube.recorder import EventRecorder

from .helpers import WAIT, configmap, eventually


class Failures:
    def __init__(self) -> None:
        self.told: list[tuple[Mapping[str, Any], str, KplanError]] = []

    def __call__(self, about: Mapping[str, Any], reason: str, err: KplanError) -> None:
        self.told.append((about, reason, err))


def messages(kube: Kube, namespace: str) -> list[str]:
    """The Events' messages of `namespace`, in the order the server stored them."""
    found = kube.list("v1", "Event", namespace)
    return [e["message"] for e in sorted(found, key=lambda e: int(e["metadata"]["resourceVersion"]))]


@pytest.fixture
def tapped(kubeconfig: Path, namespace: str, tmp_path: Path) -> Iterator[tuple[Tap, Kube]]:
    """A Kube whose requests pass a tap that can hold them, as a partition would."""
    with Tap.for_kubeconfig(kubeconfig) as tap, \
            connect(str(tap.write_kubeconfig(tmp_path / "tapped")), namespace=namespace) as kube:
        kube.resource("v1", "Event")  # discovered before any cut
        yield tap, kube
        tap.heal()


def test_recorded_events_are_written_in_order_by_the_time_flush_returns(kube: Kube, namespace: str) -> None:
    involved = kube.create(configmap("settings", namespace))
    failures = Failures()
    recorder = EventRecorder(kube, failures)

    for step in range(5):
        recorder.record(involved, "StepDone", f"step {step} done")

    assert recorder.flush(WAIT)
    assert messages(kube, namespace) == [f"step {step} done" for step in range(5)]
    assert failures.told == []


def test_record_returns_while_the_write_is_held_and_flush_waits_for_it(tapped: tuple[Tap, Kube],
                                                                      kube: Kube, namespace: str) -> None:
    tap, through_tap = tapped
    involved = kube.create(configmap("settings", namespace))
    recorder = EventRecorder(through_tap, Failures())
    tap.cut()

    recorder.record(involved, "Applied", "held by the partition")  # returns: the write waits on its own thread

    assert not recorder.flush(0.2)  # the write is held, so not all is written yet
    assert messages(kube, namespace) == []
    tap.heal()
    assert recorder.flush(WAIT)
    assert messages(kube, namespace) == ["held by the partition"]


def test_a_failed_write_is_told_and_the_next_one_still_written(kube: Kube, namespace: str) -> None:
    involved = kube.create(configmap("settings", namespace))
    elsewhere = configmap("gone", "no-such-namespace-kplan")
    instance = {"apiVersion": "kplan.dev/v1alpha1", "kind": "Instance",
                "metadata": {"name": "web", "namespace": namespace}}
    failures = Failures()
    recorder = EventRecorder(kube, failures)

    recorder.record(elsewhere, "Applied", "about an object in no namespace", about=instance)
    recorder.record(involved, "Applied", "written all the same")

    assert recorder.flush(WAIT)
    [(about, reason, err)] = failures.told
    assert (about, reason) == (instance, "Applied") and "no-such-namespace-kplan" in str(err)
    assert messages(kube, namespace) == ["written all the same"]


def test_past_the_limit_an_event_is_dropped_not_queued(tapped: tuple[Tap, Kube], kube: Kube,
                                                       namespace: str) -> None:
    tap, through_tap = tapped
    involved = kube.create(configmap("settings", namespace))
    recorder = EventRecorder(through_tap, Failures(), limit=2)
    tap.cut()
    recorder.record(involved, "Applied", "first")
    eventually(lambda: recorder.waiting == 0)  # taken by the writer, whose request the partition holds

    for message in ("second", "third", "fourth"):
        recorder.record(involved, "Applied", message)

    assert recorder.waiting == 2
    tap.heal()
    assert recorder.flush(WAIT)
    assert messages(kube, namespace) == ["first", "second", "third"]


def test_an_event_refused_for_a_lost_lease_is_dropped_without_a_failure(kube: Kube, namespace: str) -> None:
    involved = kube.create(configmap("settings", namespace))
    failures = Failures()
    recorder = EventRecorder(kube.fenced(Fence(kube.clock)), failures)  # never granted: no request may go out

    recorder.record(involved, "Applied", "not sent")

    assert recorder.flush(WAIT)
    assert failures.told == [] and messages(kube, namespace) == []

"""The kubelet simulator's reading of container logs, as pure parts: which run a request is for (from the pod's
status, in the kubelet's words when there is none), the query's options, and what a log answers with them.

Dev backend only: pure parts of the simulated kubelet (tests/devcluster/test_logs.py runs pods/log on both)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from engine.simulators.kubelet.containerlogs import (
    ContainerLog,
    InvalidOptions,
    LogOptions,
    Unavailable,
    follow,
    render,
    rfc3339_nano,
    run_of,
)

pytestmark = pytest.mark.dev_only("see the module docstring")

SECOND = 10**9


def pod_with(**entry: Any) -> dict[str, Any]:
    return {"metadata": {"name": "web"}, "status": {"containerStatuses": [{"name": "main", **entry}]}}


def log_of(*lines: tuple[int, bytes], closed: bool = True) -> ContainerLog:
    log = ContainerLog()
    log._lines.extend(lines)  # lines with chosen times, as if written then
    if closed:
        log.close()
    return log


def test_times_are_go_rfc3339nano_in_utc() -> None:
    assert rfc3339_nano(1_767_225_600 * SECOND + 120_000_000) == "2026-01-01T00:00:00.12Z"
    assert rfc3339_nano(1_767_225_600 * SECOND) == "2026-01-01T00:00:00Z"
    assert rfc3339_nano(1_767_225_600 * SECOND + 1) == "2026-01-01T00:00:00.000000001Z"


@pytest.mark.parametrize(("entry", "previous", "answer"), [
    ({"state": {"running": {}}, "containerID": "c://2", "lastState": {"terminated": {"containerID": "c://1"}}},
     False, "c://2"),
    ({"state": {"running": {}}, "containerID": "c://2", "lastState": {"terminated": {"containerID": "c://1"}}},
     True, "c://1"),
    ({"state": {"waiting": {"reason": "CrashLoopBackOff"}}, "lastState": {"terminated": {"containerID": "c://1"}}},
     False, "c://1"),
    ({"state": {"terminated": {"containerID": ""}}, "lastState": {"terminated": {"containerID": "c://1"}}},
     False, "c://1"),
    ({"state": {"terminated": {"containerID": "c://3"}}, "lastState": {}}, False, "c://3"),
])
def test_the_run_asked_for_is_the_one_the_kubelet_chooses(entry: dict[str, Any], previous: bool,
                                                          answer: str) -> None:
    assert run_of(pod_with(**entry), "main", previous) == answer


@pytest.mark.parametrize(("pod", "container", "previous", "message"), [
    (pod_with(state={"waiting": {"reason": "ContainerCreating"}}), "main", False,
     'container "main" in pod "web" is waiting to start: ContainerCreating'),
    (pod_with(state={"waiting": {"reason": "ErrImagePull"}}), "main", False,
     'container "main" in pod "web" is waiting to start: image can\'t be pulled'),
    (pod_with(state={"running": {}}, containerID="c://1", lastState={}), "main", True,
     'previous terminated container "main" in pod "web" not found'),
    (pod_with(state={"terminated": {}}), "main", False, 'container "main" in pod "web" is terminated'),
    (pod_with(state={}), "main", False, 'container "main" in pod "web" is waiting to start - no logs yet'),
    ({"metadata": {"name": "web"}}, "main", False, 'container "main" in pod "web" is not available'),
])
def test_without_a_run_to_show_the_kubelet_says_why(pod: dict[str, Any], container: str, previous: bool,
                                                    message: str) -> None:
    with pytest.raises(Unavailable) as refused:
        run_of(pod, container, previous)
    assert str(refused.value) == message


def test_tail_lines_come_before_since_and_limit_bytes_counts_the_timestamps() -> None:
    log = log_of((1 * SECOND, b"one\n"), (2 * SECOND, b"two\n"), (3 * SECOND, b"three\n"))

    assert render(log, LogOptions.parse({"tailLines": "2"})) == b"two\nthree\n"
    assert render(log, LogOptions.parse({"tailLines": "0"})) == b""
    assert render(log, LogOptions.parse({"sinceTime": "1970-01-01T00:00:02Z"})) == b"two\nthree\n"
    assert render(log, LogOptions.parse({"tailLines": "3", "sinceTime": "1970-01-01T00:00:03Z"})) == b"three\n"
    assert render(log, LogOptions.parse({"sinceSeconds": "1"}, now=3 * SECOND)) == b"two\nthree\n"
    assert render(log, LogOptions.parse({"timestamps": "true", "limitBytes": "24"})) == b"1970-01-01T00:00:01Z one"


@pytest.mark.parametrize(("query", "error"), [
    ({"tailLines": "-1"}, InvalidOptions), ({"limitBytes": "0"}, InvalidOptions),
    ({"sinceSeconds": "0"}, InvalidOptions), ({"tailLines": "x"}, ValueError)])
def test_options_out_of_range_or_not_numbers_are_refused(query: dict[str, str], error: type[Exception]) -> None:
    with pytest.raises(error):
        LogOptions.parse(query)


def test_a_followed_log_streams_until_its_run_ends() -> None:
    log = log_of((1 * SECOND, b"first\n"), closed=False)
    stream = follow(log, LogOptions(follow=True), idle=0.05)

    assert next(stream) == b"first\n"
    assert next(stream) == b""  # idle: nothing printed yet
    writer = threading.Thread(target=lambda: (log.write("stdout", b"second\n"), log.close()))
    writer.start()
    rest = b"".join(stream)
    writer.join()
    assert rest == b"second\n"


def test_a_followed_log_stops_at_its_byte_limit() -> None:
    log = log_of((1 * SECOND, b"0123456789\n"), closed=False)
    assert list(follow(log, LogOptions(follow=True, limit_bytes=4), idle=0.05)) == [b"0123"]

"""GET pods/{name}/log: a container's output, filtered (tailLines, sinceSeconds, sinceTime, limitBytes) and
followed, as the kubelet serves it through the API server.

Where the output comes from is a `LogSource`. The simulated kubelet's containers write nothing, so the default
source has no lines: `kubectl logs` of a running simulated pod prints nothing, as it would for a container that
printed nothing. A runtime that really runs containers sets `Api.logs` to a source of its own.
"""

from __future__ import annotations

import datetime
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from engine.apiserver.objects import JsonDict
from engine.apiserver.requests import ApiRequest, ApiResponse
from engine.apiserver.routing import Target
from engine.apiserver.status import ApiError, ErrorType, FieldError, bad_request, invalid, not_found

if TYPE_CHECKING:
    from engine.apiserver.api import Api

TEXT = {"Content-Type": "text/plain"}
FOLLOW_WAIT = 1.0  # seconds a follow waits for output before it looks at the pod again
LOG_OPTIONS = ("tailLines", "limitBytes", "sinceSeconds")
FRACTION = re.compile(r"^([^.]*?)(?:\.(\d+))?([+-]\d\d:\d\d)?$")


@dataclass(frozen=True)
class LogLine:
    """One line a container wrote: when (RFC3339 with nanoseconds, UTC) and what, newline included."""

    time: str
    text: bytes


class LogSource(Protocol):
    """The output of the containers of pods, by namespace, pod name and uid, and container name."""

    def read(self, namespace: str, pod: str, uid: str, container: str, *, previous: bool) -> Sequence[LogLine]:
        """Every line the container has written so far (with `previous`: its last terminated instance)."""
        ...

    def wait(self, namespace: str, pod: str, uid: str, container: str, seen: int, timeout: float) -> None:
        """Return when the container has written more than `seen` lines, or after `timeout` seconds."""
        ...


class SilentContainers:
    """The simulated kubelet's containers: they run, and write nothing."""

    def __init__(self) -> None:
        self._never = threading.Event()

    def read(self, namespace: str, pod: str, uid: str, container: str, *, previous: bool) -> Sequence[LogLine]:
        return ()

    def wait(self, namespace: str, pod: str, uid: str, container: str, seen: int, timeout: float) -> None:
        self._never.wait(timeout)


@dataclass(frozen=True)
class LogOptions:
    container: str
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since: datetime.datetime | None = None


def get_log(api: Api, target: Target, req: ApiRequest) -> ApiResponse:
    pod = api.store.get(target.rt.key, target.namespace, target.name)
    if pod is None:
        raise not_found(target.rt, target.name)
    opts = log_options(target, req, pod)
    if not (pod.get("spec") or {}).get("nodeName"):
        return ApiResponse(200, b"", dict(TEXT))  # not scheduled: the real server answers an empty log
    check_started(pod, opts)
    meta = pod["metadata"]
    args = (target.namespace, target.name, str(meta.get("uid")), opts.container)
    lines = api.logs.read(*args, previous=opts.previous)
    if not opts.follow or opts.previous or container_ended(pod, opts.container):
        return ApiResponse(200, render(lines, opts), dict(TEXT))
    return ApiResponse(200, None, dict(TEXT), stream=follow(api, target, pod, opts, lines))


def log_options(target: Target, req: ApiRequest, pod: JsonDict) -> LogOptions:
    numbers: dict[str, int | None] = {}
    errors = []
    for key in LOG_OPTIONS:
        text = req.query.get(key)
        try:
            numbers[key] = int(text) if text else None
        except ValueError as e:
            raise bad_request(f"unable to parse {key}: {text!r}") from e
        value = numbers[key]
        if value is not None and (value < 0 or (value == 0 and key != "tailLines")):
            bound = "greater than or equal to 0" if key == "tailLines" else "greater than 0"
            errors.append(FieldError(ErrorType.INVALID, key, value, f"must be {bound}"))
    if errors:
        raise invalid(target.rt, target.name, errors, kind="PodLogOptions")
    since = None
    if numbers["sinceSeconds"]:
        since = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=int(numbers["sinceSeconds"] or 0))
    elif req.query.get("sinceTime"):
        since = parse_time(req.query["sinceTime"])
    return LogOptions(container=container_of(pod, req.query.get("container", "")), follow=req.flag("follow"),
                      previous=req.flag("previous"), timestamps=req.flag("timestamps"),
                      tail_lines=numbers["tailLines"], limit_bytes=numbers["limitBytes"], since=since)


def container_of(pod: JsonDict, asked: str) -> str:
    """The container a log request names; with none named, the pod's only container."""
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    names = [str(c.get("name")) for c in spec.get("containers") or []]
    init = [str(c.get("name")) for c in spec.get("initContainers") or []]
    ephemeral = [str(c.get("name")) for c in spec.get("ephemeralContainers") or []]
    if not asked:
        if len(names) == 1:
            return names[0]
        message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        if ephemeral:
            message += f" or one of the ephemeral containers: [{' '.join(ephemeral)}]"
        raise bad_request(message)
    if asked not in (*names, *init, *ephemeral):
        raise bad_request(f"container {asked} is not valid for pod {name}")
    return asked


def container_status(pod: JsonDict, container: str) -> JsonDict | None:
    status = pod.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for entry in status.get(key) or []:
            if isinstance(entry, dict) and entry.get("name") == container:
                return entry
    return None


def check_started(pod: JsonDict, opts: LogOptions) -> None:
    """The kubelet's refusals: a container that has not started, or no previous instance to show."""
    name = pod["metadata"]["name"]
    status = container_status(pod, opts.container)
    if opts.previous:
        if not (status or {}).get("lastState", {}).get("terminated"):
            raise bad_request(f'previous terminated container "{opts.container}" in pod "{name}" not found')
        return
    state = (status or {}).get("state") or {}
    if status is None or ("waiting" in state and not (status.get("lastState") or {}).get("terminated")):
        reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
        raise bad_request(f'container "{opts.container}" in pod "{name}" is waiting to start: {reason}')


def container_ended(pod: JsonDict, container: str) -> bool:
    state = (container_status(pod, container) or {}).get("state") or {}
    return "terminated" in state or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def selected(lines: Sequence[LogLine], opts: LogOptions) -> list[LogLine]:
    chosen = [line for line in lines if opts.since is None or parse_time(line.time) >= opts.since]
    if opts.tail_lines is not None:
        chosen = chosen[len(chosen) - opts.tail_lines:] if opts.tail_lines else []
    return chosen


def render(lines: Sequence[LogLine], opts: LogOptions) -> bytes:
    text = b"".join(_line(line, opts) for line in selected(lines, opts))
    return text[:opts.limit_bytes] if opts.limit_bytes is not None else text


def _line(line: LogLine, opts: LogOptions) -> bytes:
    return (line.time.encode() + b" " + line.text) if opts.timestamps else line.text


def follow(api: Api, target: Target, pod: JsonDict, opts: LogOptions, first: Sequence[LogLine]) -> Iterator[bytes]:
    """What is there (after tail/since), then each new line, until the container ends or the pod goes."""
    uid = str(pod["metadata"].get("uid"))
    args = (target.namespace, target.name, uid, opts.container)
    budget = opts.limit_bytes
    seen = len(first)
    chunk = render(first, opts)
    while True:
        if chunk:
            if budget is not None:
                chunk, budget = chunk[:budget], budget - len(chunk[:budget])
            yield chunk
            if budget == 0:
                return
        current = api.store.get(target.rt.key, target.namespace, target.name)
        ended = (current is None or str(current["metadata"].get("uid")) != uid
                 or container_ended(current, opts.container))
        if not ended:
            api.logs.wait(*args, seen, FOLLOW_WAIT)
        lines = api.logs.read(*args, previous=False)
        chunk = b"".join(_line(line, opts) for line in lines[seen:] if opts.since is None
                         or parse_time(line.time) >= opts.since)
        seen = len(lines)
        if ended:
            if chunk:
                yield chunk[:budget] if budget is not None else chunk
            return
        if not chunk:
            yield b""  # idle: lets the server notice a client that hung up


def parse_time(text: Any) -> datetime.datetime:
    """RFC 3339 with up to nanoseconds (Python keeps microseconds), UTC when no offset is given."""
    m = FRACTION.match(str(text).replace("Z", "+00:00"))
    try:
        if m is None:
            raise ValueError(text)
        moment = datetime.datetime.fromisoformat(m[1] + (f".{m[2][:6].ljust(6, '0')}" if m[2] else "") + m[3])
    except ValueError as e:
        raise ApiError(400, "BadRequest", f'parsing time "{text}" as RFC3339 failed') from e
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)

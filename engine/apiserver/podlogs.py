"""`GET /api/v1/namespaces/NS/pods/NAME/log`: what a pod's container printed, from the log source plugged in.

The dev cluster plugs in the process runtime's log store (`PodLogs`); without one, or for a container the
source knows nothing of (a simulated pod), the log is empty, as for a container that printed nothing.
Query options as kubectl sends them: container, follow, previous, timestamps, tailLines, limitBytes,
sinceSeconds, sinceTime.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from engine.apiserver.requests import ApiRequest, ApiResponse
from engine.apiserver.status import bad_request, not_found

if TYPE_CHECKING:
    from engine.apiserver.api import Api

TEXT = {"Content-Type": "text/plain"}
IDLE_SECONDS = 0.5  # how often a follow stream checks whether its client is still there
Line = tuple[str, bytes]  # RFC 3339 time with nanoseconds, the line's bytes (with its newline)


class ContainerLog(Protocol):
    """One run of one container's output, growing until the run ends."""

    def lines(self, start: int = 0) -> tuple[Sequence[Line], bool]:
        """Lines from index `start` on, and whether the run has ended (no line will follow)."""
        ...

    def wait(self, start: int, timeout: float) -> None:
        """Return once there are more than `start` lines, the run ended, or `timeout` passed."""
        ...


class PodLogs(Protocol):
    """Where the containers' output is kept, by pod uid and container name."""

    def get(self, uid: str, container: str, previous: bool) -> ContainerLog | None: ...


def is_log_path(parts: Sequence[str]) -> bool:
    return len(parts) == 7 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "pods" and parts[6] == "log"


def serve(api: Api, namespace: str, name: str, req: ApiRequest) -> ApiResponse:
    pod = api.store.get("/pods", namespace, name)
    if pod is None:
        rt = api.registry.lookup("", "v1", "pods")
        assert rt is not None
        raise not_found(rt, name)
    container = container_of(pod, req.query.get("container", ""))
    source: PodLogs | None = api.pod_logs
    log = source.get(str(pod["metadata"].get("uid") or ""), container, req.flag("previous")) if source else None
    if log is None:
        if source is not None:
            refuse_missing(pod, container, req.flag("previous"))
        return ApiResponse(200, b"", dict(TEXT))
    options = Options.of(req)
    if req.flag("follow"):
        return ApiResponse(200, None, dict(TEXT), stream=follow(log, options))
    lines, _ = log.lines()
    return ApiResponse(200, b"".join(options.render(options.select(lines))), dict(TEXT))


def container_of(pod: dict[str, Any], asked: str) -> str:
    """The container a request names, or the pod's only one; 400 in the API server's words otherwise."""
    spec, name = pod.get("spec") or {}, pod["metadata"]["name"]
    names = [str(c.get("name")) for c in spec.get("containers") or []]
    inits = [str(c.get("name")) for c in spec.get("initContainers") or []]
    if not asked:
        if len(names) == 1:
            return names[0]
        also = f" or one of the init containers: [{' '.join(inits)}]" if inits else ""
        raise bad_request(f"a container name must be specified for pod {name}, choose one of: "
                          f"[{' '.join(names)}]{also}")
    if asked not in names + inits:
        raise bad_request(f"container {asked} is not valid for pod {name}")
    return asked


def refuse_missing(pod: dict[str, Any], container: str, previous: bool) -> None:
    """400 in the API server's words for a container without the run asked for (not started, no previous run)."""
    name = pod["metadata"]["name"]
    if previous:
        raise bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
    status = pod.get("status") or {}
    for entry in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
        waiting = (entry.get("state") or {}).get("waiting")
        if entry.get("name") == container and waiting:
            raise bad_request(f'container "{container}" in pod "{name}" is waiting to start: '
                              f'{waiting.get("reason") or "ContainerCreating"}')


class Options:
    """What part of a log to answer with, and how."""

    def __init__(self, timestamps: bool, tail: int | None, limit: int | None, since: str) -> None:
        self.timestamps, self.tail, self.limit, self.since = timestamps, tail, limit, since

    @classmethod
    def of(cls, req: ApiRequest) -> Options:
        since = req.query.get("sinceTime", "")
        if req.query.get("sinceSeconds"):
            moment = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=number(req, "sinceSeconds"))
            since = moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        tail = number(req, "tailLines") if req.query.get("tailLines") else None
        limit = number(req, "limitBytes") if req.query.get("limitBytes") else None
        return cls(req.flag("timestamps"), tail, limit, since.replace("Z", "").ljust(29, "0"))

    def select(self, lines: Sequence[Line]) -> Sequence[Line]:
        chosen = [line for line in lines if not self.since or line[0].replace("Z", "").ljust(29, "0") >= self.since]
        if self.tail is not None:
            chosen = chosen[len(chosen) - self.tail:] if self.tail else []
        return chosen

    def render(self, lines: Sequence[Line]) -> list[bytes]:
        out = [(f"{t} ".encode() + text) if self.timestamps else text for t, text in lines]
        if self.limit is None:
            return out
        kept, room = [], self.limit
        for chunk in out:
            if room <= 0:
                break
            kept.append(chunk[:room])
            room -= len(chunk)
        return kept


def number(req: ApiRequest, key: str) -> int:
    text = req.query.get(key, "")
    if not text.lstrip("-").isdigit() or int(text) < 0:
        raise bad_request(f"{key}: Invalid value: {text!r}: must be a non-negative integer")
    return int(text)


def follow(log: ContainerLog, options: Options) -> Iterator[bytes]:
    """The selected lines so far, then each new line as it is written, until the run ends (or the client leaves)."""
    lines, ended = log.lines()
    sent = len(lines)
    budget = options.limit
    for chunk in options.render(options.select(lines)):
        yield chunk
        if budget is not None:
            budget -= len(chunk)
    while not ended and (budget is None or budget > 0):
        log.wait(sent, IDLE_SECONDS)
        fresh, ended = log.lines(sent)
        sent += len(fresh)
        tail = Options(options.timestamps, None, budget, "")
        chunks = tail.render(fresh)
        for chunk in chunks:
            yield chunk
            if budget is not None:
                budget -= len(chunk)
        if not chunks:
            yield b""  # idle: lets the server notice a client that hung up

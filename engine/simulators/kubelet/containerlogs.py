"""What containers printed, kept as the kubelet keeps it, and read as its `containerLogs` API reads it.

One `ContainerLog` per container run, found by the run's container ID (what a pod's containerStatuses name), in
a `LogStore`. Both runtimes write here: the simulated kubelet opens a log when a simulated container starts
(with what the `devcluster.kplan.dev/output-<container>` annotation says it prints) and closes it when the
container ends; the process runtime pumps its processes' stdout and stderr into theirs. Each log keeps at most
`limit` bytes: what a container prints beyond that is dropped, and one line says so.

`LogOptions.parse` reads the kubelet's query (follow, tailLines, sinceSeconds, sinceTime, timestamps,
limitBytes); `render` and `follow` answer with what the kubelet's runtime writes: the last `tailLines` lines,
those since the time asked, each with its RFC 3339 time when asked, cut at `limitBytes`.
"""

from __future__ import annotations

import datetime
import hashlib
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Line = tuple[int, bytes]  # nanoseconds since the epoch, the line's bytes (with its newline)
PARTIAL = 16 * 1024  # a line longer than this is recorded in pieces, as the kubelet splits long lines
DEFAULT_LIMIT = 10 * 2**20  # bytes kept of one run's output


class InvalidOptions(ValueError):
    """Options that decode but are out of range (the kubelet answers 422)."""


class Unavailable(Exception):
    """No run of the container to show (not started yet, no previous run): the kubelet's words, answered as 400."""


def container_id(pod_uid: str, container: str, attempt: int | None = None) -> str:
    """The ID of one run of a container (its `attempt`-th start; None: a simulated container's only run)."""
    key = f"{pod_uid}/{container}" if attempt is None else f"{pod_uid}/{attempt}/{container}"
    return "containerd://" + hashlib.sha256(key.encode()).hexdigest()


def rfc3339_nano(nanos: int) -> str:
    """Go's time.RFC3339Nano in UTC: trailing zeros of the fraction dropped (and the dot with them)."""
    seconds, fraction = divmod(nanos, 10**9)
    stamp = datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    digits = f"{fraction:09d}".rstrip("0")
    return f"{stamp}.{digits}Z" if digits else f"{stamp}Z"


class ContainerLog:
    """One run of one container: lines as they are printed, until `close`."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self._limit = limit
        self._size = 0
        self._lines: list[Line] = []
        self._pending: dict[str, bytes] = {}  # per stream, the start of a line not yet ended
        self._closed = False
        self._truncated = False
        self._changed = threading.Condition()

    def write(self, stream: str, data: bytes) -> None:
        """Record bytes a stream printed; complete lines become visible at once."""
        with self._changed:
            buffered = self._pending.get(stream, b"") + data
            *complete, rest = buffered.split(b"\n")
            for line in complete:
                self._add(line + b"\n")
            while len(rest) > PARTIAL:
                self._add(rest[:PARTIAL])
                rest = rest[PARTIAL:]
            self._pending[stream] = rest
            self._changed.notify_all()

    def _add(self, text: bytes) -> None:
        if self._truncated:
            return
        if self._size + len(text) > self._limit:
            self._truncated = True
            text = f"[kplan process runtime: output beyond {self._limit} bytes was dropped]\n".encode()
        self._size += len(text)
        self._lines.append((time.time_ns(), text))

    def close(self) -> None:
        """The run ended: what is left unterminated becomes a last line, and followers stop."""
        with self._changed:
            for rest in self._pending.values():
                if rest:
                    self._add(rest)
            self._pending.clear()
            self._closed = True
            self._changed.notify_all()

    def lines(self, start: int = 0) -> tuple[Sequence[Line], bool]:
        """Lines from index `start` on, and whether the run has ended (no line will follow)."""
        with self._changed:
            return list(self._lines[start:]), self._closed

    def text(self) -> str:
        """Everything recorded, as text."""
        lines, _ = self.lines()
        return b"".join(t for _, t in lines).decode("utf-8", errors="replace")

    def wait(self, start: int, timeout: float) -> None:
        """Return once there are more than `start` lines, the run ended, or `timeout` passed."""
        with self._changed:
            self._changed.wait_for(lambda: self._closed or len(self._lines) > start, timeout)


class LogStore:
    """The logs of every container run on this kubelet, by container ID, dropped with their pod."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._logs: dict[str, tuple[str, ContainerLog]] = {}  # container ID -> pod uid, log

    def open(self, pod_uid: str, cid: str) -> ContainerLog:
        """The log of a run that starts now (an existing one of the same ID is kept)."""
        with self._lock:
            known = self._logs.get(cid)
            if known is None:
                known = self._logs[cid] = (pod_uid, ContainerLog(self.limit))
            return known[1]

    def get(self, cid: str) -> ContainerLog | None:
        with self._lock:
            known = self._logs.get(cid)
        return known[1] if known else None

    def forget(self, pod_uid: str) -> None:
        """The pod is gone: close and drop the logs of its runs."""
        with self._lock:
            gone = [cid for cid, (uid, _) in self._logs.items() if uid == pod_uid]
            logs = [self._logs.pop(cid)[1] for cid in gone]
        for log in logs:
            log.close()


@dataclass(frozen=True)
class LogOptions:
    """What part of a log to answer with, and how (the kubelet's PodLogOptions)."""

    follow: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since: int | None = None  # nanoseconds since the epoch

    @classmethod
    def parse(cls, query: Mapping[str, str], now: int | None = None) -> LogOptions:
        """The options of a containerLogs query; ValueError when one does not decode, InvalidOptions when one is
        out of range."""
        numbers = {key: _integer(query, key) for key in ("tailLines", "limitBytes", "sinceSeconds")}
        tail, limit, seconds = numbers["tailLines"], numbers["limitBytes"], numbers["sinceSeconds"]
        below = [value < least for value, least in ((tail, 0), (limit, 1), (seconds, 1)) if value is not None]
        if any(below):
            raise InvalidOptions("Invalid request.")
        since = None
        if seconds is not None:
            since = (time.time_ns() if now is None else now) - seconds * 10**9
        elif query.get("sinceTime"):
            since = parse_time(query["sinceTime"])
        return cls(_flag(query, "follow"), _flag(query, "timestamps"), tail, limit, since)

    def select(self, lines: Sequence[Line]) -> list[Line]:
        """The last `tail_lines` lines, of those the ones written since `since`."""
        chosen = list(lines)
        if self.tail_lines is not None:
            chosen = chosen[len(chosen) - self.tail_lines:] if self.tail_lines else []
        return [line for line in chosen if self.since is None or line[0] >= self.since]

    def format(self, line: Line) -> bytes:
        return f"{rfc3339_nano(line[0])} ".encode() + line[1] if self.timestamps else line[1]


def _integer(query: Mapping[str, str], key: str) -> int | None:
    text = query.get(key)
    if text is None or text == "":
        return None
    return int(text)  # ValueError: "Unable to decode query."


def _flag(query: Mapping[str, str], key: str) -> bool:
    return query.get(key, "").lower() in ("true", "1")


def parse_time(text: str) -> int:
    """RFC 3339 (as the API server passes sinceTime on) in nanoseconds since the epoch."""
    moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp()) * 10**9 + moment.microsecond * 1000


def run_of(pod: Mapping[str, Any], container: str, previous: bool) -> str:
    """The container ID whose log a request is for, from the pod's status, as the kubelet chooses it
    (validateContainerLogStatus); Unavailable in its words when there is none."""
    name, status = pod["metadata"]["name"], pod.get("status") or {}
    entries = [*(status.get("containerStatuses") or []), *(status.get("initContainerStatuses") or []),
               *(status.get("ephemeralContainerStatuses") or [])]
    entry = next((e for e in entries if isinstance(e, dict) and e.get("name") == container), None)
    if entry is None:
        raise Unavailable(f'container "{container}" in pod "{name}" is not available')
    last = (entry.get("lastState") or {}).get("terminated")
    last_id = str((last or {}).get("containerID") or "")
    state = entry.get("state") or {}
    if previous:
        if not last_id:
            raise Unavailable(f'previous terminated container "{container}" in pod "{name}" not found')
        return last_id
    if "running" in state:
        return str(entry.get("containerID") or "")
    if "terminated" in state or last is not None:
        cid = str((state.get("terminated") or {}).get("containerID") or "") if "terminated" in state else ""
        if not (cid or last_id):
            raise Unavailable(f'container "{container}" in pod "{name}" is terminated')
        return cid or last_id
    if "waiting" in state:
        reason = str((state.get("waiting") or {}).get("reason") or "")
        why = {"ErrImagePull": "image can't be pulled",
               "ImagePullBackOff": "trying and failing to pull image"}.get(reason, reason)
        raise Unavailable(f'container "{container}" in pod "{name}" is waiting to start: {why}')
    raise Unavailable(f'container "{container}" in pod "{name}" is waiting to start - no logs yet')


def render(log: ContainerLog, options: LogOptions) -> bytes:
    """The log as it is now, selected and formatted."""
    lines, _ = log.lines()
    text = b"".join(options.format(line) for line in options.select(lines))
    return text if options.limit_bytes is None else text[:options.limit_bytes]


def follow(log: ContainerLog, options: LogOptions, idle: float) -> Iterator[bytes]:
    """The selected lines so far, then each new line as it is written, until the run ends or `limit_bytes` is
    reached; an empty chunk every `idle` seconds without output (the server's chance to notice a client gone)."""
    lines, ended = log.lines()
    seen, budget = len(lines), options.limit_bytes
    fresh: Sequence[Line] = options.select(lines)
    while True:
        chunk = b"".join(options.format(line) for line in fresh if options.since is None or line[0] >= options.since)
        if budget is not None:
            chunk = chunk[:budget]
            budget -= len(chunk)
        yield chunk
        if ended or budget == 0:
            return
        log.wait(seen, idle)
        fresh, ended = log.lines(seen)
        seen += len(fresh)

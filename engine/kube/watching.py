"""Watch: the changes to one kind as (type, object), resumed from the last resourceVersion after each stream end."""

from __future__ import annotations

import math
import threading
from collections.abc import Generator, Iterator, Mapping
from typing import Any

from engine.kube.clock import Clock
from engine.kube.discovery import Resource
from engine.kube.errors import status_error
from engine.kube.transport import Stream, Transport

__all__ = ["INITIAL_EVENTS_END", "SERVER_TIMEOUT", "Watch"]

SERVER_TIMEOUT = 300  # seconds a single stream is asked to last when the watch itself has no deadline
READ_GRACE = 15.0  # seconds past the server's timeout after which a silent stream counts as cut
QUIET_RECONNECT_DELAY = 1.0  # pause before reconnecting after a stream that ended at once with nothing
INITIAL_EVENTS_END = "k8s.io/initial-events-end"  # the annotation of the bookmark that ends the initial events

Event = tuple[str, dict[str, Any]]


class Watch(Iterator[Event]):
    """ADDED, MODIFIED and DELETED events; bookmarks only advance `resource_version`.

    A stream the server ends or that is cut is reopened from `resource_version`, so iteration ends only at
    the deadline or after `stop()`. Raises Expired (410) when that version is gone, and the kplan error
    when the server cannot be reached. `stop()` may be called from any thread.

    With `initial_events`, the watch starts with an ADDED event for each object there is now (a "watch list",
    `sendInitialEvents`), and the bookmark that ends them is yielded as ("BOOKMARK", object); iteration ends
    when the first stream ends before it (`resource_version` means nothing until then).
    """

    def __init__(
        self,
        transport: Transport,
        resource: Resource,
        namespace: str | None,
        query: Mapping[str, str],
        *,
        resource_version: str | None,
        timeout: float | None,
        clock: Clock,
        initial_events: bool = False,
    ) -> None:
        self.resource_version = resource_version or None
        self.initial_events = initial_events  # still to come: cleared by the bookmark that ends them
        self._transport, self._resource, self._namespace = transport, resource, namespace
        self._query = dict(query)
        self._clock = clock
        self._deadline = clock.monotonic() + timeout if timeout is not None else None
        self._stopped = threading.Event()
        self._stream: Stream | None = None
        self._events = self._run()

    def __next__(self) -> Event:
        return next(self._events)

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stop(self) -> None:
        """End the watch; a thread blocked reading it wakes up and the iteration ends."""
        self._stopped.set()
        stream = self._stream
        if stream is not None:
            stream.interrupt()

    def close(self) -> None:
        """Stop and release the connection (from the iterating thread)."""
        self.stop()
        self._events.close()

    def _run(self) -> Generator[Event, None, None]:
        while not self._stopped.is_set():
            if self._past_deadline():
                return
            remaining = self._remaining()
            started = self._clock.monotonic()
            received = yield from self._one_stream(remaining)
            if self.initial_events:
                return
            if not received and self._clock.monotonic() - started < QUIET_RECONNECT_DELAY:
                self._clock.wait(self._stopped, min(QUIET_RECONNECT_DELAY, self._remaining() or QUIET_RECONNECT_DELAY))

    def _one_stream(self, remaining: float | None) -> Generator[Event, None, bool]:
        """Events of one HTTP stream; True when anything arrived."""
        seconds = SERVER_TIMEOUT if remaining is None else max(1, math.ceil(remaining))
        stream = self._transport.open_stream(
            self._resource.path(self._namespace), action="watch", what=self._what(),
            query=self._stream_query(seconds), read_timeout=seconds + READ_GRACE if remaining is None else remaining,
        )
        self._stream = stream  # stop() interrupts it from now on; a stop() just before is seen below
        received = False
        try:
            if self._stopped.is_set():
                return received
            for event in stream.lines():
                if self._stopped.is_set():
                    break
                received = True
                change = self._accept(event)
                if change is not None:
                    yield change
                if self._past_deadline():
                    break
        finally:
            self._stream = None
            stream.close()
        return received

    def _accept(self, event: Mapping[str, Any]) -> Event | None:
        """The change an event carries (None for a bookmark); raises for an ERROR event."""
        kind, obj = str(event.get("type")), dict(event.get("object") or {})
        if kind == "ERROR":
            raise status_error(obj, "watch", self._what())
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if version:
            self.resource_version = str(version)
        if kind == "BOOKMARK":
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            if not (self.initial_events and annotations.get(INITIAL_EVENTS_END) == "true"):
                return None
            self.initial_events = False
        return kind, obj

    def _stream_query(self, seconds: int) -> dict[str, str]:
        query = {**self._query, "watch": "true", "allowWatchBookmarks": "true", "timeoutSeconds": str(seconds)}
        if self.initial_events:
            query.update(sendInitialEvents="true", resourceVersionMatch="NotOlderThan")
        if self.resource_version:
            query["resourceVersion"] = self.resource_version
        return query

    def _past_deadline(self) -> bool:
        remaining = self._remaining()
        return remaining is not None and remaining <= 0

    def _remaining(self) -> float | None:
        return None if self._deadline is None else self._deadline - self._clock.monotonic()

    def _what(self) -> str:
        where = f"in namespace {self._namespace}" if self._namespace else "in all namespaces"
        return f"{self._resource.kind} objects {where}"

"""EventRecorder: core/v1 Events written off the caller's path, oldest first, as client-go's event broadcaster does.

A pass records its Events and goes on to its next request: one thread of the recorder writes them (`Kube.event`:
a create, or a read and a patch for a repeat), so their round trips are not on the path of the plan. `flush` waits
until everything recorded so far is written: a command calls it before it exits, a manager before it hands back
its Lease. A write that fails goes to `failed` (a log line), never to the caller, and the next one goes on; one
refused for a lost Lease (a fenced Kube) is dropped quietly, as the pass that recorded it was stopped. At most
`LIMIT` Events wait: past that one is dropped with a log line, as the broadcaster drops them when its queue is
full, so a server that does not answer cannot grow the process's memory.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import KplanError
from engine.kube.fence import LeadershipLost

if TYPE_CHECKING:
    from engine.kube.client import Kube

__all__ = ["FLUSH_WAIT", "LIMIT", "EventRecorder", "Failed"]

log = logging.getLogger(__name__)

LIMIT = 1000  # Events waiting to be written, as client-go's broadcaster queues
FLUSH_WAIT = 5.0  # seconds a command or a stopping manager waits for its Events to be written
Failed = Callable[[Mapping[str, Any], str, KplanError], None]  # (what the caller named, reason, the error)


@dataclass(frozen=True)
class _Event:
    involved: Mapping[str, Any]
    reason: str
    message: str
    type: str
    about: Mapping[str, Any]  # what `failed` is told of: the Instance whose pass recorded it


class EventRecorder:
    """Writes the Events recorded through it on a thread of its own, in the order recorded."""

    def __init__(self, kube: Kube, failed: Failed, *, limit: int = LIMIT) -> None:
        self._kube, self._failed, self._limit = kube, failed, limit
        self._waiting: deque[_Event] = deque()
        self._writing = False
        self._changed = threading.Condition()
        self._writer: threading.Thread | None = None

    def record(self, involved: Mapping[str, Any], reason: str, message: str, *, type: str = "Normal",
               about: Mapping[str, Any] | None = None) -> None:
        """Queue an Event about `involved` (see `Kube.event`); `about` is what `failed` is told of (`involved` if
        None)."""
        event = _Event(involved, reason, message, type, involved if about is None else about)
        with self._changed:
            if len(self._waiting) >= self._limit:
                log.warning("event dropped: too many waiting to be written", extra={"reason": reason,
                                                                                    "waiting": self._limit})
                return
            self._waiting.append(event)
            if self._writer is None:
                self._writer = threading.Thread(target=self._write, name="event-recorder", daemon=True)
                self._writer.start()
            self._changed.notify_all()

    @property
    def waiting(self) -> int:
        """Events recorded and not taken by the writer yet."""
        with self._changed:
            return len(self._waiting)

    def flush(self, timeout: float) -> bool:
        """Wait until every Event recorded so far is written (or given up); False when `timeout` seconds passed
        first."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._waiting and not self._writing, timeout)

    def _write(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: bool(self._waiting))
                event, self._writing = self._waiting.popleft(), True
            try:
                self._kube.event(event.involved, event.reason, event.message, type=event.type)
            except KplanError as err:
                self._call_failed(event, err)
            except LeadershipLost as lost:
                log.debug("event not recorded", extra={"reason": event.reason, "error": str(lost)})
            except Exception:  # never the end of the writer: the next Event goes on
                log.exception("event not recorded", extra={"reason": event.reason})
            finally:
                with self._changed:
                    self._writing = False
                    self._changed.notify_all()

    def _call_failed(self, event: _Event, err: KplanError) -> None:
        try:
            self._failed(event.about, event.reason, err)
        except (KplanError, LeadershipLost) as also:  # its own reads failed too: the line it meant to log
            log.warning("event not recorded", extra={"reason": event.reason, "error": str(err), "also": str(also)})

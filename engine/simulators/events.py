"""Best-effort core/v1 Events, as controllers record them for `kubectl describe` to show."""

from __future__ import annotations

import logging
import time

from engine.simulators.api import EVENT, Api, ApiFailure, JsonDict
from engine.simulators.conditions import timestamp

log = logging.getLogger(__name__)

NORMAL, WARNING = "Normal", "Warning"


def record(api: Api, involved: JsonDict, type_: str, reason: str, message: str, component: str) -> None:
    """Create one Event about `involved`; a failure is logged, never raised (events are best effort). As the real
    components' event recorders do, the write is sent after the work at hand (`Api.soon`): it is not on the path
    of the status writes that follow."""
    meta = involved.get("metadata") or {}
    namespace = str(meta.get("namespace") or "default")
    now = timestamp()
    event: JsonDict = {
        "metadata": {"name": f"{meta.get('name')}.{time.time_ns():x}", "namespace": namespace},
        "involvedObject": {"apiVersion": involved.get("apiVersion"), "kind": involved.get("kind"),
                           "namespace": meta.get("namespace"), "name": meta.get("name"), "uid": meta.get("uid"),
                           "resourceVersion": meta.get("resourceVersion")},
        "reason": reason, "message": message, "type": type_, "count": 1,
        "source": {"component": component}, "firstTimestamp": now, "lastTimestamp": now,
        "reportingComponent": component, "reportingInstance": "",
    }
    event["involvedObject"] = {k: v for k, v in event["involvedObject"].items() if v}

    def send() -> None:
        try:
            api.create(EVENT, event, component)
        except ApiFailure as e:
            log.debug("event not recorded", extra={"reason": reason, "error": str(e)})

    api.soon(send)

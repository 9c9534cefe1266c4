"""WATCH streams (§3): start point, history replay, 410 Expired, selectors, bookmarks, watch-list, faults."""

from __future__ import annotations

import math
import queue
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.apiserver import tables
from engine.apiserver.faults import WatchCut
from engine.apiserver.objects import JsonDict, json_bytes, namespace_of
from engine.apiserver.reads import served_form
from engine.apiserver.requests import ApiRequest, ApiResponse
from engine.apiserver.resources import ResourceType
from engine.apiserver.routing import Target
from engine.apiserver.selectors import FieldSelector, FieldTerm, matcher, parse_both
from engine.apiserver.status import ApiError, ErrorType, FieldError, bad_request, expired, internal, invalid
from engine.apiserver.store import ADDED, DELETED, MODIFIED, Event, Subscription, TooOld

if TYPE_CHECKING:
    from engine.apiserver.api import Api

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
IDLE_SECONDS = 1.0
BOOKMARK_BEFORE_DEADLINE = 2.0
LIST_OPTIONS = ResourceType("meta.k8s.io", "v1", "listoptions", "ListOptions", False)


class StreamCut(Exception):
    """A fault cut the watch: the server drops the connection without ending the stream."""


@dataclass(frozen=True)
class WatchPlan:
    """Everything a stream needs once it has been set up under the store lock."""

    rt: ResourceType
    sub: Subscription
    first: list[tuple[str, JsonDict]]  # initial ADDED events and replayed history, already filtered
    snapshot_rv: int  # where the watch starts: the requested version, else the store's revision
    initial_end_bookmark: bool  # sendInitialEvents, which a watch from "now" (no or "0" version) defaults to
    bookmarks: bool
    accepts: Callable[[JsonDict], bool]
    deadline: float
    table: bool
    req: ApiRequest


def watch(api: Api, target: Target, req: ApiRequest) -> ApiResponse:
    rt = target.rt
    labels, fields = parse_both(req.query, rt)
    if target.name:
        fields = FieldSelector((*fields.terms, FieldTerm("metadata.name", target.name, True)))
    select = matcher(labels, fields)
    namespace = target.namespace if rt.namespaced else ""

    def accepts(obj: JsonDict) -> bool:
        return (not namespace or namespace_of(obj) == namespace) and select(obj)

    send_initial = _send_initial_events(req)
    rv = _parse_rv(req.query.get("resourceVersion", ""))
    if api.faults.take_expiry():
        return _error_stream(expired(f"too old resource version: {rv or 0} ({api.store.revision})"))
    timeout = _timeout(req, api)
    with api.store.lock:
        sub = api.store.subscribe(rt.key)
        snapshot = api.store.revision
        try:
            first = _starting_events(api, rt, rv, send_initial, accepts)
        except TooOld as e:
            sub.close()
            return _error_stream(expired(str(e)))
    legacy_start = rv is None and send_initial is None and not req.query.get("resourceVersionMatch")
    plan = WatchPlan(rt, sub, first, snapshot if rv is None else rv, bool(send_initial) or legacy_start,
                     req.flag("allowWatchBookmarks"), accepts, time.monotonic() + timeout, req.wants_table(), req)
    return ApiResponse(200, stream=stream(api, plan))


def _send_initial_events(req: ApiRequest) -> bool | None:
    value = req.query.get("sendInitialEvents")
    if value is None:
        return None
    wanted = value in ("true", "True", "1")
    if wanted:
        errors = []
        if req.query.get("resourceVersionMatch") != "NotOlderThan":
            errors.append(FieldError(ErrorType.FORBIDDEN, "resourceVersionMatch", detail="sendInitialEvents requires "
                                     "setting resourceVersionMatch to NotOlderThan"))
        if errors:
            raise invalid(LIST_OPTIONS, "", errors)
    return wanted


def _parse_rv(text: str) -> int | None:
    if text in ("", "0"):
        return None
    try:
        return int(text)
    except ValueError as e:
        raise internal(f'resourceVersion: Invalid value: "{text}": strconv.ParseUint: parsing "{text}": '
                             "invalid syntax") from e


def _timeout(req: ApiRequest, api: Api) -> float:
    text = req.query.get("timeoutSeconds")
    if not text:
        return api.max_watch_seconds
    try:
        return min(float(text), api.max_watch_seconds)
    except ValueError as e:
        raise bad_request(f"invalid timeoutSeconds: {text!r}") from e


def _starting_events(api: Api, rt: ResourceType, rv: int | None, send_initial: bool | None,
                     accepts: Callable[[JsonDict], bool]) -> list[tuple[str, JsonDict]]:
    """Synthetic ADDED events for a start from "now" (or with sendInitialEvents), else the retained history."""
    if send_initial or (rv is None and send_initial is None):
        return [(ADDED, obj) for obj in api.store.items(rt.key) if accepts(obj)]
    if rv is None:
        return []
    found = []
    for event in api.store.history_since(rt.key, rv):
        out = transform(event, accepts)
        if out is not None:
            found.append(out)
    return found


def transform(event: Event, accepts: Callable[[JsonDict], bool]) -> tuple[str, JsonDict] | None:
    """What a selective watcher sees: changes into the selection are ADDED, out of it DELETED (old state)."""
    now_in = accepts(event.obj)
    if event.type == ADDED:
        return (ADDED, event.obj) if now_in else None
    if event.type == DELETED:
        return (DELETED, event.obj) if now_in or (event.old is not None and accepts(event.old)) else None
    was_in = event.old is not None and accepts(event.old)
    if now_in:
        return (MODIFIED if was_in else ADDED, event.obj)
    if was_in and event.old is not None:
        old = {**event.old, "metadata": {**event.old.get("metadata", {}),
                                         "resourceVersion": event.obj["metadata"]["resourceVersion"]}}
        return DELETED, old
    return None


def line(kind: str, obj: Any) -> bytes:
    return json_bytes({"type": kind, "object": obj}) + b"\n"


def _error_stream(err: ApiError) -> ApiResponse:
    return ApiResponse(200, stream=iter([line("ERROR", err.status())]))


def stream(api: Api, plan: WatchPlan) -> Iterator[bytes]:
    faults = api.faults
    profile = faults.profile
    cut_at = time.monotonic() + profile.watch_max_seconds if profile.watch_max_seconds is not None else None
    sent = 0
    last_rv = plan.snapshot_rv
    next_bookmark = _next_bookmark(api, plan)
    try:
        for kind, obj in plan.first:
            yield _event_line(api, plan, kind, obj)
            sent += 1
            _check_cut(profile.watch_max_events, sent, cut_at, profile.watch_cut)
        if plan.initial_end_bookmark and plan.bookmarks:
            yield _bookmark(plan.rt, plan.snapshot_rv, initial_end=True)
        while True:
            now_ = time.monotonic()
            if now_ >= plan.deadline:
                return  # a timed-out watch just ends, as the real server's does
            _check_cut(None, 0, cut_at, profile.watch_cut)
            wait = min(plan.deadline, next_bookmark, cut_at or plan.deadline, now_ + IDLE_SECONDS) - now_
            try:
                event = plan.sub.get(timeout=max(0.0, wait))
            except queue.Empty:
                if time.monotonic() >= next_bookmark:
                    last_rv = _quiet_rv(api, plan.sub, last_rv)
                    if last_rv > plan.snapshot_rv:  # the real cacher sends nothing the watcher started at
                        yield _bookmark(plan.rt, last_rv)
                    next_bookmark = _next_bookmark(api, plan)
                else:
                    yield b""  # idle: lets the server notice a client that hung up
                continue
            if event is None:
                return
            last_rv = event.rv
            out = transform(event, plan.accepts)
            if out is not None:
                yield _event_line(api, plan, *out)
                sent += 1
                _check_cut(profile.watch_max_events, sent, cut_at, profile.watch_cut)
    finally:
        plan.sub.close()


def _next_bookmark(api: Api, plan: WatchPlan) -> float:
    """When the next periodic bookmark is due (never without allowWatchBookmarks): every `bookmark_seconds`, and
    2 s before the deadline, as the real watch cache schedules them; none once that moment has passed."""
    now_ = time.monotonic()
    due = min(now_ + api.bookmark_seconds, plan.deadline - BOOKMARK_BEFORE_DEADLINE)
    return due if plan.bookmarks and due >= now_ else math.inf


def _check_cut(max_events: int | None, sent: int, cut_at: float | None, mode: WatchCut) -> None:
    if (max_events is not None and sent >= max_events) or (cut_at is not None and time.monotonic() >= cut_at):
        raise StreamCut(mode)


def _quiet_rv(api: Api, sub: Subscription, last_rv: int) -> int:
    """The store revision when this watcher has nothing pending (every event up to it was delivered)."""
    with api.store.lock:
        return api.store.revision if sub.queue.empty() else last_rv


def _event_line(api: Api, plan: WatchPlan, kind: str, obj: JsonDict) -> bytes:
    obj = served_form(plan.rt, obj)
    if plan.table:
        return line(kind, tables.table(api, plan.rt, [obj], plan.req, int(obj["metadata"]["resourceVersion"])))
    return line(kind, obj)


def _bookmark(rt: ResourceType, rv: int, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return line("BOOKMARK", {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta})

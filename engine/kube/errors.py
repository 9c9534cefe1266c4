"""Turns API failures (ApiException, connection errors) into kplan's errors, naming the object concerned.

    PermanentError
    ├── NotFound          404: the object (or its namespace) does not exist
    ├── NotKubernetes     the server answers, but not as a Kubernetes API server (no core discovery)
    ├── AlreadyExists     409 on create: an object of that name exists
    ├── FieldConflict     409 on server-side apply: fields owned by other managers (engine.errors)
    └── (other 4xx)       invalid, forbidden, unauthorized: the server's message, verbatim
    TransientError
    ├── ApiUnavailable    5xx, 429, connection refused or cut (engine.errors)
    ├── Conflict          409 on update: the object changed since it was read; re-read and retry
    └── Expired           410 on watch: the resourceVersion is too old; relist
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import urllib3

from engine.errors import ApiUnavailable, FieldConflict, KplanError, PermanentError, TransientError
from engine.kube.sdk import ApiException

__all__ = [
    "AlreadyExists", "Conflict", "Expired", "NotFound", "NotKubernetes", "api_error", "conflict_message",
    "status_error",
]

_MANAGER = re.compile(r'conflict with "((?:[^"\\]|\\.)*)"')


class NotFound(PermanentError):
    """The object, its namespace or its kind does not exist."""


class NotKubernetes(PermanentError):
    """The server does not answer discovery as a Kubernetes API server does."""


class AlreadyExists(PermanentError):
    """A create found an object of that name."""


class Conflict(TransientError):
    """The object changed since it was read (resourceVersion precondition failed)."""


class Expired(TransientError):
    """A watch asked for a resourceVersion the server no longer has (410 Gone); list again."""


def body_of(exc: ApiException) -> dict[str, Any]:
    """The Status object the server sent with an error, or {} when the body is not one."""
    try:
        body = json.loads(exc.body or "")
    except (TypeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def api_error(exc: Exception, action: str, what: str, server: str = "") -> KplanError:
    """The kplan error for a failed request to `action` (a verb) `what` (e.g. 'Deployment shop/web') sent to
    `server` (its URL, named when it could not be reached)."""
    if isinstance(exc, ApiException) and exc.status:
        status = body_of(exc)
        status.setdefault("code", exc.status)
        status.setdefault("message", exc.reason or "")
        return status_error(status, action, what)
    at = f" at {server}" if server else ""
    return ApiUnavailable(f"cannot {action} {what}: the API server{at} is unavailable ({unavailable_reason(exc)})")


def unavailable_reason(exc: Exception) -> str:
    """Why a request got no answer, in a few plain words."""
    if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason is not None:
        exc = exc.reason
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, urllib3.exceptions.NewConnectionError):  # a ConnectTimeoutError too, in urllib3's tree
        text = re.sub(r"^\[Errno -?\d+\] ", "", text.rpartition("Failed to establish a new connection: ")[2])
    elif isinstance(exc, urllib3.exceptions.ReadTimeoutError):
        text = "it did not answer in time"
    elif isinstance(exc, urllib3.exceptions.ConnectTimeoutError):
        text = "it could not be reached in time"
    return text[:1].lower() + text[1:]


def status_error(status: Mapping[str, Any], action: str, what: str) -> KplanError:
    """The kplan error for a Status object (from an error response or a watch ERROR event)."""
    code = int(status.get("code") or 0)
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or reason or f"HTTP {code}").rstrip(".")
    text = f"cannot {action} {what}: {message}"
    if code == 409 and action == "apply":
        conflicts = field_conflicts(status)
        if conflicts:
            return FieldConflict(what, conflicts, conflict_message(conflicts))
    if code == 409:
        return AlreadyExists(text) if reason == "AlreadyExists" or action == "create" else Conflict(text)
    if code == 404:
        return NotFound(text)
    if code == 410:
        return Expired(text)
    if code == 429 or code >= 500:
        return ApiUnavailable(text)
    return PermanentError(text)


def field_conflicts(status: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(manager, field) for each FieldManagerConflict cause of an apply conflict."""
    causes = (status.get("details") or {}).get("causes") or []
    pairs = []
    for cause in causes:
        found = _MANAGER.search(str(cause.get("message") or ""))
        manager = found.group(1).replace('\\"', '"') if found else "another manager"
        pairs.append((manager, str(cause.get("field") or "")))
    return pairs


def conflict_message(conflicts: Sequence[tuple[str, str]]) -> str:
    """One sentence, e.g. 'conflict with "kubectl-edit" on .spec.replicas'."""
    parts = [f'"{manager}" on {field}' for manager, field in conflicts]
    if len(parts) == 1:
        return f"conflict with {parts[0]}"
    return f"conflicts with {', '.join(parts[:-1])} and {parts[-1]}"

"""Status bodies of API errors, shaped like the real server's (APISERVER.md §8)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engine.apiserver.resources import ResourceType

MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"


class ErrorType(StrEnum):
    """field.ErrorType: the cause reason, and the words that start its message."""

    REQUIRED = "FieldValueRequired"
    INVALID = "FieldValueInvalid"
    TYPE_INVALID = "FieldValueTypeInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    DUPLICATE = "FieldValueDuplicate"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    NOT_FOUND = "FieldValueNotFound"

    @property
    def words(self) -> str:
        return _WORDS[self]


_WORDS = {
    ErrorType.REQUIRED: "Required value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.TYPE_INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.NOT_FOUND: "Not found",
}

OMIT = object()  # a FieldError whose value is not printed


@dataclass(frozen=True)
class FieldError:
    """One validation error of one field (field.Error)."""

    type: ErrorType
    field: str
    value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        """The message without the field (field.Error.ErrorBody)."""
        text = self.type.words
        if self.type not in (ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG) and self.value is not OMIT:
            text += f": {render_value(self.value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def cause(self) -> dict[str, str]:
        return {"reason": str(self.type), "message": self.body(), "field": self.field}


@dataclass(frozen=True)
class GoJson:
    """A value as Go's json.Marshal writes it (e.g. a struct: its field order, `<>&` escaped), printed as is."""

    text: str


def go_json(value: Any) -> GoJson:
    """`value` as Go's json.Marshal writes it: compact, keys in the order given, `<>&` and line separators
    escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return GoJson(text)


def render_value(value: Any) -> str:
    """Go's %v for numbers and booleans, %q for strings, JSON for the rest."""
    if isinstance(value, GoJson):
        return value.text
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class ApiError(Exception):
    """An error answer: HTTP code and Status body; raised anywhere in the request path."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details = dict(details) if details is not None else None
        self.headers = dict(headers or {})

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
        body["message"] = self.message
        if self.reason:
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def object_details(rt: ResourceType, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if rt.group:
        details["group"] = rt.group
    details["kind"] = rt.plural
    return details


def not_found(rt: ResourceType, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{rt.qualified} "{name}" not found', object_details(rt, name))


def not_served() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


class PageNotFound(ApiError):
    """A path no API group serves: the real server's catch-all answers plain text, not a Status."""

    TEXT = b"404 page not found\n"

    def __init__(self) -> None:
        super().__init__(404, "NotFound", "404 page not found")


def page_not_found() -> ApiError:
    return PageNotFound()


def already_exists(rt: ResourceType, name: str, terminating: bool = False) -> ApiError:
    prefix = "object is being deleted: " if terminating else ""
    return ApiError(409, "AlreadyExists", f'{prefix}{rt.qualified} "{name}" already exists', object_details(rt, name))


def conflict(rt: ResourceType, name: str, detail: str = MODIFIED) -> ApiError:
    message = f'Operation cannot be fulfilled on {rt.qualified} "{name}": {detail}'
    return ApiError(409, "Conflict", message, object_details(rt, name))


def invalid(rt: ResourceType, name: str, errors: Sequence[FieldError], kind: str | None = None) -> ApiError:
    """422 Invalid; `kind` overrides details.kind (some checks report the resource name there)."""
    qualified_kind = f"{kind or rt.kind}.{rt.group}" if rt.group else kind or rt.kind
    kind = kind or rt.kind
    listed = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(str(e) for e in errors) + "]"
    details: dict[str, Any] = {"name": name}
    if rt.group:
        details["group"] = rt.group
    details["kind"] = kind
    details["causes"] = [e.cause() for e in errors]
    return ApiError(422, "Invalid", f'{qualified_kind} "{name}" is invalid: {listed}', details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def forbidden(rt: ResourceType, name: str, message: str, causes: Sequence[Mapping[str, str]] = ()) -> ApiError:
    details = object_details(rt, name)
    if causes:
        details["causes"] = [dict(c) for c in causes]
    return ApiError(403, "Forbidden", f'{rt.qualified} "{name}" is forbidden: {message}', details)


def method_not_allowed() -> ApiError:
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})


def unsupported_media_type(message: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType", message, {})


def expired(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def internal(message: str, reason: str = "") -> ApiError:
    return ApiError(500, reason, message)


def too_large(message: str) -> ApiError:
    return ApiError(413, "RequestEntityTooLarge", message)


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def too_many_requests(retry_after: int) -> ApiError:
    return ApiError(
        429, "TooManyRequests", "the server has received too many requests and has asked us to try again later",
        {"retryAfterSeconds": retry_after}, {"Retry-After": str(retry_after)},
    )


def unavailable(retry_after: int) -> ApiError:
    return ApiError(
        503, "ServiceUnavailable", "the server is currently unable to handle the request",
        {"retryAfterSeconds": retry_after}, {"Retry-After": str(retry_after)},
    )


def internal_error(message: str) -> ApiError:
    return ApiError(500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]})

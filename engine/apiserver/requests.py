"""The transport-free request and response that every handler works on (HTTP and in-process alike)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
import yaml

from engine.apiserver import protobuf
from engine.apiserver.status import ApiError, PageNotFound, bad_request

JSON = "application/json"
APPLY_YAML = "application/apply-patch+yaml"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
PATCH_TYPES = (APPLY_YAML, MERGE_PATCH, JSON_PATCH, STRATEGIC_PATCH)
TRUE_VALUES = ("true", "True", "1")
JSON_TYPES = ("application/json", "application/yaml", "")
ACCEPTED_TYPES = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
_JSON = msgspec.json.Decoder()  # reads what json.loads reads, the same way; refuses NaN, Infinity, lone surrogates


@dataclass(frozen=True)
class ApiRequest:
    method: str
    path: str
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""
    in_process: bool = False

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def accept(self) -> str:
        return self.headers.get("accept", "")

    @property
    def user_agent(self) -> str:
        return self.headers.get("user-agent", "")

    def flag(self, name: str) -> bool:
        return self.query.get(name, "") in TRUE_VALUES

    def wants_table(self) -> bool:
        return any("as=Table" in part for part in self.accept.split(","))

    def json_body(self) -> Any:
        """The body decoded as JSON (or YAML for apply patches and YAML content); 400 when it does not decode."""
        if not self.body.strip():
            raise bad_request("the body of the request is empty")
        if self.content_type == protobuf.MEDIA_TYPE:
            return protobuf_body(self.body)
        if self.content_type not in (*JSON_TYPES, *PATCH_TYPES):
            raise unsupported_media_type()
        if self.content_type not in (APPLY_YAML, "application/yaml"):
            try:
                return _JSON.decode(self.body)  # msgspec, in C; whatever it refuses is decoded as before
            except msgspec.MsgspecError:
                pass
        text = self.body.decode("utf-8", errors="replace")
        if self.content_type in (APPLY_YAML, "application/yaml"):
            return decode_yaml(text)
        try:
            return json.loads(text)
        except ValueError as e:
            raise bad_request(f"couldn't get version/kind; json parse error: {e}") from e

    def object_body(self) -> dict[str, Any]:
        body = self.json_body()
        if not isinstance(body, dict):
            raise bad_request(f"couldn't get version/kind; json parse error: cannot decode {type_name(body)} "
                              "into an object")
        return body


@dataclass
class ApiResponse:
    """A JSON answer, or a stream of newline-terminated JSON events when `stream` is set."""

    code: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    stream: Iterator[bytes] | None = None
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def error(cls, err: ApiError) -> ApiResponse:
        if isinstance(err, PageNotFound):
            return cls(err.code, PageNotFound.TEXT, {"Content-Type": "text/plain; charset=utf-8",
                                                      "X-Content-Type-Options": "nosniff", **err.headers})
        return cls(err.code, err.status(), dict(err.headers))


def unsupported_media_type(*, protobuf_too: bool = True) -> ApiError:
    accepted = ACCEPTED_TYPES if protobuf_too else ACCEPTED_TYPES.removesuffix(f", {protobuf.MEDIA_TYPE}")
    return ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                    f"accepted media types include: {accepted}", {})


def protobuf_body(body: bytes) -> Any:
    """A protobuf object as its JSON form; custom resources (no message) are refused as the real server does."""
    try:
        return protobuf.decode_envelope(body)
    except protobuf.UnknownKind as e:
        raise unsupported_media_type() from e
    except protobuf.NotProtobuf as e:
        raise bad_request(str(e)) from e


YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def decode_yaml(text: str) -> Any:
    """YAML (JSON first: it is what clients send, and much faster to decode)."""
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    try:
        return yaml.load(text, Loader=YAML_LOADER)
    except yaml.YAMLError as e:
        raise bad_request(yaml_error(e)) from e


def one_line(text: str) -> str:
    return " ".join(text.split())


def type_name(value: Any) -> str:
    """The JSON type of a value, as validation messages name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def yaml_error(err: yaml.YAMLError) -> str:
    """As the real server words a YAML body it cannot read: `error encoding patch: yaml: line N: problem`."""
    mark = getattr(err, "context_mark", None) or getattr(err, "problem_mark", None)  # where the construct began
    problem = str(getattr(err, "problem", "") or "").strip() or one_line(str(err))
    return f"error encoding patch: yaml: line {mark.line + 1}: {problem}" if mark else \
        f"error encoding patch: yaml: {problem}"

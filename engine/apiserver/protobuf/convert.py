"""Protobuf messages ↔ the JSON objects the server stores, as Go's encoding/json writes the same structs.

Generic over the descriptors: field names are the descriptors' json_name (or the Go JSON name where it differs),
a scalar's zero value is dropped unless Go keeps it (pointer or no `omitempty`), `bytes` are base64. The few
types with a JSON form of their own (apimachinery's Time, MicroTime, Duration, IntOrString, Quantity, FieldsV1,
RawExtension and apiextensions' JSON and JSONSchemaPropsOr*) are converted by the functions at the bottom.
"""

from __future__ import annotations

import base64
import datetime
import json
import re
from collections.abc import Callable
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

from engine.apiserver.protobuf.messages import META, UNKNOWN, Catalog, catalog

OMIT = object()  # a special type's "write nothing" (Go writes null for a zero Time)
EXTENSIONS = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1"
ENVELOPE = b"k8s\x00"


def to_json(message: Message) -> Any:
    """The JSON value of a message."""
    return _to_json(catalog(), message)


def from_json(value: Any, descriptor: Descriptor) -> Message:
    """The message of a JSON value (fields the message does not have are left out)."""
    return _from_json(catalog(), value, descriptor)


def _to_json(cat: Catalog, message: Message) -> Any:
    descriptor: Descriptor = message.DESCRIPTOR  # type: ignore[assignment]
    special = TO_JSON.get(descriptor.full_name)
    if special is not None:
        return special(cat, message)
    if descriptor.full_name in cat.lists:
        return list(getattr(message, "items"))  # noqa: B009 - the field of every list wrapper
    out: dict[str, Any] = {}
    keep = cat.keep_zero.get(descriptor.full_name, frozenset())
    for field, value in message.ListFields():
        name = cat.json_name(descriptor, field.number, field.json_name)
        if name == "-":
            continue
        if _is_map(field):
            converted: Any = {k: _value(cat, _message_type(field).fields_by_name["value"], v) for k, v in value.items()}
        elif field.is_repeated:
            converted = [_value(cat, field, v) for v in value]
        elif field.type != FieldDescriptor.TYPE_MESSAGE and not value and field.number not in keep:
            continue
        elif name == "":
            out.update(_to_json(cat, value))
            continue
        else:
            converted = _value(cat, field, value)
        if converted is not OMIT:
            out[name] = converted
    return out


def _value(cat: Catalog, field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _to_json(cat, value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    return value


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and bool(_message_type(field).GetOptions().map_entry)


def _message_type(field: FieldDescriptor) -> Descriptor:
    assert field.message_type is not None, field.full_name
    return field.message_type


def _from_json(cat: Catalog, value: Any, descriptor: Descriptor) -> Message:
    message = cat.new(descriptor)
    special = FROM_JSON.get(descriptor.full_name)
    if special is not None:
        special(cat, value, message)
        return message
    if descriptor.full_name in cat.lists:
        getattr(message, "items").extend(str(v) for v in value or [])  # noqa: B009
        return message
    if not isinstance(value, dict):
        return message
    for field in descriptor.fields:
        name = cat.json_name(descriptor, field.number, field.json_name)
        if name == "-":
            continue
        if name == "":
            inlined = _from_json(cat, value, _message_type(field))
            if inlined.ListFields():
                getattr(message, field.name).CopyFrom(inlined)
            continue
        if value.get(name) is None:
            continue
        _set(cat, message, field, value[name])
    return message


def _set(cat: Catalog, message: Message, field: FieldDescriptor, value: Any) -> None:
    target = getattr(message, field.name)
    if _is_map(field):
        value_field = _message_type(field).fields_by_name["value"]
        for key, item in (value or {}).items():
            if value_field.type == FieldDescriptor.TYPE_MESSAGE:
                target[key].CopyFrom(_from_json(cat, item, _message_type(value_field)))
            else:
                target[key] = _scalar(value_field, item)
    elif field.is_repeated:
        for item in value or []:
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                target.add().CopyFrom(_from_json(cat, item, _message_type(field)))
            else:
                target.append(_scalar(field, item))
    elif field.type == FieldDescriptor.TYPE_MESSAGE:
        target.SetInParent()
        target.MergeFrom(_from_json(cat, value, _message_type(field)))
    else:
        setattr(message, field.name, _scalar(field, value))


def _scalar(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64decode(str(value))
    if field.type == FieldDescriptor.TYPE_BOOL:
        return bool(value)
    if field.type == FieldDescriptor.TYPE_STRING:
        return str(value)
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return float(value)
    return int(value)


# types with a JSON form of their own -----------------------------------------------------------------------------


def _time_to_json(_cat: Catalog, message: Any) -> Any:
    if not message.seconds and not message.nanos:
        return OMIT
    moment = datetime.datetime.fromtimestamp(message.seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _micro_time_to_json(_cat: Catalog, message: Any) -> Any:
    if not message.seconds and not message.nanos:
        return OMIT
    moment = datetime.datetime.fromtimestamp(message.seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{message.nanos // 1000:06d}Z"


def _time_from_json(_cat: Catalog, value: Any, message: Any) -> None:
    if not value:
        return
    moment = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    message.seconds = int(moment.timestamp())
    message.nanos = moment.microsecond * 1000


DURATION_UNITS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
                  "h": 3600 * 10**9}
DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def go_duration(ns: int) -> str:
    """Go's time.Duration.String()."""
    if ns == 0:
        return "0s"
    sign, u = ("-" if ns < 0 else ""), abs(ns)
    if u < 10**9:
        for unit, size in (("ns", 1), ("µs", 10**3), ("ms", 10**6)):
            if u < size * 1000:
                return sign + _decimal(u, size) + unit
    seconds, fraction = divmod(u, 10**9)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if hours or minutes else "")
    return sign + text + _decimal(secs * 10**9 + fraction, 10**9) + "s"


def _decimal(value: int, unit: int) -> str:
    whole, fraction = divmod(value, unit)
    digits = len(str(unit)) - 1
    tail = f"{fraction:0{digits}d}".rstrip("0") if digits else ""
    return f"{whole}.{tail}" if tail else str(whole)


def parse_go_duration(text: str) -> int:
    body = text.lstrip("+-")
    if body == "0":
        return 0
    parts = DURATION_PART.findall(body)
    if not parts or "".join(n + u for n, u in parts) != body:
        raise ValueError(f"time: invalid duration {text!r}")
    total = round(sum(float(n) * DURATION_UNITS[u] for n, u in parts))
    return -total if text.startswith("-") else total


def _duration_to_json(_cat: Catalog, message: Any) -> Any:
    return go_duration(message.duration)


def _duration_from_json(_cat: Catalog, value: Any, message: Any) -> None:
    message.duration = parse_go_duration(str(value))


def _int_or_string_to_json(_cat: Catalog, message: Any) -> Any:
    return message.strVal if message.type == 1 else message.intVal


def _int_or_string_from_json(_cat: Catalog, value: Any, message: Any) -> None:
    if isinstance(value, str):
        message.type, message.strVal = 1, value
    else:
        message.type, message.intVal = 0, int(value)


def _quantity_to_json(_cat: Catalog, message: Any) -> Any:
    return message.string or "0"


def _quantity_from_json(_cat: Catalog, value: Any, message: Any) -> None:
    message.string = str(value)


def _raw_to_json(field: str) -> Callable[[Catalog, Any], Any]:
    def convert(cat: Catalog, message: Any) -> Any:
        raw: bytes = getattr(message, field)
        if not raw:
            return OMIT
        if raw.startswith(ENVELOPE):
            return decode_envelope(raw)
        return json.loads(raw)
    return convert


def _raw_from_json(field: str) -> Callable[[Catalog, Any, Any], None]:
    def convert(_cat: Catalog, value: Any, message: Any) -> None:
        setattr(message, field, json.dumps(value, separators=(",", ":")).encode())
    return convert


def _either(second: str, second_is_list: bool) -> tuple[Callable[..., Any], Callable[..., None]]:
    """JSONSchemaPropsOr*: a schema, or else a list or a boolean (the second field)."""
    def to(cat: Catalog, message: Any) -> Any:
        if message.HasField("schema"):
            return _to_json(cat, message.schema)
        value = getattr(message, second)
        return [_to_json(cat, v) if isinstance(v, Message) else v for v in value] if second_is_list else value

    def from_(cat: Catalog, value: Any, message: Any) -> None:
        if isinstance(value, dict):
            message.schema.CopyFrom(_from_json(cat, value, _message_type(message.DESCRIPTOR.fields_by_name["schema"])))
        elif isinstance(value, list):
            field = message.DESCRIPTOR.fields_by_name[second]
            for item in value:
                if field.type == FieldDescriptor.TYPE_MESSAGE:
                    getattr(message, second).add().CopyFrom(_from_json(cat, item, _message_type(field)))
                else:
                    getattr(message, second).append(str(item))
        else:
            setattr(message, second, bool(value))
    return to, from_


_OR_ARRAY = _either("jSONSchemas", True)
_OR_BOOL = _either("allows", False)
_OR_STRINGS = _either("property", True)

TO_JSON: dict[str, Callable[[Catalog, Any], Any]] = {
    f"{META}.Time": _time_to_json,
    f"{META}.MicroTime": _micro_time_to_json,
    f"{META}.Duration": _duration_to_json,
    f"{META}.FieldsV1": _raw_to_json("Raw"),
    "k8s.io.apimachinery.pkg.runtime.RawExtension": _raw_to_json("raw"),
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": _int_or_string_to_json,
    "k8s.io.apimachinery.pkg.api.resource.Quantity": _quantity_to_json,
    f"{EXTENSIONS}.JSON": _raw_to_json("raw"),
    f"{EXTENSIONS}.JSONSchemaPropsOrArray": _OR_ARRAY[0],
    f"{EXTENSIONS}.JSONSchemaPropsOrBool": _OR_BOOL[0],
    f"{EXTENSIONS}.JSONSchemaPropsOrStringArray": _OR_STRINGS[0],
}
FROM_JSON: dict[str, Callable[[Catalog, Any, Any], None]] = {
    f"{META}.Time": _time_from_json,
    f"{META}.MicroTime": _time_from_json,
    f"{META}.Duration": _duration_from_json,
    f"{META}.FieldsV1": _raw_from_json("Raw"),
    "k8s.io.apimachinery.pkg.runtime.RawExtension": _raw_from_json("raw"),
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": _int_or_string_from_json,
    "k8s.io.apimachinery.pkg.api.resource.Quantity": _quantity_from_json,
    f"{EXTENSIONS}.JSON": _raw_from_json("raw"),
    f"{EXTENSIONS}.JSONSchemaPropsOrArray": _OR_ARRAY[1],
    f"{EXTENSIONS}.JSONSchemaPropsOrBool": _OR_BOOL[1],
    f"{EXTENSIONS}.JSONSchemaPropsOrStringArray": _OR_STRINGS[1],
}


# the envelope ----------------------------------------------------------------------------------------------------


class NotProtobuf(ValueError):
    """The bytes are not a Kubernetes protobuf object."""


class UnknownKind(ValueError):
    """The envelope names a kind that has no protobuf message (custom resources)."""


def decode_envelope(data: bytes) -> dict[str, Any]:
    """`k8s\\x00` + runtime.Unknown{typeMeta, raw} → the JSON object, apiVersion and kind first."""
    cat = catalog()
    if not data.startswith(ENVELOPE):
        raise NotProtobuf("the body does not start with the protobuf magic number")
    unknown: Any = cat.new(cat.pool.FindMessageTypeByName(UNKNOWN))
    try:
        unknown.MergeFromString(data[len(ENVELOPE):])
    except DecodeError as e:
        raise NotProtobuf(f"the body is not a protobuf object: {e}") from e
    api_version, kind = unknown.typeMeta.apiVersion, unknown.typeMeta.kind
    descriptor = cat.descriptor(api_version, kind)
    if descriptor is None:
        raise UnknownKind(f"no protobuf message for {kind} in {api_version}")
    message = cat.new(descriptor)
    try:
        message.MergeFromString(unknown.raw)
    except DecodeError as e:
        raise NotProtobuf(f"the body is not a protobuf {kind}: {e}") from e
    return {"apiVersion": api_version, "kind": kind, **_to_json(cat, message)}


def encode_envelope(obj: dict[str, Any]) -> bytes | None:
    """The protobuf form of a JSON object with apiVersion and kind; None when its kind has no message."""
    cat = catalog()
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    descriptor = cat.descriptor(api_version, kind)
    if descriptor is None:
        return None
    unknown: Any = cat.new(cat.pool.FindMessageTypeByName(UNKNOWN))
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = api_version, kind
    unknown.raw = _from_json(cat, obj, descriptor).SerializeToString(deterministic=True)
    unknown.contentEncoding, unknown.contentType = "", ""
    return ENVELOPE + bytes(unknown.SerializeToString(deterministic=True))

"""Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`), as kubectl's create generators send it."""

from __future__ import annotations

from engine.apiserver.protobuf.convert import (
    NotProtobuf,
    UnknownKind,
    decode_envelope,
    encode_envelope,
    from_json,
    go_duration,
    parse_go_duration,
    to_json,
)

__all__ = ["MEDIA_TYPE", "NotProtobuf", "UnknownKind", "decode_envelope", "encode_envelope", "from_json",
           "go_duration", "only_protobuf", "parse_go_duration", "to_json"]

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
JSON_RANGES = ("application/json", "application/*", "*/*")


def only_protobuf(accept: str) -> bool:
    """Whether an Accept header takes protobuf and nothing JSON can answer (kubectl also takes JSON)."""
    types = [part.split(";")[0].strip().lower() for part in accept.split(",")]
    return MEDIA_TYPE in types and not any(t in JSON_RANGES for t in types)

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
           "go_duration", "parse_go_duration", "prefers_protobuf", "to_json"]

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
JSON_RANGES = ("application/json", "application/yaml", "application/*", "*/*")


def prefers_protobuf(accept: str) -> bool:
    """Whether protobuf comes before any JSON type in an Accept header (by q, then order), as the real server
    chooses: kubectl's `application/vnd.kubernetes.protobuf,application/json` gets protobuf."""
    ranked = []
    for position, part in enumerate(accept.split(",")):
        media, *params = (p.strip().lower() for p in part.split(";"))
        q = next((_quality(p[2:]) for p in params if p.startswith("q=")), 1.0)
        if q > 0:
            ranked.append((-q, position, media))
    for _, _, media in sorted(ranked):
        if media == MEDIA_TYPE:
            return True
        if media in JSON_RANGES:
            return False
    return False


def _quality(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0

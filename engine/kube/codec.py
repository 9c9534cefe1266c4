"""JSON on the wire, by msgspec (in C), with the standard library's answer where the two differ.

Server-side apply bodies are encoded here (the official client sends a body given as bytes as it is; JSON bodies
it encodes itself), and every answer and watch line is decoded here: a Python walk of json.loads was most of the
CPU of a watch event's client side. msgspec writes compact UTF-8 JSON (the same document to the server) and reads
what json.loads reads, except: it writes null for NaN and the infinities (json.dumps writes NaN, which the server
refuses: such a body, or any with a null, is written by json.dumps); it refuses NaN, Infinity and lone surrogates
when reading (read by json.loads). Values that are not JSON's own (a generated model, a SecretStr) go through
`fallback` first."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec

__all__ = ["decode", "decode_line", "encode"]

_DECODER = msgspec.json.Decoder()


def encode(body: Any, fallback: Callable[[Any], Any]) -> bytes:
    """`body` as JSON; a value msgspec does not know is first turned into plain JSON by `fallback`."""
    try:
        encoded = msgspec.json.encode(body, enc_hook=fallback)
    except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):
        encoded = b"null"
    if b"null" not in encoded:
        return encoded
    return json.dumps(body, default=fallback).encode()


def decode(data: bytes) -> Any:
    """The JSON document `data`; ValueError when it is not one."""
    try:
        return _DECODER.decode(data)
    except (msgspec.MsgspecError, UnicodeDecodeError):
        return json.loads(data)


def decode_line(line: bytes) -> Any:
    """A line of a watch stream; invalid UTF-8 reads as U+FFFD; ValueError when it is no JSON document."""
    try:
        return _DECODER.decode(line)
    except (msgspec.MsgspecError, UnicodeDecodeError):
        return json.loads(line.decode("utf-8", errors="replace"))

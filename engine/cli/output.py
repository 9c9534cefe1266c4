"""Printers: tables, YAML and JSON. They format what they are given and hold no logic."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

import yaml


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def dump_yaml_stream(docs: Iterable[Any]) -> str:
    return yaml.safe_dump_all(list(docs), sort_keys=False, default_flow_style=False)


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=False, default=str)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A kubectl-style table: upper-case headers, columns separated by three spaces."""
    cells = [[str(h).upper() for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines) + "\n"


def emit(
    data: Any, fmt: str | None, out: TextIO, headers: Sequence[str] = (), rows: Iterable[Sequence[Any]] = ()
) -> None:
    """Print `data` as yaml/json, or the given table for the default format."""
    if fmt == "yaml":
        out.write(dump_yaml(data))
    elif fmt == "json":
        out.write(dump_json(data) + "\n")
    else:
        out.write(table(headers, rows))

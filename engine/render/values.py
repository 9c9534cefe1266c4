"""Read-only, labelled views of parameter and pipe values, so errors can say `'Params.db'`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

__all__ = ["Values", "plain", "wrap"]

T = TypeVar("T")


class Values(Mapping[str, Any]):
    """A read-only mapping that knows its path in the template context (`Params`, `Params.db`).

    The sandbox looks keys up before attributes on it, so a parameter called `items` or
    `keys` is the parameter, not the method. Nested values are wrapped when first read, so
    building the context costs nothing for the parameters a template does not read.
    """

    __slots__ = ("_data", "_derived", "_read", "label", "measured")

    def __init__(self, label: str, data: Mapping[str, Any]) -> None:
        self.label = label
        self._data = dict(data)
        self._read: dict[str, Any] = {}  # key -> its value wrapped, once read
        self._derived: dict[Callable[[Values], Any], Any] = {}  # a function of the mapping -> what it gave
        self.measured: tuple[int, int] | None = None  # the characters and nodes `limits.measure` found, once walked

    def derived(self, compute: Callable[[Values], T]) -> T:
        """`compute(self)`, computed once: a Values never changes, so neither does what a pure function makes of
        it (the caller must not change what it gets, or must copy it)."""
        try:
            found: T = self._derived[compute]
        except KeyError:
            found = self._derived[compute] = compute(self)
        return found

    def __getitem__(self, key: str) -> Any:
        try:
            return self._read[key]
        except KeyError:
            value = self._data[key]
            if type(value) not in _SCALARS:  # a scalar needs no label
                value = wrap(_child_label(self.label, key), value)
            self._read[key] = value
            return value

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return repr(plain(self))


def wrap(label: str, value: Any) -> Any:
    """Turn nested mappings into `Values` labelled with their path; lists stay lists."""
    if type(value) in _SCALARS:
        return value
    if type(value) is dict or isinstance(value, Mapping):
        return Values(label, value)
    if isinstance(value, list | tuple):
        return [wrap(f"{label}[{index}]", item) for index, item in enumerate(value)]
    return value


def plain(value: Any) -> Any:
    """The same value made of dicts and lists only (for serializing)."""
    if type(value) in _SCALARS:
        return value
    if type(value) is Values:
        value = value._data  # what it wraps: the same values, not wrapped yet
    if type(value) is dict or isinstance(value, Mapping):
        if _SCALARS.issuperset(map(type, value.values())):  # the common case, copied without a call per item
            return dict(value)
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        if _SCALARS.issuperset(map(type, value)):
            return list(value)
        return [plain(item) for item in value]
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _child_label(label: str, key: Any) -> str:
    if isinstance(key, str) and key.isidentifier():
        return f"{label}.{key}"
    return f"{label}[{key!r}]"

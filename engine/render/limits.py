"""The render budget: size limits, an operation count and a deadline for one template render.

A package is third-party content, so a template may try to loop forever or to build a value
too large to hold. Jinja2 compiles a template to Python code, which cannot be interrupted
from outside without threads or signals, so the budget is enforced from *inside* it:

* every unit of template work goes through a hook of the sandbox that calls
  `Budget.charge()`: each iteration of a `{% for %}` loop (the compiler wraps every loop
  iterable, including recursive `loop(...)` calls), each call (functions, macros, methods),
  each filter, each intercepted operator, each `{{ }}` output and each node of a value
  walked by `measure()`. Nested loops charge once per inner iteration, so their cost
  multiplies into the count and is stopped as soon as the total passes
  `max_operations`; every `LOOK_EVERY` operations (and at the first) the budget also
  compares an injected clock with a deadline of `max_seconds` after the render started,
  as a backstop for work whose cost per operation is high;
* between two charges only native (C) code runs, and the hooks bound what it may do before
  it does it: `range()` is capped at `max_range` items; string and list repetition,
  concatenation and `**` check the size of their result (strings and serialized values up
  to `max_output` characters, lists up to `max_items`, integers up to `max_int_bits`);
  amplifying string methods and filters (`ljust`, `replace`, `center`, `indent`, format
  widths, ...) estimate their result first; the whole output is capped at `max_output`.

A `Budget` is not thread-safe: each render uses its own environment and budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jinja2.runtime import Undefined
from jinja2.utils import Namespace

from engine.render.values import Values

__all__ = ["DEFAULT_LIMITS", "Budget", "Clock", "LimitExceeded", "Limits", "measure"]

Clock = Callable[[], float]


@dataclass(frozen=True)
class Limits:
    max_output: int = 10 * 1024 * 1024  # characters of a template's output and of any one value
    max_items: int = 100_000  # items of a list built by an operator or filter
    max_range: int = 100_000  # items of one range()
    max_operations: int = 1_000_000  # loop iterations, calls, filters, operators, outputs per render
    max_seconds: float = 10.0  # wall clock per render
    max_int_bits: int = 4096  # size of an integer built by * or **


DEFAULT_LIMITS = Limits()


class LimitExceeded(Exception):
    """A template went over its render budget; the message says which limit."""


class Budget:
    """Counts the operations of one render and watches its deadline."""

    LOOK_EVERY = 64  # operations between two looks at the clock (reading it costs more than counting)

    def __init__(self, limits: Limits, clock: Clock = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        # Public for the hot paths (a `{{ }}` output, a filter) that count inline, as `charge` does, without a call:
        # `operations += n`, then `look()` once `operations >= next_look`.
        self.operations = 0
        self.next_look = 0  # the count at which `charge` next compares the count and the clock with the limits
        self._deadline: float | None = None

    def restart(self) -> None:
        """Start a new render: reset the count and set the deadline from now."""
        self.operations = 0
        self.next_look = 0
        self._deadline = self._clock() + self.limits.max_seconds

    def charge(self, operations: int = 1) -> None:
        self.operations += operations
        if self.operations >= self.next_look:
            self.look()

    def charge_text(self, size: int, operations: int = 1, what: str = "a string") -> None:
        """`charge(operations)` and `check_text(size, what)` in one call (the hot path of every output)."""
        self.operations += operations
        if self.operations >= self.next_look:
            self.look()
        if size > self.limits.max_output:
            self.check_text(size, what)

    def output_text(self, value: Any) -> str:
        """A `{{ }}` value as text, charged one operation and measured (the hot path of every output, so the
        common case, a string, is counted here without a call)."""
        if type(value) is str:
            self.operations += 1
            if self.operations >= self.next_look:
                self.look()
            if len(value) > self.limits.max_output:
                self.check_text(len(value))
            return value
        if isinstance(value, str):
            self.charge_text(len(value))
        else:
            self.charge()
            measure(value, self)
        return str(value)

    def look(self) -> None:
        if self.operations > self.limits.max_operations:
            raise LimitExceeded(
                f"more than {self.limits.max_operations} operations"
                " (loop iterations, calls, filters, operators); is there a runaway loop?"
            )
        now = self._clock()
        if self._deadline is None:
            self._deadline = now + self.limits.max_seconds
        elif now > self._deadline:
            raise LimitExceeded(f"rendering took longer than {self.limits.max_seconds:g}s")
        self.next_look = min(self.operations + self.LOOK_EVERY, self.limits.max_operations + 1)

    def check_text(self, size: int, what: str = "a string") -> None:
        if size > self.limits.max_output:
            raise LimitExceeded(f"{what} of {size} characters exceeds the limit of {self.limits.max_output}")

    def check_items(self, size: int, what: str = "a list") -> None:
        if size > self.limits.max_items:
            raise LimitExceeded(f"{what} of {size} items exceeds the limit of {self.limits.max_items}")

    def check_int_bits(self, bits: int) -> None:
        if bits > self.limits.max_int_bits:
            raise LimitExceeded(f"an integer of about {bits} bits exceeds the limit of {self.limits.max_int_bits}")

    def check_result(self, value: Any) -> Any:
        """Check the size of a value just built by native code; return it."""
        if type(value) is str:  # the common case first
            if len(value) > self.limits.max_output:
                self.check_text(len(value))
        elif isinstance(value, str | bytes):
            self.check_text(len(value))
        elif isinstance(value, list | tuple | dict | set | frozenset):
            self.check_items(len(value))
        return value


def measure(value: Any, budget: Budget) -> int:
    """Estimate the characters `value` takes as text (str, repr, JSON or YAML), charging one
    operation per node (in batches of up to `_NODES_PER_CHARGE`); raise LimitExceeded past
    `max_output` characters.

    Shared references count every time they are reached (that is what serializing does), so
    a value built as a tower of shared lists exhausts the budget instead of the memory. A list of
    strings is summed without the walk, and a parameter's mapping (`Values`, which never changes) is
    walked once and then charged what the walk found; both come to what the walk gives.
    """
    limit = budget.limits.max_output
    if type(value) is str:  # the common cases, as the loop below would measure them
        budget.charge_text(len(value) + 2, 1, "a value")
        return len(value) + 2
    if type(value) is int:
        size = value.bit_length() // 3 + 2
        budget.charge_text(size, 1, "a value")
        return size
    kind = type(value)
    known: tuple[int, int] | None = value.measured if kind is Values else None
    if known is not None and known[0] <= limit:
        budget.charge(known[1])  # a Values never changes: measured once, charged each time
        return known[0]
    if kind is list and _STRINGS.issuperset(map(type, value)):  # as the loop below would measure it
        total = 2 + 4 * len(value) + sum(map(len, value))
        if total <= limit:
            budget.charge(1 + len(value))
            return total
    total, nodes, charged = 0, 0, 0
    stack = [value]
    while stack:
        item = stack.pop()
        nodes += 1
        kind = type(item)
        if kind is str:
            total += len(item) + 2
        elif kind is int:
            total += item.bit_length() // 3 + 2
        else:
            total += _own_size(item, stack)
        if total > limit:
            budget.charge(nodes - charged)
            budget.check_text(total, "a value")
        if nodes - charged == _NODES_PER_CHARGE:
            budget.charge(_NODES_PER_CHARGE)
            charged = nodes
    budget.charge(nodes - charged)
    if type(value) is Values:
        value.measured = (total, nodes)
    return total


_NODES_PER_CHARGE = 64


_STRINGS = frozenset({str})


def _own_size(item: Any, stack: list[Any]) -> int:
    """The size of `item` itself; its children go on `stack`."""
    if type(item) is Values or type(item) is dict:  # the common mappings, without an ABC's isinstance
        for key in item:
            stack.append(key)
            stack.append(item[key])
        return 2 + 4 * len(item)
    if isinstance(item, str | bytes):
        return len(item) + 2
    if isinstance(item, bool) or item is None:
        return 5
    if isinstance(item, int):
        return item.bit_length() // 3 + 2
    if isinstance(item, Mapping):
        for key in item:
            stack.append(key)
            stack.append(item[key])
        return 2 + 4 * len(item)
    if isinstance(item, list | tuple | set | frozenset):
        stack.extend(item)
        return 2 + 2 * len(item)
    if isinstance(item, Namespace):
        stack.append(object.__getattribute__(item, "_Namespace__attrs"))
        return 12
    if isinstance(item, Undefined):
        return 0
    return 32

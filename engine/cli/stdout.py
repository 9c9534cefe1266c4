"""Standard output that survives its reader going away (`kplan run ... | head`): what runs keeps running.

Once a write or flush meets a closed pipe, the file descriptor is pointed at /dev/null and everything later
is discarded quietly, so a plan being driven is not abandoned half-way because nobody reads its progress.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO, cast

__all__ = ["survive_closed_stdout"]


class _Tolerant:
    """A text stream that turns BrokenPipeError into silence."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, text: str) -> int:
        try:
            return self._out.write(text)
        except BrokenPipeError:
            self._discard()
            return len(text)

    def flush(self) -> None:
        try:
            self._out.flush()
        except BrokenPipeError:
            self._discard()

    def _discard(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._out.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._out, name)


def survive_closed_stdout() -> None:
    """From now on, output to a closed stdout is discarded instead of raising."""
    if not isinstance(sys.stdout, _Tolerant):
        sys.stdout = cast(TextIO, _Tolerant(sys.stdout))

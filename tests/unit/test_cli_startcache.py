"""The console script's start-up cache (engine.cli.startcache): regular expressions and dataclass methods made from
the store are the ones compiling makes, a store of another interpreter or a damaged one is ignored, nothing is written
when Python writes no bytecode, and the console script's output is the same with the store as without."""

from __future__ import annotations

import dataclasses
import marshal
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.cli import startcache

OPERATORS = Path(__file__).resolve().parents[2] / "operators"
IPV6 = (r"^\[(?:(?:[0-9A-Fa-f]{1,4}:){6}(?:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4})|::(?:[0-9A-Fa-f]{1,4}:){5}"
        r"[0-9A-Fa-f]{1,4})(?:%25|%)?(?P<zone>[a-z0-9]*)\]$")
PATTERNS: list[tuple[str | bytes, int]] = [
    (IPV6, 0),
    (r"(?P<key>[a-z]+)=(?P<value>.*?)(?:;|$)", re.IGNORECASE),
    (r"""
        (?P<number> -?\d+ (?:\.\d+)? )   # a number
      | (?P<word> \w+ )
    """, re.VERBOSE | re.UNICODE),
    (rb"^\x00[\x01-\x7f]+\Z", 0),
    (r"[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]", 0),
    (r"(?i)^(?:y|yes|true|on)$", re.ASCII),
]
SAMPLES = ["[fe80::1%25eth0]", "Key=Value;other=x", "-12.5 words here", "YES", "\x07", "on"]


def compiled(cache: startcache.StartCache) -> list[re.Pattern[str] | re.Pattern[bytes]]:
    re.purge()  # past re's own cache, to the compile step
    cache.start()
    try:
        return [re.compile(pattern, flags) for pattern, flags in PATTERNS]
    finally:
        cache.stop()
        re.purge()


def twice(store: Path, make: Callable[[startcache.StartCache], Any]) -> tuple[tuple[int, Any], tuple[int, Any]]:
    """(misses, what `make` made) of a start-up with an empty store, then of one with the store it left."""
    first, again = startcache.StartCache(store), startcache.StartCache(store)
    made = make(first)
    return (first.missed, made), (again.missed, make(again))


def test_patterns_from_the_store_are_the_ones_compiling_makes(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (missed, made), (missed_again, kept) = twice(tmp_path / "run.marshal", compiled)
    plain = [re.compile(pattern, flags) for pattern, flags in PATTERNS]
    assert missed == len(PATTERNS) and missed_again == 0
    assert made == plain and kept == plain  # a Pattern equals another with the same flags, pattern and code
    for ours, theirs in zip(kept, plain, strict=True):
        assert (ours.groups, ours.groupindex, ours.flags) == (theirs.groups, theirs.groupindex, theirs.flags)
        for text in SAMPLES:
            sample: str | bytes = text.encode() if isinstance(theirs.pattern, bytes) else text
            found, expected = ours.search(sample), theirs.search(sample)  # type: ignore[arg-type]
            assert (found and (found.span(), found.groupdict())) == (expected and (expected.span(),
                                                                                   expected.groupdict()))


def define(cache: startcache.StartCache) -> type:
    cache.start()
    try:
        @dataclasses.dataclass(frozen=True)
        class Step:
            """A record with every generated method of a frozen dataclass."""

            name: str
            tasks: tuple[str, ...] = ()
            timeout: float | None = None

        return Step
    finally:
        cache.stop()


def test_dataclass_methods_from_the_store_behave_as_compiled_ones(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (missed, made), (missed_again, kept) = twice(tmp_path / "run.marshal", define)
    assert missed > 0 and missed_again == 0
    for step in (made, kept):
        one = step("deploy", ("a",))
        assert one == step("deploy", ("a",)) and one != step("deploy") and hash(one) == hash(step("deploy", ("a",)))
        assert repr(one).endswith(".Step(name='deploy', tasks=('a',), timeout=None)")
        with pytest.raises(dataclasses.FrozenInstanceError):
            one.name = "other"
    for method in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__"):
        assert getattr(kept, method).__code__.co_code == getattr(made, method).__code__.co_code


def test_a_store_holding_what_a_start_up_no_longer_compiles_is_rewritten_to_what_it_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    store = tmp_path / "run.marshal"
    compiled(startcache.StartCache(store))
    re.purge()
    fewer = startcache.StartCache(store)
    fewer.start()
    re.compile(*PATTERNS[0])
    fewer.stop()
    assert fewer.missed == 0
    assert list(startcache.read(store)[0]) == [(PATTERNS[0][0], PATTERNS[0][1])]


def test_compiling_is_as_usual_once_stopped(tmp_path: Path) -> None:
    cache = startcache.StartCache(tmp_path / "run.marshal")
    cache.start()
    cache.stop()
    assert re._compiler.compile is startcache._real_regex_compile  # type: ignore[attr-defined]
    assert "exec" not in vars(dataclasses)
    re.purge()
    re.compile(r"after-start-up \d+")
    assert cache.missed == 0


def test_nothing_is_written_when_python_writes_no_bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    compiled(cache := startcache.StartCache(tmp_path / "run.marshal"))
    assert cache.missed == len(PATTERNS) and not (tmp_path / "run.marshal").exists()


@pytest.mark.parametrize("content", [b"", b"not marshal at all", marshal.dumps(("3.0.0 other", 0, {}, {})),
                                     marshal.dumps((("2.7.18", 20171005), {}, {})), marshal.dumps([1, 2, 3])])
def test_a_store_of_another_interpreter_or_a_damaged_one_is_ignored(tmp_path: Path, content: bytes) -> None:
    store = tmp_path / "run.marshal"
    store.write_bytes(content)
    cache = startcache.StartCache(store)
    assert compiled(cache) == [re.compile(pattern, flags) for pattern, flags in PATTERNS]
    assert cache.missed == len(PATTERNS)


def test_without_a_home_there_is_no_store_and_compiling_is_as_usual(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # as when the user has no password entry either
    assert startcache.directory() is None and startcache.start("run") is None
    assert re._compiler.compile is startcache._real_regex_compile


def test_the_console_script_prints_the_same_with_the_store_as_without(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    command = [sys.executable, "-c", "import sys; sys.argv[0] = 'kplan'; from engine.cli.main import entry; entry()",
               "template", str(OPERATORS / "redis")]
    first = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    store = tmp_path / "kplan" / "startup" / f"template.{sys.implementation.cache_tag}.marshal"
    written = store.stat().st_mtime_ns
    second = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    assert second.stdout == first.stdout and second.stdout.count("kind:") > 1
    assert store.stat().st_mtime_ns == written  # the second start-up compiled nothing the store lacked

"""Choosing a version from a repository index: the newest that matches, or the newest an upgrade admits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import semver

from engine.errors import PermanentError
from engine.package import versions

__all__ = ["Choice", "newest", "upgrade_target"]

Entry = Mapping[str, Any]


@dataclass(frozen=True)
class Choice:
    """The chosen index entry, and why each newer version was passed over (one sentence each)."""

    entry: Entry
    skipped: tuple[str, ...] = ()


def newest(name: str, entries: Sequence[Entry], wanted: str | None) -> Entry:
    """The newest entry whose version is `wanted` (a version or a range; None: any)."""
    matching = [e for e in ordered(entries) if wanted is None or fits(name, str(e["version"]), wanted)]
    if not matching:
        raise PermanentError(f"package {name} has no version {wanted}; it has {listing(entries)}")
    return matching[0]


def upgrade_target(name: str, entries: Sequence[Entry], running: str, wanted: str | None) -> Choice:
    """The newest entry newer than `running` (and `wanted`, when given) whose upgradableFrom admits `running`."""
    skipped: list[str] = []
    for entry in ordered(entries):
        version = str(entry["version"])
        if not newer(version, running) or (wanted is not None and not fits(name, version, wanted)):
            continue
        ranges = [str(r) for r in entry.get("upgradableFrom") or []]
        if ranges and not any(versions.satisfies(running, r) for r in ranges):
            skipped.append(f"{name} {version} was skipped: its upgradableFrom ({', '.join(ranges)}) does not admit "
                           f"{running}")
            continue
        return Choice(entry, tuple(skipped))
    what = f"matching {wanted} " if wanted else ""
    reasons = f" ({'; '.join(skipped)})" if skipped else ""
    raise PermanentError(f"package {name} has no version {what}newer than {running} that may upgrade from it"
                         f"{reasons}; it has {listing(entries)}")


def fits(name: str, version: str, wanted: str) -> bool:
    try:
        return versions.satisfies(version, wanted)
    except ValueError as err:
        raise PermanentError(f"{name}@{wanted} is not a version or range: {err}") from None


def newer(version: str, than: str) -> bool:
    return versions.is_version(than) and semver.Version.parse(version) > semver.Version.parse(than)


def ordered(entries: Sequence[Entry]) -> list[Entry]:
    """Entries with a valid version, newest first."""
    valid = [e for e in entries if versions.is_version(str(e.get("version")))]
    return sorted(valid, key=lambda e: semver.Version.parse(str(e["version"])), reverse=True)


def listing(entries: Sequence[Entry]) -> str:
    found = [str(e["version"]) for e in ordered(entries)]
    return ", ".join(found) if found else "no versions"

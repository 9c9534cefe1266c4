"""Repository indexes (`index.yaml`): every version of every package in a folder of .tgz files, with its digest.

Pure: `build` takes the archives' names, bytes and modification times and returns the index; the same
archives always give the same text (`dump`: packages by name, versions newest first, fixed key order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import semver
import yaml

from engine.errors import KplanError, PermanentError
from engine.model import Package
from engine.package import files, loader

__all__ = ["API_VERSION", "KIND", "Archive", "build", "digest_of", "dump", "entries_of", "load", "merge"]

API_VERSION = "kplan.dev/v1alpha1"
KIND = "PackageIndex"
Json = dict[str, Any]


@dataclass(frozen=True)
class Archive:
    """A package archive of the folder being indexed: file name, content, modification time (RFC 3339)."""

    filename: str
    data: bytes
    modified: str


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def build(archives: Iterable[Archive], base_url: str | None = None) -> Json:
    """The index of `archives`; URLs are `base_url/FILE` when given, else the file name (relative to the index)."""
    found: dict[tuple[str, str], Json] = {}
    for archive in sorted(archives, key=lambda a: a.filename):
        pkg = package_of(archive)
        key = (pkg.name, pkg.operator_version)
        if key in found:
            raise PermanentError(f"{archive.filename} and {found[key]['urls'][0]} are both {pkg.name} "
                                 f"{pkg.operator_version}; keep one")
        found[key] = entry(pkg, archive, base_url)
    return index_of(found.values())


def package_of(archive: Archive) -> Package:
    try:
        return loader.from_files(files.read_archive(archive.data, archive.filename), archive.filename)
    except KplanError as err:
        raise PermanentError(f"{archive.filename} is not a valid package: {err}") from None


def entry(pkg: Package, archive: Archive, base_url: str | None) -> Json:
    url = f"{base_url.rstrip('/')}/{archive.filename}" if base_url else archive.filename
    found: Json = {"name": pkg.name, "version": pkg.operator_version}
    optional = {"appVersion": pkg.app_version, "description": pkg.description or None,
                "kplanVersion": pkg.kplan_version, "upgradableFrom": list(pkg.upgradable_from) or None}
    found.update({k: v for k, v in optional.items() if v is not None})
    found.update({"created": archive.modified, "digest": digest_of(archive.data), "urls": [url]})
    return found


def index_of(entries: Iterable[Json]) -> Json:
    """The index document: packages sorted by name, each one's versions newest first."""
    by_name: dict[str, list[Json]] = {}
    for item in entries:
        by_name.setdefault(str(item["name"]), []).append(item)
    ordered = {name: sorted(items, key=lambda e: semver.Version.parse(str(e["version"])), reverse=True)
               for name, items in sorted(by_name.items())}
    return {"apiVersion": API_VERSION, "kind": KIND, "entries": ordered}


def merge(new: Json, old: Json) -> Json:
    """`new` plus every version only `old` has; a version in both keeps `old`'s created time when unchanged."""
    kept: dict[tuple[str, str], Json] = {(str(e["name"]), str(e["version"])): dict(e) for e in entries_of(old)}
    for item in entries_of(new):
        key = (str(item["name"]), str(item["version"]))
        before = kept.get(key)
        same = before is not None and before.get("digest") == item.get("digest")
        kept[key] = {**item, "created": before["created"]} if same and before and "created" in before else item
    return index_of(kept.values())


def entries_of(index: Mapping[str, Any]) -> list[Json]:
    """Every entry of an index, of every package."""
    return [dict(e) for items in (index.get("entries") or {}).values() for e in items or []]


def dump(index: Json) -> str:
    return yaml.safe_dump(index, sort_keys=False, default_flow_style=False)


def load(text: str, source: str) -> Json:
    """An index read from `source`, checked for the shape every later step relies on."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise PermanentError(f"the index at {source} is not valid YAML: {str(err).splitlines()[0]}") from None
    if not isinstance(data, dict) or data.get("kind") != KIND or not isinstance(data.get("entries"), dict):
        raise PermanentError(f"{source} is not a kplan repository index (kind {KIND} with entries)")
    for name, items in data["entries"].items():
        for i, item in enumerate(items if isinstance(items, list) else [None]):
            if not (isinstance(item, dict) and item.get("version") and item.get("digest") and item.get("urls")):
                raise PermanentError(f"the index at {source} has an entry {name}[{i}] without version, digest "
                                     "and urls")
    return data

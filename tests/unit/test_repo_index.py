"""Index building: every archive's name, version, metadata and sha256 digest, sorted and byte-for-byte the same
for the same archives; --url bases; merging keeps old versions and unchanged created times; a bad archive or
a duplicate version is one sentence; reading checks the shape."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import yaml

from engine.errors import PermanentError
from engine.package import archive, loader
from engine.repo import index

OPERATORS = Path(__file__).resolve().parents[2] / "operators"


def archived(folder: Path, modified: str = "2026-01-02T03:04:05Z") -> index.Archive:
    pkg = loader.load(str(folder))
    return index.Archive(f"{pkg.version_name}.tgz", archive.archive_bytes(pkg), modified)


ETCD_2 = archived(OPERATORS / "etcd")
ETCD_1 = archived(OPERATORS / "etcd" / "versions" / "0.1.0")
REDIS = archived(OPERATORS / "redis")


def test_entries_are_sorted_with_digests_and_the_text_is_deterministic() -> None:
    built = index.build([ETCD_1, REDIS, ETCD_2])

    assert list(built["entries"]) == ["etcd", "redis"]
    first = built["entries"]["etcd"][0]
    assert [e["version"] for e in built["entries"]["etcd"]] == ["0.2.0", "0.1.0"]
    assert first["digest"] == "sha256:" + hashlib.sha256(ETCD_2.data).hexdigest()
    assert (first["upgradableFrom"], first["urls"], first["created"]) == (["0.1.x"], ["etcd-0.2.0.tgz"],
                                                                         "2026-01-02T03:04:05Z")
    assert index.dump(built) == index.dump(index.build([ETCD_2, REDIS, ETCD_1]))


def test_a_base_url_prefixes_every_archive() -> None:
    built = index.build([ETCD_1], "https://charts.example.org/kplan/")
    assert built["entries"]["etcd"][0]["urls"] == ["https://charts.example.org/kplan/etcd-0.1.0.tgz"]


def test_merge_keeps_old_versions_and_the_created_time_of_unchanged_ones() -> None:
    old = index.build([ETCD_1, archived(OPERATORS / "etcd", "2025-01-01T00:00:00Z")])
    merged = index.merge(index.build([ETCD_2]), old)

    assert [(e["version"], e["created"]) for e in merged["entries"]["etcd"]] == [
        ("0.2.0", "2025-01-01T00:00:00Z"), ("0.1.0", "2026-01-02T03:04:05Z")]


def test_a_duplicate_version_and_a_broken_archive_are_refused() -> None:
    with pytest.raises(PermanentError, match=re.escape("are both etcd 0.2.0; keep one")):
        index.build([ETCD_2, index.Archive("copy.tgz", ETCD_2.data, ETCD_2.modified)])
    with pytest.raises(PermanentError, match=re.escape("junk.tgz is not a valid package")):
        index.build([index.Archive("junk.tgz", b"not a tar", "x")])


def test_loading_checks_the_shape() -> None:
    assert index.load(index.dump(index.build([ETCD_1])), "here")["kind"] == "PackageIndex"
    with pytest.raises(PermanentError, match=re.escape("is not a kplan repository index")):
        index.load("entries: []", "there")
    broken = yaml.safe_dump({"kind": "PackageIndex", "entries": {"etcd": [{"version": "0.1.0"}]}})
    with pytest.raises(PermanentError, match=r"has an entry etcd\[0\] without version, digest and urls"):
        index.load(broken, "there")

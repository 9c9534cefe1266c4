"""Choosing versions from an index: the newest matching a version or range, and for an upgrade the newest
newer version whose upgradableFrom admits the running one, with a sentence for each one passed over."""

from __future__ import annotations

import re

import pytest

from engine.errors import PermanentError
from engine.repo.selection import newest, upgrade_target

ENTRIES = [
    {"version": "0.1.0"},
    {"version": "0.3.0", "upgradableFrom": ["0.2.x"]},
    {"version": "0.2.0", "upgradableFrom": ["0.1.x"]},
    {"version": "1.4.0"},
    {"version": "not-a-version"},
]


@pytest.mark.parametrize(("wanted", "version"), [
    (None, "1.4.0"), ("0.2.0", "0.2.0"), (">=0.1,<1", "0.3.0"), ("^0.2", "0.2.0"), ("0.x", "0.3.0"),
])
def test_the_newest_match_is_chosen(wanted: str | None, version: str) -> None:
    assert newest("etcd", ENTRIES, wanted)["version"] == version


def test_no_match_names_what_there_is() -> None:
    listed = "package etcd has no version 9.9.9; it has 1.4.0, 0.3.0, 0.2.0, 0.1.0"
    with pytest.raises(PermanentError, match=re.escape(listed)):
        newest("etcd", ENTRIES, "9.9.9")
    with pytest.raises(PermanentError, match=re.escape("is not a version or range")):
        newest("etcd", ENTRIES, ">>1")


def test_an_upgrade_skips_versions_that_do_not_admit_the_running_one() -> None:
    choice = upgrade_target("etcd", ENTRIES, "0.1.0", "<1")

    assert choice.entry["version"] == "0.2.0"
    assert choice.skipped == ("etcd 0.3.0 was skipped: its upgradableFrom (0.2.x) does not admit 0.1.0",)
    assert upgrade_target("etcd", ENTRIES, "0.1.0", None).entry["version"] == "1.4.0"  # no upgradableFrom: any


def test_an_upgrade_with_nothing_newer_allowed_is_refused_with_the_reasons() -> None:
    with pytest.raises(PermanentError, match=r"no version matching 0.3.0 newer than 0.1.0 .*\(etcd 0.3.0 was skipped"):
        upgrade_target("etcd", ENTRIES, "0.1.0", "0.3.0")
    with pytest.raises(PermanentError, match=re.escape("newer than 1.4.0")):
        upgrade_target("etcd", ENTRIES, "1.4.0", None)

"""Package references: repository names with versions, ranges and repositories; oci:// with tags and digests;
anything else is a path or URL (None); malformed references are one sentence."""

from __future__ import annotations

import pytest

from engine.errors import PermanentError
from engine.repo.fetching import reference_beside
from engine.repo.references import OciRef, RepoRef, parse, parse_oci

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(("text", "ref"), [
    ("etcd", RepoRef("etcd")),
    ("etcd@0.1.0", RepoRef("etcd", version="0.1.0")),
    ("etcd@>=1.2,<2", RepoRef("etcd", version=">=1.2,<2")),
    ("stable/etcd@^0.2", RepoRef("etcd", "stable", "^0.2")),
    ("oci://127.0.0.1:5000/kplan/etcd:0.1.0", OciRef("127.0.0.1:5000", "kplan/etcd", "0.1.0")),
    (f"oci://registry.example.org/etcd@{DIGEST}", OciRef("registry.example.org", "etcd", DIGEST)),
])
def test_references_are_read(text: str, ref: object) -> None:
    assert parse(text) == ref


@pytest.mark.parametrize("text", ["./operators/etcd", "operators/etcd/versions/0.1.0", "etcd-0.1.0.tgz",
                                  "https://example.org/etcd-0.1.0.tgz", "Etcd"])
def test_paths_and_urls_are_not_references(text: str) -> None:
    assert parse(text) is None


def test_an_oci_reference_prints_as_written_and_knows_a_digest() -> None:
    ref = parse_oci(f"oci://h:1/a/b@{DIGEST}")
    assert ref.is_digest and str(ref) == f"oci://h:1/a/b@{DIGEST}" and ref.target == f"h:1/a/b@{DIGEST}"
    assert parse_oci("oci://h/a", default_tag="0.2.0").reference == "0.2.0"


@pytest.mark.parametrize(("text", "reason"), [
    ("oci://host", "is not an OCI reference"),
    ("oci://host/etcd", "names no tag"),
    ("oci://host/etcd@sha256:abc", "not sha256: followed by 64 hex digits"),
    ("oci://host/Etcd:1", "that is not lower-case"),
    ("etcd@ ", "names no version"),
])
def test_malformed_references_are_refused(text: str, reason: str) -> None:
    with pytest.raises(PermanentError, match=reason):
        parse(text)


@pytest.mark.parametrize(("parent", "beside"), [
    ("oci://127.0.0.1:5000/family/cli-parent:0.1.0", "oci://127.0.0.1:5000/family/cli-child:0.2.0"),
    ("oci://reg.example/a/b/cli-parent@sha256:" + "a" * 64, "oci://reg.example/a/b/cli-child:0.2.0"),
    ("oci://reg.example/cli-parent:1", "oci://reg.example/cli-child:0.2.0"),
    ("https://example.org/cli-parent-0.1.0.tgz", None),
])
def test_a_dependency_of_a_registry_package_is_looked_for_beside_it(parent: str, beside: str | None) -> None:
    assert reference_beside(parent, "cli-child", "0.2.0") == beside

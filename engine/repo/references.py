"""What a package argument names: a repository package (`etcd`, `etcd@0.1.0`, `etcd@'>=1.2,<2'`,
`stable/etcd`), an OCI artifact (`oci://HOST[:PORT]/REPO[:TAG]` or `@sha256:...`), or else a path or URL."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.errors import PermanentError

__all__ = ["OciRef", "RepoRef", "parse", "parse_oci"]

NAME = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
REPO_REF = re.compile(rf"^(?:(?P<repo>{NAME})/)?(?P<name>{NAME})(?:@(?P<version>.+))?$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
HOST = re.compile(r"^[A-Za-z0-9.-]+(:[0-9]{1,5})?$")
PATH = re.compile(r"^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*$")


@dataclass(frozen=True)
class RepoRef:
    """A package in the user's repositories; `version` an exact version or a range, None for the newest."""

    name: str
    repo: str | None = None
    version: str | None = None

    def __str__(self) -> str:
        where = f"{self.repo}/{self.name}" if self.repo else self.name
        return f"{where}@{self.version}" if self.version else where


@dataclass(frozen=True)
class OciRef:
    """An artifact in an OCI registry: `registry` is HOST[:PORT], `reference` a tag or a sha256 digest."""

    registry: str
    repository: str
    reference: str

    @property
    def is_digest(self) -> bool:
        return self.reference.startswith("sha256:")

    @property
    def target(self) -> str:
        """`HOST/REPO:TAG` or `HOST/REPO@sha256:...`, as OCI clients write it."""
        sep = "@" if self.is_digest else ":"
        return f"{self.registry}/{self.repository}{sep}{self.reference}"

    def __str__(self) -> str:
        return f"oci://{self.target}"


def parse(text: str) -> RepoRef | OciRef | None:
    """The reference `text` is, or None when it is not one (a path or URL); a malformed one is refused."""
    if text.startswith("oci://"):
        return parse_oci(text)
    found = REPO_REF.match(text)
    if found is None:
        return None
    version = found["version"]
    if version is not None and not version.strip():
        raise PermanentError(f"{text!r} names no version after '@'")
    return RepoRef(found["name"], found["repo"], version.strip() if version else None)


def parse_oci(text: str, default_tag: str | None = None) -> OciRef:
    """`oci://HOST[:PORT]/REPO[:TAG]` or `oci://HOST[:PORT]/REPO@sha256:HEX`; without a tag, `default_tag`."""
    rest = text.removeprefix("oci://")
    host, slash, path = rest.partition("/")
    if not slash or not HOST.match(host) or not path:
        raise PermanentError(f"{text!r} is not an OCI reference: write oci://HOST[:PORT]/REPOSITORY[:TAG]")
    if "@" in path:
        path, _, reference = path.partition("@")
        if not DIGEST.match(reference):
            raise PermanentError(f"{text!r} has a digest that is not sha256: followed by 64 hex digits")
    else:
        last = path.rsplit("/", 1)[-1]
        name, colon, tag = last.partition(":")
        reference = tag if colon else (default_tag or "")
        path = path[: len(path) - len(last)] + name
        if not reference:
            raise PermanentError(f"{text!r} names no tag: write oci://HOST/REPOSITORY:TAG or @sha256:DIGEST")
        if not TAG.match(reference):
            raise PermanentError(f"{text!r} has a tag {reference!r} that OCI registries do not accept")
    if not PATH.match(path):
        raise PermanentError(f"{text!r} has a repository {path!r} that is not lower-case letters, digits, '.', "
                             "'_', '-' and '/'")
    return OciRef(host, path, reference)

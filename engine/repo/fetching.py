"""Fetching a package named on the command line, with where it came from and its sha256 digest.

A repository package is looked up in the cached indexes, downloaded, and its bytes checked against the
index's digest before they are read at all; a mismatch, a missing version or an unreachable repository is
one sentence, and the caller has changed nothing yet.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from engine.errors import KplanError, PermanentError
from engine.model import Package
from engine.package import archive, files, loader
from engine.repo import config, index, references, selection
from engine.repo.references import OciRef, RepoRef

__all__ = ["Fetched", "fetch", "fetch_index", "is_reference", "reference_beside"]

URL_SCHEMES = ("http://", "https://", "file://")


@dataclass(frozen=True)
class Fetched:
    """A verified package, where it came from (path, URL or oci:// reference) and the sha256 of its archive."""

    pkg: Package
    source: str
    digest: str
    notes: tuple[str, ...] = ()  # what was chosen and why, for the user


def is_reference(source: str) -> bool:
    """True when `source` names a repository package or an OCI artifact rather than a path or URL."""
    if source.startswith("oci://"):
        return True
    if source.startswith(URL_SCHEMES) or Path(source).exists():
        return False
    return references.parse(source) is not None


def fetch(source: str, *, plain_http: bool = False, running: str | None = None) -> Fetched:
    """The package `source` names; `running`: the version an upgrade starts from (a repository package is then
    the newest version whose upgradableFrom admits it)."""
    ref = references.parse(source) if is_reference(source) else None
    if isinstance(ref, OciRef):
        return from_registry(ref, plain_http)
    if isinstance(ref, RepoRef):
        return from_repository(ref, running)
    return from_path(source)


def reference_beside(parent: str, name: str, version: str) -> str | None:
    """Where package `name` at `version` is when the package was fetched from the reference `parent`: in the same
    repository (`REPO/NAME@VERSION`), or in the same registry beside it (`oci://HOST/FOLDER/NAME:VERSION`, the tag
    `package push` gives by default). None when `parent` is a path or URL."""
    ref = references.parse(parent) if is_reference(parent) else None
    if isinstance(ref, OciRef):
        folder = ref.repository.rpartition("/")[0]
        return f"oci://{ref.registry}/{folder + '/' if folder else ''}{name}:{version}"
    if isinstance(ref, RepoRef):
        repository, _ = find(ref)
        return f"{repository.name}/{name}@{version}"
    return None


def from_path(source: str) -> Fetched:
    """A folder (its digest: that of its reproducible `package create` archive), a .tgz file or a URL."""
    local = Path(source)
    if local.is_dir():
        pkg = loader.load(source)
        return Fetched(pkg, str(local.resolve()), index.digest_of(archive.archive_bytes(pkg)))
    if local.is_file():
        data = local.read_bytes()
        return Fetched(from_bytes(data, source), str(local.resolve()), index.digest_of(data))
    if source.startswith(URL_SCHEMES):
        data = files.download(source)
        return Fetched(from_bytes(data, source), source, index.digest_of(data))
    return Fetched(loader.load(source), source, "")  # no such path: the loader says so


def from_bytes(data: bytes, source: str) -> Package:
    return loader.from_files(files.read_archive(data, source), source)


def from_registry(ref: OciRef, plain_http: bool) -> Fetched:
    # Imported here: the registry client brings requests (~0.05 s of CPU), which a package from a path or a
    # repository does not need.
    from engine.repo import oci

    pulled = oci.pull(ref, plain_http=plain_http)
    pkg = from_bytes(pulled.data, str(ref))
    return Fetched(pkg, str(ref), pulled.manifest_digest, (f"pulled {ref} ({pulled.manifest_digest})",))


# --- repositories ------------------------------------------------------------------------------


def fetch_index(repository: config.Repository) -> str:
    """The text of the repository's index.yaml, checked to be an index."""
    url = repository.url.rstrip("/") + "/index.yaml"
    try:
        text = files.download(url, limit=16 * files.MAX_BYTES).decode("utf-8")
    except KplanError as err:
        raise type(err)(f"repository {repository.name!r} is unreachable: {err}") from None
    except UnicodeDecodeError:
        raise PermanentError(f"the index of repository {repository.name!r} at {url} is not UTF-8 text") from None
    index.load(text, url)
    return text


def from_repository(ref: RepoRef, running: str | None) -> Fetched:
    repository, entries = find(ref)
    notes: tuple[str, ...] = ()
    if running is None:
        entry = selection.newest(ref.name, entries, ref.version)
    else:
        choice = selection.upgrade_target(ref.name, entries, running, ref.version)
        entry, notes = choice.entry, choice.skipped
    version = str(entry["version"])
    url = urllib.parse.urljoin(repository.url.rstrip("/") + "/", str(entry["urls"][0]))
    data = files.download(url)
    digest, wanted = index.digest_of(data), str(entry["digest"])
    if digest != wanted:
        raise PermanentError(f"{url} has digest {digest}, but repository {repository.name!r} lists {ref.name} "
                             f"{version} with {wanted}; it was not used")
    pkg = from_bytes(data, url)
    if (pkg.name, pkg.operator_version) != (ref.name, version):
        raise PermanentError(f"{url} holds {pkg.name} {pkg.operator_version}, but repository {repository.name!r} "
                             f"lists it as {ref.name} {version}; it was not used")
    chosen = f"{ref.name} {version} from repository {repository.name} ({digest})"
    return Fetched(pkg, url, digest, (*notes, chosen))


def find(ref: RepoRef) -> tuple[config.Repository, list[dict[str, object]]]:
    """The repository that has the package, and the package's entries there."""
    repositories = config.load()
    if not repositories:
        raise PermanentError(f"{str(ref)!r} is not a folder, file or URL, and no package repositories are "
                             "configured: add one with `kplan repo add NAME URL`")
    if ref.repo is not None:
        chosen = [r for r in repositories if r.name == ref.repo]
        if not chosen:
            raise PermanentError(f"no repository named {ref.repo!r} is configured (see `kplan repo list`)")
        repositories = chosen
    having = [(r, entries) for r in repositories if (entries := entries_named(r, ref.name))]
    if not having:
        where = f"repository {ref.repo!r}" if ref.repo else "any configured repository"
        raise PermanentError(f"package {ref.name!r} is not in {where} (run `kplan repo update` to refresh the "
                             "indexes, or `kplan search` to look)")
    if len(having) > 1:
        names = " and ".join(r.name for r, _ in having)
        raise PermanentError(f"package {ref.name!r} is in repositories {names}: say which, as REPO/{ref.name}")
    return having[0]


def entries_named(repository: config.Repository, name: str) -> list[dict[str, object]]:
    return [dict(e) for e in (config.cached_index(repository).get("entries") or {}).get(name) or []]

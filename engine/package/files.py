"""Reading a package's files from a folder, a .tgz archive, or an http(s):// or file:// URL.

A package is operator.yaml, params.yaml, README.md and everything under templates/ and tests/;
other files (pictures, editor leftovers, hidden files) are not part of it. Files are UTF-8 text,
and a whole package is at most MAX_BYTES, what an OperatorVersion object can comfortably hold.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

from engine.errors import PackageInvalid, PermanentError, Problem, TransientError

__all__ = ["MAX_BYTES", "download", "is_package_file", "read_archive", "read_folder", "read_source", "read_url"]

MAX_BYTES = 1024 * 1024
ROOT_FILES = frozenset({"operator.yaml", "params.yaml", "README.md"})
FOLDERS = ("templates/", "tests/")
URL_TIMEOUT = 30.0


def is_package_file(path: str) -> bool:
    """True for a relative POSIX path that belongs in a package."""
    parts = path.split("/")
    if any(p.startswith(".") or p in ("", "__pycache__") for p in parts):
        return False
    return path in ROOT_FILES or path.startswith(FOLDERS)


def read_source(source: str) -> dict[str, str]:
    """The files of the package at `source`: a folder, a .tgz file, or a URL."""
    if source.startswith(("http://", "https://")):
        return read_url(source)
    if source.startswith("file://"):
        path = urllib.request.url2pathname(urllib.parse.urlparse(source).path)
        if not Path(path).exists():
            raise PermanentError(f"no package at {source}: {path} does not exist")
        return _read_local(path, source)
    return _read_local(source, source)


def _read_local(path: str, source: str) -> dict[str, str]:
    local = Path(path)
    if local.is_dir():
        return read_folder(local)
    if local.is_file():
        try:
            with local.open("rb") as archive:
                data = archive.read(MAX_BYTES + 1)  # at most what a download reads: the size is never trusted
        except OSError as e:
            raise PermanentError(f"cannot read {source}: {e.strerror or e}") from None
        if len(data) > MAX_BYTES:
            raise PackageInvalid([_too_large(source)])
        return read_archive(data, source)
    raise PermanentError(f"no package at {source}: it is not a folder, a .tgz file or an http(s):// or file:// URL")


def read_folder(folder: Path) -> dict[str, str]:
    """The package files of `folder`; each read only as far as the package's size bound allows, so a huge file
    is refused (by name) without being read into memory."""
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and not path.is_symlink() and is_package_file(relative):
            try:
                with path.open("rb") as file:
                    data = file.read(MAX_BYTES - total + 1)
            except OSError as e:
                raise PermanentError(f"cannot read {path}: {e.strerror or e}") from None
            total += len(data)
            if total > MAX_BYTES:
                raise PackageInvalid([_too_large(str(folder), relative)])
            files[relative] = data
    return _decode(files, str(folder))


def read_archive(data: bytes, source: str) -> dict[str, str]:
    """The package files in a gzipped tar, with the archive's single top folder (if any) removed."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            members = _archive_members(archive, source)
    except (tarfile.TarError, OSError, EOFError, zlib.error):
        unreadable = Problem(source, None, "", "is not a package folder or a readable .tgz archive")
        raise PackageInvalid([unreadable]) from None
    return _decode(_strip_top_folder(members), source)


def _archive_members(archive: tarfile.TarFile, source: str) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    total = 0
    for info in archive:
        name = posixpath.normpath(info.name)
        if not info.isfile() or name.startswith(("/", "../")) or name == "..":
            continue
        total += info.size
        if total > MAX_BYTES:
            raise PackageInvalid([_too_large(source)])
        extracted = archive.extractfile(info)
        if extracted is not None:
            members[name] = extracted.read()
    return members


def _strip_top_folder(members: dict[str, bytes]) -> dict[str, bytes]:
    tops = {name.split("/", 1)[0] for name in members}
    if "operator.yaml" in members or len(tops) != 1 or all("/" not in n for n in members):
        return members
    top = tops.pop() + "/"
    return {name.removeprefix(top): data for name, data in members.items()}


def read_url(url: str) -> dict[str, str]:
    """Download a .tgz package; a refused request is permanent, an unreachable server transient."""
    return read_archive(download(url), url)


def download(url: str, limit: int = MAX_BYTES) -> bytes:
    """The bytes at an http(s):// or file:// URL, at most `limit` of them; a refused request is permanent, an
    unreachable server transient."""
    try:
        with urllib.request.urlopen(url, timeout=URL_TIMEOUT) as response:
            data: bytes = response.read(limit + 1)
    except urllib.error.HTTPError as e:
        raise PermanentError(f"cannot download {url}: the server answered {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", None) or e
        raise TransientError(f"cannot download {url}: {reason}") from None
    if len(data) > limit:
        raise PackageInvalid([_too_large(url)])
    return data


def _decode(raw: dict[str, bytes], source: str) -> dict[str, str]:
    if sum(len(b) for b in raw.values()) > MAX_BYTES:
        raise PackageInvalid([_too_large(source)])
    files: dict[str, str] = {}
    problems: list[Problem] = []
    for name in sorted(raw):
        if not is_package_file(name):
            continue
        try:
            files[name] = raw[name].decode("utf-8")
        except UnicodeDecodeError:
            problems.append(Problem(name, None, "", "is not UTF-8 text"))
    if problems:
        raise PackageInvalid(problems)
    return files


def _too_large(source: str, file: str = "") -> Problem:
    if file:
        return Problem(source, None, "", f"is larger than {MAX_BYTES // 1024} KiB, the most a package may hold "
                                         f"(reading {file} passed it)")
    return Problem(source, None, "", f"is larger than {MAX_BYTES // 1024} KiB, the most a package may hold")

"""Loading packages from folders, .tgz archives, http:// and file:// URLs; archives; file texts round trips."""

from __future__ import annotations

import dataclasses
import functools
import http.server
import io
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType

import pytest

from engine.errors import PackageInvalid, PermanentError, Problem, TransientError
from engine.package import archive, files, loader

FIXTURES = Path(__file__).parent.parent / "fixtures" / "packages"
VALID = FIXTURES / "valid"


def tgz(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def minimal_members(prefix: str = "") -> dict[str, bytes]:
    return {prefix + name: text.encode() for name, text in loader.read_files(str(FIXTURES / "minimal")).items()}


def test_a_folder_loads_with_only_package_files(tmp_path: Path) -> None:
    folder = tmp_path / "pkg"
    for name, data in minimal_members().items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    (folder / "logo.png").write_bytes(b"\x89PNG\xff")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref")
    (folder / "templates" / ".app.yaml.swp").write_bytes(b"\xff")
    assert sorted(loader.read_files(str(folder))) == ["operator.yaml", "params.yaml", "templates/app.yaml"]


def test_the_valid_package_is_fully_typed() -> None:
    pkg = loader.load(str(VALID))
    assert (pkg.name, pkg.operator_version, pkg.app_version, pkg.kplan_version) == ("demo", "0.3.0", "7.2.4", ">=0.1")
    assert pkg.upgradable_from == ("0.2.x", ">=0.1.0 <0.2.0")
    assert sorted(pkg.plans) == ["backup", "cleanup", "deploy", "deps", "update"]
    assert pkg.plans["deploy"].step("init").timeout == 600.0
    assert pkg.task("app-ready").timeout == 300.0
    assert pkg.task("app-ready").templates == ("statefulset.yaml",)
    assert pkg.task("backup").pipe[0].key == "backup"
    assert pkg.task("cache").parameters == {"replicas": "1"}
    assert pkg.task("init").retries == 2
    assert pkg.parameter("replicas").enum == (1, 3, 5)
    assert pkg.parameter("schedule").required is False
    assert pkg.parameter("replicas").required is False
    assert pkg.parameter("storage").immutable and pkg.parameter("password").secret
    assert pkg.files["README.md"].startswith("# demo")
    assert set(pkg.templates) == {f.removeprefix("templates/") for f in pkg.files if f.startswith("templates/")}


def test_from_files_and_to_files_round_trip_exactly() -> None:
    texts = loader.read_files(str(VALID))
    assert loader.to_files(loader.from_files(texts)) == texts


def test_to_files_of_a_package_built_in_code_loads_back_to_the_same_package() -> None:
    pkg = loader.load(str(VALID))
    rebuilt = loader.from_files(loader.to_files(dataclasses.replace(pkg, files=MappingProxyType({}))))
    assert (rebuilt.tasks, rebuilt.parameters, dict(rebuilt.plans), rebuilt.health) == (
        pkg.tasks, pkg.parameters, dict(pkg.plans), pkg.health
    )
    assert (rebuilt.maintainers, rebuilt.upgradable_from, dict(rebuilt.templates)) == (
        pkg.maintainers, pkg.upgradable_from, dict(pkg.templates)
    )


def test_create_writes_a_reproducible_archive_that_loads_back(tmp_path: Path) -> None:
    first = archive.create(str(VALID), str(tmp_path / "a"))
    second = archive.create(str(VALID), str(tmp_path / "b"))
    assert first.name == "demo-0.3.0.tgz"
    assert first.read_bytes() == second.read_bytes()
    assert loader.read_files(str(first)) == loader.read_files(str(VALID))
    with tarfile.open(first) as tar:
        names = tar.getnames()
        assert names == sorted(names)
        assert all(name.startswith("demo/") for name in names)
        assert {m.mtime for m in tar.getmembers()} == {0}


def test_create_refuses_an_invalid_package(tmp_path: Path) -> None:
    with pytest.raises(PackageInvalid):
        archive.create(str(FIXTURES / "broken" / "cycle"), str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_an_archive_without_a_top_folder_loads(tmp_path: Path) -> None:
    path = tmp_path / "flat.tgz"
    path.write_bytes(tgz(minimal_members()))
    assert loader.load(str(path)).name == "tiny"


def test_an_archive_ignores_paths_outside_the_package(tmp_path: Path) -> None:
    members = minimal_members("tiny/") | {"../evil.yaml": b"x", "/etc/passwd": b"x", "tiny/../../x": b"x"}
    assert sorted(files.read_archive(tgz(members), "a.tgz")) == ["operator.yaml", "params.yaml", "templates/app.yaml"]


def test_an_archive_that_is_too_large_is_refused() -> None:
    members = minimal_members() | {"tests/big.yaml": b"x" * (files.MAX_BYTES + 1)}
    with pytest.raises(PackageInvalid, match="is larger than 1024 KiB"):
        files.read_archive(tgz(members), "big.tgz")


def test_a_huge_file_in_a_folder_is_refused_by_name_without_being_read(tmp_path: Path) -> None:
    # issue 12's fuzzer: the folder was read whole before its size was checked; an 8 GiB (sparse) params.yaml
    # would be read into memory. Now reading stops at the bound.
    folder = tmp_path / "pkg"
    (folder / "templates").mkdir(parents=True)
    for name, data in minimal_members().items():
        (folder / name).write_bytes(data)
    with (folder / "params.yaml").open("r+b") as huge:
        huge.truncate(8 * 1024**3)
    with pytest.raises(PackageInvalid, match=r"is larger than 1024 KiB.*\(reading params.yaml passed it\)"):
        loader.load(str(folder))


def test_a_huge_archive_file_is_refused_without_being_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.tgz"
    path.write_bytes(tgz(minimal_members()))
    with path.open("r+b") as huge:
        huge.truncate(8 * 1024**3)
    with pytest.raises(PackageInvalid, match="is larger than 1024 KiB"):
        loader.load(str(path))


def test_a_file_that_is_not_an_archive_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "operator.yaml"
    path.write_text("name: x\n")
    with pytest.raises(PackageInvalid) as e:
        loader.load(str(path))
    assert str(e.value) == f"package is invalid: {path}: is not a package folder or a readable .tgz archive (error)"


def test_a_missing_path_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(PermanentError) as e:
        loader.load(str(tmp_path / "nothing"))
    assert str(e.value) == (
        f"no package at {tmp_path / 'nothing'}: it is not a folder, a .tgz file or an http(s):// or file:// URL"
    )


def test_a_file_url_of_a_missing_file_says_it_does_not_exist(tmp_path: Path) -> None:
    url = (tmp_path / "gone.tgz").as_uri()
    with pytest.raises(PermanentError) as e:
        loader.load(url)
    assert str(e.value) == f"no package at {url}: {tmp_path / 'gone.tgz'} does not exist"


def test_file_urls_name_folders_and_archives(tmp_path: Path) -> None:
    path = archive.create(str(VALID), str(tmp_path))
    assert loader.load(path.as_uri()).name == "demo"
    assert loader.load(VALID.resolve().as_uri()).name == "demo"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A local HTTP server on 127.0.0.1 serving tmp_path; yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_an_http_url_serving_an_archive_loads(tmp_path: Path, served: str) -> None:
    archive.create(str(VALID), str(tmp_path))
    pkg = loader.load(f"{served}/demo-0.3.0.tgz")
    assert pkg.version_name == "demo-0.3.0"
    assert loader.to_files(pkg) == loader.read_files(str(VALID))


def test_an_http_url_that_is_not_found_is_permanent(served: str) -> None:
    with pytest.raises(PermanentError, match=r"^cannot download .*/missing.tgz: the server answered 404"):
        loader.load(f"{served}/missing.tgz")


def test_an_unreachable_server_is_transient(served: str) -> None:
    port = served.rsplit(":", 1)[1]
    with pytest.raises(TransientError, match=r"^cannot download"):
        loader.load(f"https://127.0.0.1:{port}/x.tgz")


def test_load_with_warnings_returns_the_warnings() -> None:
    pkg, warnings = loader.load_with_warnings(str(FIXTURES / "broken" / "unused-template"))
    assert pkg.name == "tiny"
    assert warnings == (Problem("templates/old.yaml", None, "", "is not used by any task", warning=True),)


def test_the_same_texts_are_verified_once_and_give_the_same_package() -> None:
    texts = loader.read_files(str(VALID))
    first = loader.load(str(VALID))
    assert loader.from_files(dict(texts), "OperatorVersion shop/valid-1.0.0") is first
    changed = {**texts, "templates/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"}
    other = loader.from_files(changed)
    assert other is not first and "templates/extra.yaml" in other.files


def test_a_package_that_does_not_verify_is_refused_every_time() -> None:
    texts = {**loader.read_files(str(FIXTURES / "minimal")), "operator.yaml": "name: [\n"}
    for _ in range(2):
        with pytest.raises(PackageInvalid):
            loader.from_files(texts)


def test_verified_packages_kept_are_bounded() -> None:
    texts = loader.read_files(str(FIXTURES / "minimal"))
    made = [loader.from_files({**texts, "README.md": f"copy {i}"}) for i in range(loader.VERIFIED_KEPT + 1)]
    assert loader.from_files({**texts, "README.md": "copy 0"}) is not made[0]  # the oldest was let go
    assert loader.from_files({**texts, "README.md": f"copy {loader.VERIFIED_KEPT}"}) is made[-1]

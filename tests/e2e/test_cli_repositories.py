"""Package repositories through the real `kubectl kplan`, with a manager running.

`repo index` indexes a folder holding two versions of etcd (operators/etcd and the kept 0.1.0) and a third
that only 0.2.x may upgrade to; a local HTTP server started by the test serves it; `repo add`, `repo list`
and `search` read it; `install etcd@0.1.0` installs that version and records its source and digest on the
OperatorVersion (`get instances -o wide` shows them); `upgrade --instance e etcd` moves to the newest version
whose upgradableFrom admits 0.1.0 and says why the newer one was skipped. An archive changed after indexing
is refused by its digest and nothing is created; a missing version and an unreachable repository are one
sentence each.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cli_harness import INSTANCE, Cli, one_sentence_error
from repo_harness import ETCD_FOLDERS, archives, bumped, repo_cli, served

from engine.controller import Manager
from engine.kube import Kube

WAIT = ("--wait", "--timeout", "90s")
OPERATOR_VERSION = ("kplan.dev/v1alpha1", "OperatorVersion")


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube, tmp_path: Path) -> Cli:
    return repo_cli(sim_kubeconfig, sim_namespace, tmp_path / "home")


@pytest.fixture
def repository(cli: Cli, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A served folder with etcd 0.1.0, 0.2.0 and 0.3.0 (upgradable from 0.2.x only), indexed; (folder, URL)."""
    folder = tmp_path / "repo"
    folder.mkdir()
    archives(cli, folder, *ETCD_FOLDERS, bumped(ETCD_FOLDERS[0], tmp_path, "0.3.0", "0.2.x"))
    result = cli("repo", "index", str(folder), namespaced=False)
    assert result.code == 0, result.text
    with served(folder) as url:
        yield folder, url


def ok(cli: Cli, *args: str, namespaced: bool = True) -> str:
    result = cli(*args, namespaced=namespaced)
    assert result.code == 0, result.text
    return result.out


def test_index_lists_every_version_with_its_digest_and_is_the_same_every_time(
    cli: Cli, repository: tuple[Path, str]
) -> None:
    folder, _ = repository
    first = (folder / "index.yaml").read_text()
    ok(cli, "repo", "index", str(folder), namespaced=False)

    assert (folder / "index.yaml").read_text() == first
    entries = yaml.safe_load(first)["entries"]["etcd"]
    assert [e["version"] for e in entries] == ["0.3.0", "0.2.0", "0.1.0"]
    assert all(e["digest"].startswith("sha256:") and e["urls"] == [f"etcd-{e['version']}.tgz"] for e in entries)
    assert entries[1]["upgradableFrom"] == ["0.1.x"] and entries[2]["appVersion"] == "3.4.34"


def test_install_a_version_from_the_repository_then_upgrade_to_the_newest_allowed(
    cli: Cli, repository: tuple[Path, str], sim_kube: Kube, manager: Manager
) -> None:
    _, url = repository
    ok(cli, "repo", "add", "local", url, namespaced=False)
    assert f"local   {url}" in ok(cli, "repo", "list", namespaced=False)
    found = ok(cli, "search", "etcd", "--versions", namespaced=False)
    assert [line.split()[:2] for line in found.splitlines()[1:]] == [
        ["local/etcd", "0.3.0"], ["local/etcd", "0.2.0"], ["local/etcd", "0.1.0"]]
    assert len(ok(cli, "search", "etcd", namespaced=False).splitlines()) == 2  # the newest only

    out = ok(cli, "install", "etcd@0.1.0", "--instance", "e", *WAIT)

    assert "plan deploy: COMPLETE" in out
    live = sim_kube.get(*OPERATOR_VERSION, "etcd-0.1.0", cli.namespace)
    assert live is not None
    notes = live["metadata"]["annotations"]
    assert notes["kplan.dev/source"] == f"{url}/etcd-0.1.0.tgz"
    assert notes["kplan.dev/digest"].startswith("sha256:") and notes["kplan.dev/digest"] in out
    wide = ok(cli, "get", "instances", "-o", "wide")
    assert notes["kplan.dev/digest"] in wide and notes["kplan.dev/source"] in wide

    out = ok(cli, "upgrade", "--instance", "e", "etcd", *WAIT)

    assert "etcd 0.3.0 was skipped: its upgradableFrom (0.2.x) does not admit 0.1.0" in out
    assert "etcd 0.2.0 from repository local" in out
    assert "upgraded from etcd-0.1.0 to etcd-0.2.0" in out
    instance = sim_kube.get(*INSTANCE, "e", cli.namespace)
    assert instance is not None and instance["spec"]["operatorVersion"]["name"] == "etcd-0.2.0"


def test_a_range_picks_the_newest_match_and_a_repository_prefix_picks_the_repository(
    cli: Cli, repository: tuple[Path, str], sim_kube: Kube, manager: Manager
) -> None:
    _, url = repository
    ok(cli, "repo", "add", "local", url, namespaced=False)

    out = ok(cli, "install", "local/etcd@>=0.1,<0.3", "--instance", "r")

    assert "etcd 0.2.0 from repository local" in out
    instance = sim_kube.get(*INSTANCE, "r", cli.namespace)
    assert instance is not None and instance["spec"]["operatorVersion"]["name"] == "etcd-0.2.0"


def test_a_tampered_archive_is_refused_by_its_digest_and_nothing_is_created(
    cli: Cli, repository: tuple[Path, str], sim_kube: Kube, tmp_path: Path
) -> None:
    folder, url = repository
    ok(cli, "repo", "add", "local", url, namespaced=False)
    other = tmp_path / "other"
    other.mkdir()
    changed = bumped(ETCD_FOLDERS[0], tmp_path / "other", "0.2.0", "0.1.x")
    (changed / "README.md").write_text("changed after the index was written\n")
    (tampered,) = archives(cli, other, changed)
    tampered.replace(folder / "etcd-0.2.0.tgz")

    error = one_sentence_error(cli("install", "etcd@0.2.0", "--instance", "t"))

    assert f"{url}/etcd-0.2.0.tgz has digest sha256:" in error and "it was not used" in error
    assert sim_kube.get(*INSTANCE, "t", cli.namespace) is None
    assert sim_kube.list(*OPERATOR_VERSION, cli.namespace) == []


def test_a_missing_version_and_an_unreachable_repository_are_one_sentence(
    cli: Cli, repository: tuple[Path, str], sim_kube: Kube
) -> None:
    _, url = repository
    ok(cli, "repo", "add", "local", url, namespaced=False)

    missing = one_sentence_error(cli("install", "etcd@9.9.9", "--instance", "m"))
    assert "package etcd has no version 9.9.9; it has 0.3.0, 0.2.0, 0.1.0" in missing
    unreachable = one_sentence_error(cli("repo", "add", "gone", "http://127.0.0.1:9/", namespaced=False))
    assert "repository 'gone' is unreachable" in unreachable
    assert "gone" not in ok(cli, "repo", "list", namespaced=False)
    ok(cli, "repo", "remove", "local", namespaced=False)
    assert "no package repositories are configured" in one_sentence_error(cli("install", "etcd", "--instance", "m"))
    assert sim_kube.get(*INSTANCE, "m", cli.namespace) is None

"""Dependencies of packages fetched from a repository or a registry come from there too, through the real
`kubectl kplan`, with a manager running.

cli-parent's Operator task installs cli-child 0.1.0. Installed from a repository served over HTTP on 127.0.0.1
(`install cli-parent@0.1.0`) or from a real registry (Debian's docker-registry, `install oci://.../cli-parent`),
the child package is fetched from the same repository (checked against the index's digest) or from beside the
parent in the registry (`oci://HOST/FOLDER/cli-child:0.1.0`), never from the local disk, and its OperatorVersion
records that source and digest. A parent whose task wants a child version that is not there is refused in one
sentence, and nothing is created.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cli_harness import INSTANCE, Cli, one_sentence_error
from registry_harness import running_registry
from repo_harness import archives, repo_cli, served

from engine.controller import Manager
from engine.kube import Kube

WAIT = ("--wait", "--timeout", "90s")
OPERATOR_VERSION = ("kplan.dev/v1alpha1", "OperatorVersion")
PACKAGES = Path(__file__).resolve().parent / "packages"
PARENT, CHILD = PACKAGES / "cli-parent", PACKAGES / "cli-child"


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube, tmp_path: Path) -> Cli:
    return repo_cli(sim_kubeconfig, sim_namespace, tmp_path / "home")


def wanting_a_missing_child(into: Path) -> Path:
    """cli-parent 0.2.0, whose Operator task installs cli-child 0.9.0 (which no repository or registry has)."""
    target = into / "cli-parent-0.2.0"
    shutil.copytree(PARENT, target)
    operator = target / "operator.yaml"
    manifest = yaml.safe_load(operator.read_text())
    manifest["operatorVersion"] = "0.2.0"
    next(t for t in manifest["tasks"] if t["kind"] == "Operator")["spec"]["version"] = "0.9.0"
    operator.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return target


def nothing_created(cli: Cli, sim_kube: Kube) -> None:
    assert sim_kube.list(*INSTANCE, cli.namespace) == []
    assert sim_kube.list(*OPERATOR_VERSION, cli.namespace) == []


def child_deployed(cli: Cli, sim_kube: Kube) -> dict[str, str]:
    """The child Instance's deploy plan is COMPLETE; the annotations of its OperatorVersion."""
    child = sim_kube.get(*INSTANCE, "family-child", cli.namespace)
    assert child is not None and child["spec"]["operatorVersion"]["name"] == "cli-child-0.1.0"
    assert child["status"]["plans"]["deploy"]["status"] == "COMPLETE"
    live = sim_kube.get(*OPERATOR_VERSION, "cli-child-0.1.0", cli.namespace)
    assert live is not None
    return dict(live["metadata"]["annotations"])


# --- repositories --------------------------------------------------------------------------------------


@pytest.fixture
def repository(cli: Cli, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A served, indexed folder with cli-parent 0.1.0 and 0.2.0 and cli-child 0.1.0, added as `local`."""
    folder = tmp_path / "repo"
    folder.mkdir()
    archives(cli, folder, PARENT, CHILD, wanting_a_missing_child(tmp_path))
    assert cli("repo", "index", str(folder), namespaced=False).code == 0
    with served(folder) as url:
        assert cli("repo", "add", "local", url, namespaced=False).code == 0
        yield folder, url


def test_the_child_package_comes_from_the_parents_repository(
    cli: Cli, repository: tuple[Path, str], sim_kube: Kube, manager: Manager
) -> None:
    folder, url = repository
    digest = next(e["digest"] for e in yaml.safe_load((folder / "index.yaml").read_text())["entries"]["cli-child"])

    out = cli("install", "cli-parent@0.1.0", "--instance", "family", "-p", "greeting=hi", *WAIT)

    assert out.code == 0, out.text
    assert "operatorversion.kplan.dev/cli-child-0.1.0 created" in out.out
    assert child_deployed(cli, sim_kube) == {"kplan.dev/source": f"{url}/cli-child-0.1.0.tgz",
                                             "kplan.dev/digest": digest}


def test_a_child_version_the_repository_lacks_is_refused_and_nothing_is_created(
    cli: Cli, repository: tuple[Path, str], sim_kube: Kube
) -> None:
    error = one_sentence_error(cli("install", "local/cli-parent@0.2.0", "--instance", "family"))

    assert error == ("error: task child of local/cli-parent@0.2.0 installs local/cli-child@0.9.0, which cannot be "
                     "had: package cli-child has no version 0.9.0; it has 0.1.0")
    nothing_created(cli, sim_kube)


def test_a_tampered_child_archive_is_refused_by_its_digest(
    cli: Cli, repository: tuple[Path, str], sim_kube: Kube
) -> None:
    folder, _ = repository
    archive = folder / "cli-child-0.1.0.tgz"
    archive.write_bytes(archive.read_bytes() + b"\0")

    error = one_sentence_error(cli("install", "cli-parent@0.1.0", "--instance", "family"))

    assert "installs local/cli-child@0.1.0, which cannot be had" in error and "it was not used" in error
    nothing_created(cli, sim_kube)


# --- registries ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_registry(tmp_path_factory.mktemp("registry")) as address:
        yield address


def pushed(cli: Cli, folder: Path, target: str) -> str:
    result = cli("package", "push", str(folder), target, "--plain-http", namespaced=False)
    assert result.code == 0, result.text
    return result.out.split("digest: ")[1].strip()


def test_the_child_package_comes_from_beside_the_parent_in_the_registry(
    cli: Cli, registry: str, sim_kube: Kube, manager: Manager
) -> None:
    child = pushed(cli, CHILD, f"oci://{registry}/family/cli-child")  # tagged 0.1.0, its version
    parent = pushed(cli, PARENT, f"oci://{registry}/family/cli-parent")

    out = cli("install", f"oci://{registry}/family/cli-parent@{parent}", "--plain-http", "--instance", "family",
              "-p", "greeting=hi", *WAIT)

    assert out.code == 0, out.text
    assert child_deployed(cli, sim_kube) == {"kplan.dev/source": f"oci://{registry}/family/cli-child:0.1.0",
                                             "kplan.dev/digest": child}


def test_a_child_version_the_registry_lacks_is_refused_and_nothing_is_created(
    cli: Cli, registry: str, sim_kube: Kube, tmp_path: Path
) -> None:
    pushed(cli, CHILD, f"oci://{registry}/lonely/cli-child")
    pushed(cli, wanting_a_missing_child(tmp_path), f"oci://{registry}/lonely/cli-parent")
    parent = f"oci://{registry}/lonely/cli-parent:0.2.0"

    error = one_sentence_error(cli("install", parent, "--plain-http", "--instance", "family"))

    assert error == (f"error: task child of {parent} installs oci://{registry}/lonely/cli-child:0.9.0, which cannot "
                     f"be had: oci://{registry}/lonely/cli-child:0.9.0 was not found in registry {registry}")
    nothing_created(cli, sim_kube)

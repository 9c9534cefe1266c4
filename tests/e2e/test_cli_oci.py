"""Packages as OCI artifacts in a real registry (Debian's docker-registry, started by the test on 127.0.0.1),
through the real `kubectl kplan`, with a manager running.

`package push` stores etcd as an artifact and prints the manifest digest; `install oci://HOST/REPO:TAG` and
`install oci://HOST/REPO@sha256:...` pull, verify and install it (the OperatorVersion records the reference
and the digest); a digest the registry does not have is refused in one sentence and nothing is created;
the artifact's manifest carries kplan's own media types. A registry that wants basic auth is refused in one
sentence until the Docker config file (DOCKER_CONFIG) holds the credentials, which are then used and printed
nowhere. A registry that wants bearer tokens from Distribution's own token server (a real token flow, started by
the test on 127.0.0.1) is reached with the Docker config's username and password (`auth`) or its
`identitytoken`; wrong ones are refused in one sentence and nothing is created.
"""

from __future__ import annotations

import base64
import json
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import bcrypt
import pytest
from cli_harness import INSTANCE, Cli, one_sentence_error
from registry_harness import TokenService, refresh_token, running_registry, running_token_service
from repo_harness import ETCD_FOLDERS, repo_cli

from engine.controller import Manager
from engine.kube import Kube
from engine.repo import oci

WAIT = ("--wait", "--timeout", "90s")
OPERATOR_VERSION = ("kplan.dev/v1alpha1", "OperatorVersion")


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_registry(tmp_path_factory.mktemp("registry")) as address:
        yield address


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube, tmp_path: Path) -> Cli:
    return repo_cli(sim_kubeconfig, sim_namespace, tmp_path / "home")


def pushed(cli: Cli, registry: str, folder: Path, repository: str, tag: str | None = None) -> str:
    target = f"oci://{registry}/{repository}" + (f":{tag}" if tag else "")
    result = cli("package", "push", str(folder), target, "--plain-http", namespaced=False)
    assert result.code == 0, result.text
    digest = result.out.split("digest: ")[1].strip()
    assert digest.startswith("sha256:") and len(digest) == 71
    return digest


def test_push_then_install_by_tag_and_by_digest(
    cli: Cli, registry: str, sim_kube: Kube, manager: Manager
) -> None:
    digest = pushed(cli, registry, ETCD_FOLDERS[1], "kplan/etcd")  # the tag defaults to the version: 0.1.0
    newer = pushed(cli, registry, ETCD_FOLDERS[0], "kplan/etcd", "0.2.0")

    out = cli("install", f"oci://{registry}/kplan/etcd:0.1.0", "--plain-http", "--instance", "bytag", *WAIT)

    assert out.code == 0, out.text
    assert f"pulled oci://{registry}/kplan/etcd:0.1.0 ({digest})" in out.out and "plan deploy: COMPLETE" in out.out
    notes = sim_kube.get(*OPERATOR_VERSION, "etcd-0.1.0", cli.namespace)["metadata"]["annotations"]  # type: ignore[index]
    assert notes == {"kplan.dev/source": f"oci://{registry}/kplan/etcd:0.1.0", "kplan.dev/digest": digest}

    out = cli("install", f"oci://{registry}/kplan/etcd@{newer}", "--plain-http", "--instance", "bydigest")

    assert out.code == 0, out.text
    instance = sim_kube.get(*INSTANCE, "bydigest", cli.namespace)
    assert instance is not None and instance["spec"]["operatorVersion"]["name"] == "etcd-0.2.0"


def test_a_wrong_digest_is_refused_and_nothing_is_created(cli: Cli, registry: str, sim_kube: Kube) -> None:
    digest = pushed(cli, registry, ETCD_FOLDERS[1], "kplan/wrong")
    wrong = "sha256:" + ("0" if digest[-1] != "0" else "1") * 64

    error = one_sentence_error(cli("install", f"oci://{registry}/kplan/wrong@{wrong}", "--plain-http",
                                   "--instance", "w"))

    assert f"oci://{registry}/kplan/wrong@{wrong} was not found in registry {registry}" in error
    assert sim_kube.get(*INSTANCE, "w", cli.namespace) is None
    assert sim_kube.list(*OPERATOR_VERSION, cli.namespace) == []
    assert "needs --plain-http" in one_sentence_error(cli("install", f"oci://{registry}/kplan/wrong:0.1.0"))


def test_the_artifact_carries_kplans_media_types(cli: Cli, registry: str) -> None:
    digest = pushed(cli, registry, ETCD_FOLDERS[1], "kplan/types")
    request = urllib.request.Request(f"http://{registry}/v2/kplan/types/manifests/{digest}",
                                     headers={"Accept": oci.MANIFEST_MEDIA_TYPE})
    with urllib.request.urlopen(request, timeout=30) as answer:
        manifest = json.loads(answer.read())

    assert manifest["mediaType"] == oci.MANIFEST_MEDIA_TYPE
    assert manifest["config"]["mediaType"] == oci.CONFIG_MEDIA_TYPE
    assert [(la["mediaType"], la["annotations"]["org.opencontainers.image.title"]) for la in manifest["layers"]] == [
        (oci.CONTENT_MEDIA_TYPE, "etcd-0.1.0.tgz")]


@pytest.fixture(scope="module")
def locked_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A registry that wants basic auth: user `pusher`, password PASSWORD, in an htpasswd file with a bcrypt hash
    of the lowest cost (the registry checks it on every request)."""
    folder = tmp_path_factory.mktemp("locked")
    htpasswd = folder / "htpasswd"
    htpasswd.write_text(f"pusher:{bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()}\n")
    with running_registry(folder, htpasswd) as address:
        yield address


PASSWORD = "Registry-pw-6c2f"


def test_credentials_come_from_the_docker_config_file(cli: Cli, locked_registry: str, sim_kube: Kube) -> None:
    target = f"oci://{locked_registry}/kplan/etcd"
    refused = one_sentence_error(cli("package", "push", str(ETCD_FOLDERS[1]), target, "--plain-http",
                                     namespaced=False))
    assert f"registry {locked_registry} wants a login" in refused and "docker login" in refused

    assert cli.home is not None
    config = cli.home / "docker" / "config.json"
    config.parent.mkdir(parents=True)
    auth = base64.b64encode(f"pusher:{PASSWORD}".encode()).decode()
    config.write_text(json.dumps({"auths": {locked_registry: {"auth": auth}}}))
    digest = pushed(cli, locked_registry, ETCD_FOLDERS[1], "kplan/etcd")

    out = cli("install", f"{target}@{digest}", "--plain-http", "--instance", "locked")

    assert out.code == 0, out.text
    assert all(PASSWORD not in text and auth not in text for text in cli.outputs)
    assert sim_kube.get(*INSTANCE, "locked", cli.namespace) is not None


# --- bearer tokens -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenRegistry:
    address: str
    service: TokenService


@pytest.fixture(scope="module")
def token_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TokenRegistry]:
    """A registry that sends clients to Distribution's token server, which knows user `pusher` (PASSWORD) and
    grants it the repositories under `pusher/`."""
    folder = tmp_path_factory.mktemp("token")
    htpasswd = folder / "htpasswd"
    htpasswd.write_text(f"pusher:{bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()}\n")
    with running_token_service(folder, htpasswd) as service, running_registry(folder, token=service) as address:
        yield TokenRegistry(address, service)


def docker_config(cli: Cli, registry: str, entry: dict[str, str]) -> None:
    assert cli.home is not None
    config = cli.home / "docker" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"auths": {registry: entry}}))


def refused_and_nothing_created(cli: Cli, sim_kube: Kube, target: str) -> str:
    error = one_sentence_error(cli("install", target, "--plain-http", "--instance", "refused"))
    assert sim_kube.get(*INSTANCE, "refused", cli.namespace) is None
    assert sim_kube.list(*OPERATOR_VERSION, cli.namespace) == []
    return error


def test_bearer_tokens_for_the_username_and_password(cli: Cli, token_registry: TokenRegistry, sim_kube: Kube) -> None:
    registry = token_registry.address
    target = f"oci://{registry}/pusher/etcd"
    refused = one_sentence_error(cli("package", "push", str(ETCD_FOLDERS[1]), target, "--plain-http",
                                     namespaced=False))
    assert f"registry {registry} wants a login" in refused and "docker login" in refused

    auth = base64.b64encode(f"pusher:{PASSWORD}".encode()).decode()
    docker_config(cli, registry, {"auth": auth})
    digest = pushed(cli, registry, ETCD_FOLDERS[1], "pusher/etcd")
    wrong = base64.b64encode(b"pusher:not-the-password").decode()
    docker_config(cli, registry, {"auth": wrong})

    error = refused_and_nothing_created(cli, sim_kube, f"{target}@{digest}")

    assert error == (f"error: the token service of registry {registry} ({token_registry.service.realm}) refused the "
                     f"username and password that {cli.home / 'docker' / 'config.json'} has for it; log in again "
                     f"with `docker login {registry}`")
    docker_config(cli, registry, {"auth": auth})
    out = cli("install", f"{target}:0.1.0", "--plain-http", "--instance", "tokens")
    assert out.code == 0, out.text
    assert f"pulled {target}:0.1.0 ({digest})" in out.out
    assert sim_kube.get(*INSTANCE, "tokens", cli.namespace) is not None
    assert all(PASSWORD not in text and auth not in text for text in cli.outputs)


def test_bearer_tokens_for_an_identity_token(cli: Cli, token_registry: TokenRegistry, sim_kube: Kube) -> None:
    registry = token_registry.address
    identity = refresh_token(token_registry.service, "pusher", PASSWORD)  # as `docker login` gets and keeps it
    docker_config(cli, registry, {"auth": base64.b64encode(b"<token>:").decode(), "identitytoken": identity})
    target = f"oci://{registry}/pusher/identity"
    digest = pushed(cli, registry, ETCD_FOLDERS[0], "pusher/identity")
    docker_config(cli, registry, {"identitytoken": "not-an-identity-token"})

    error = refused_and_nothing_created(cli, sim_kube, f"{target}@{digest}")

    assert f"refused the identity token that {cli.home / 'docker' / 'config.json'} has for it" in error
    docker_config(cli, registry, {"identitytoken": identity})
    out = cli("install", f"{target}@{digest}", "--plain-http", "--instance", "identity")
    assert out.code == 0, out.text
    notes = sim_kube.get(*OPERATOR_VERSION, "etcd-0.2.0", cli.namespace)["metadata"]["annotations"]  # type: ignore[index]
    assert notes == {"kplan.dev/source": f"{target}@{digest}", "kplan.dev/digest": digest}
    assert all(identity not in text for text in cli.outputs)


def test_a_token_does_not_open_another_users_repositories(
    cli: Cli, token_registry: TokenRegistry, sim_kube: Kube
) -> None:
    registry = token_registry.address
    docker_config(cli, registry, {"auth": base64.b64encode(f"pusher:{PASSWORD}".encode()).decode()})

    error = one_sentence_error(cli("package", "push", str(ETCD_FOLDERS[1]), f"oci://{registry}/someone/etcd",
                                   "--plain-http", namespaced=False))

    assert error == (f"error: the credentials that {cli.home / 'docker' / 'config.json'} has for registry {registry} "
                     "do not grant repository:someone/etcd:pull (its token service left that out of the token)")
    assert sim_kube.list(*OPERATOR_VERSION, cli.namespace) == []

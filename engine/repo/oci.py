"""Packages as OCI artifacts (the way Helm ≥ 3.8 stores charts): push and pull through `oras`.

An artifact is an OCI image manifest whose config blob (CONFIG_MEDIA_TYPE, the package's name, version and
description as JSON) marks it as a kplan package, with one layer: the package's `.tgz` (CONTENT_MEDIA_TYPE).
Pulling checks the manifest against the digest asked for and the layer against the manifest, before the
archive is read. Credentials come from the Docker config file (`$DOCKER_CONFIG/config.json`, else
~/.docker/config.json) as `docker login`, `oras login` and `helm registry login` write it: basic auth
for registries that ask for it, bearer tokens from the registry's token service for those that ask for that
(traded for the username and password or the `identitytoken`, see engine.repo.oci_auth).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from engine.errors import PermanentError, TransientError
from engine.model import Package
from engine.package import files
from engine.repo.references import OciRef

__all__ = ["CONFIG_MEDIA_TYPE", "CONTENT_MEDIA_TYPE", "MANIFEST_MEDIA_TYPE", "Pulled", "pull", "push"]

MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_MEDIA_TYPE = "application/vnd.kplan.package.config.v1+json"
CONTENT_MEDIA_TYPE = "application/vnd.kplan.package.content.v1.tar+gzip"
TITLE = "org.opencontainers.image.title"
PROBE_TIMEOUT = 15.0
MAX_MANIFEST = 4 * 1024 * 1024

logging.getLogger("oras").setLevel(logging.WARNING)


@dataclass(frozen=True)
class Pulled:
    data: bytes
    manifest_digest: str


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def push(pkg: Package, archive: bytes, ref: OciRef, *, plain_http: bool = False) -> str:
    """Push the package's archive as an artifact at `ref` (a tag); the manifest's digest."""
    registry, container = connect(ref, plain_http)
    config = json.dumps({"name": pkg.name, "version": pkg.operator_version, "appVersion": pkg.app_version,
                         "description": pkg.description}, sort_keys=True).encode()
    layer = blob(CONTENT_MEDIA_TYPE, archive, {TITLE: f"{pkg.version_name}.tgz"})
    manifest: dict[str, Any] = {
        "schemaVersion": 2, "mediaType": MANIFEST_MEDIA_TYPE, "config": blob(CONFIG_MEDIA_TYPE, config),
        "layers": [layer],
        "annotations": {"org.opencontainers.image.title": pkg.name,
                        "org.opencontainers.image.version": pkg.operator_version},
    }
    with tempfile.TemporaryDirectory() as scratch:
        for data, descriptor in ((archive, layer), (config, manifest["config"])):
            path = Path(scratch) / descriptor["digest"].replace(":", "-")
            path.write_bytes(data)
            answered(registry.upload_blob(str(path), container, descriptor), ref, "upload a blob to")
    body = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    url = f"{registry.prefix}://{container.manifest_url()}"
    answered(registry.do_request(url, "PUT", data=body, headers={"Content-Type": MANIFEST_MEDIA_TYPE}), ref,
             "push the manifest to")
    return digest_of(body)


def pull(ref: OciRef, *, plain_http: bool = False) -> Pulled:
    """The archive of the artifact at `ref`, its manifest checked against a digest reference and its layer
    against the manifest."""
    registry, container = connect(ref, plain_http)
    url = f"{registry.prefix}://{container.manifest_url()}"
    response = answered(registry.do_request(url, "GET", headers={"Accept": MANIFEST_MEDIA_TYPE}), ref,
                        "read the manifest of")
    body = response.content[: MAX_MANIFEST + 1]
    digest = digest_of(body)
    if ref.is_digest and digest != ref.reference:
        raise PermanentError(f"the registry answered {ref} with a manifest of digest {digest}; it was not used")
    layer = content_layer(ref, body)
    data = answered(registry.get_blob(container, str(layer["digest"])), ref, "download the package of").content
    if len(data) > files.MAX_BYTES:
        raise PermanentError(f"the package at {ref} is larger than {files.MAX_BYTES // 1024} KiB")
    if digest_of(data) != layer["digest"]:
        raise PermanentError(f"the package layer of {ref} has digest {digest_of(data)}, but its manifest says "
                             f"{layer['digest']}; it was not used")
    return Pulled(data, digest)


def content_layer(ref: OciRef, body: bytes) -> dict[str, Any]:
    try:
        manifest = json.loads(body)
    except ValueError:
        raise PermanentError(f"the manifest of {ref} is not JSON") from None
    config = (manifest.get("config") or {}) if isinstance(manifest, dict) else {}
    layers = [la for la in manifest.get("layers") or [] if la.get("mediaType") == CONTENT_MEDIA_TYPE]
    if config.get("mediaType") != CONFIG_MEDIA_TYPE or len(layers) != 1:
        raise PermanentError(f"{ref} is not a kplan package (its config is {config.get('mediaType')!r}, not "
                             f"{CONFIG_MEDIA_TYPE})")
    return dict(layers[0])


def blob(media_type: str, data: bytes, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"mediaType": media_type, "digest": digest_of(data), "size": len(data)}
    return {**found, "annotations": annotations} if annotations else found


# --- the connection --------------------------------------------------------------------------------


def connect(ref: OciRef, plain_http: bool) -> tuple[Any, Any]:
    """An oras Registry for `ref`'s registry with the credentials of the Docker config loaded, and the container.

    The registry is asked first (GET /v2/) whether it answers at all, and which authentication it wants:
    `Basic` selects oras's basic backend, anything else bearer tokens (engine.repo.oci_auth).
    """
    import oras.provider

    from engine.repo import oci_auth

    scheme = "http" if plain_http else "https"
    challenge = probe(f"{scheme}://{ref.registry}/v2/", ref, plain_http)
    backend = "basic" if challenge.lower().startswith("basic") else "token"
    registry = oras.provider.Registry(hostname=ref.registry, insecure=plain_http, auth_backend=backend)
    container = registry.get_container(ref.target)
    config = docker_config()
    if backend == "token":
        registry.auth = oci_auth.BearerAuth(ref.registry, config, registry.auth)
    registry.auth.load_configs(container, configs=[str(config)] if config.is_file() else None)
    if challenge and not getattr(registry.auth, "_basic_auth", None) and backend == "basic":
        raise PermanentError(f"registry {ref.registry} wants a login and {config} has no credentials for it; "
                             f"log in with `docker login {ref.registry}` (or `oras login`)")
    return registry, container


def probe(url: str, ref: OciRef, plain_http: bool) -> str:
    """The registry's authentication challenge ('' when it wants none); one sentence when it does not answer."""
    try:
        answer = requests.get(url, timeout=PROBE_TIMEOUT)
    except requests.exceptions.SSLError as err:
        hint = "" if plain_http else " (a registry without TLS needs --plain-http)"
        raise PermanentError(f"cannot talk TLS to registry {ref.registry}{hint}: {first_line(err)}") from None
    except requests.RequestException as err:
        hint = "" if plain_http else " (a registry without TLS needs --plain-http)"
        raise TransientError(f"registry {ref.registry} is unreachable{hint}: {first_line(err)}") from None
    return str(answer.headers.get("WWW-Authenticate") or "") if answer.status_code == 401 else ""


def docker_config() -> Path:
    folder = os.environ.get("DOCKER_CONFIG")
    return Path(folder) / "config.json" if folder else Path.home() / ".docker" / "config.json"


def answered(response: requests.Response, ref: OciRef, what: str) -> requests.Response:
    """`response` when it succeeded, else one sentence with the registry's own reason."""
    if response.status_code < 300:
        return response
    if response.status_code in (401, 403):
        raise PermanentError(f"registry {ref.registry} refused to let us {what} {ref} ({response.status_code}): "
                             "check the credentials in the Docker config file")
    if response.status_code == 404:
        raise PermanentError(f"{ref} was not found in registry {ref.registry}")
    raise PermanentError(f"registry {ref.registry} could not {what} {ref}: {response.status_code} {reason(response)}")


def reason(response: requests.Response) -> str:
    try:
        errors = response.json().get("errors") or []
        return "; ".join(str(e.get("message") or e.get("code")) for e in errors) or response.reason
    except ValueError:
        return str(response.reason)


def first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__

"""A real OCI registry for the e2e tests: Debian's `docker-registry` (the CNCF Distribution registry), and the
token server of the same project for bearer-token authentication.

`running_registry(folder)` starts the registry on 127.0.0.1 with a configuration and storage in `folder`, and
waits until its log says it listens. When the program is missing, it is installed first with apt-get (CI runs
as root on a clean machine).

`running_token_service(folder, htpasswd)` starts Distribution's contrib/token-server (built from the pinned Go
module by tools/token-server/build.sh, which `make test` runs; called here too when the binary is missing) on
127.0.0.1, signing with a fresh EC key whose certificate the registry trusts; `running_registry(folder,
token=service)` then sends clients there for a token. The token server grants a user the repositories under
`USER/` only.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import queue
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

PROGRAM = "docker-registry"
START_TIMEOUT = 60.0
INSTALL_TIMEOUT = 600.0
TOKEN_SERVER_VERSION = "v2.8.3"
TOKEN_SERVER_BUILD = Path(__file__).resolve().parents[2] / "tools" / "token-server" / "build.sh"
BUILD_TIMEOUT = 1200.0
SERVICE = "kplan-tests"
ISSUER = "kplan-tests-issuer"


@dataclass(frozen=True)
class TokenService:
    """A running token server: its realm URL, and the certificate the registry checks its tokens with."""

    realm: str
    certificate: Path


def ensure_installed() -> str:
    """The path of docker-registry, installed with apt-get when it is not there yet."""
    found = shutil.which(PROGRAM)
    if found:
        return found
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", PROGRAM]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False,
                              env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
        assert done.returncode == 0, f"{' '.join(command)} failed: {done.stderr[-2000:]}"
    found = shutil.which(PROGRAM)
    assert found, f"{PROGRAM} is not on PATH after apt-get install"
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def token_server() -> str:
    """The path of the token server, built by tools/token-server/build.sh when it is not there yet."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = Path(os.environ.get("KPLAN_TOKEN_SERVER_DIR") or cache / "kplan" / f"token-server-{TOKEN_SERVER_VERSION}")
    program = folder / "token-server"
    if not program.is_file():
        done = subprocess.run([str(TOKEN_SERVER_BUILD)], capture_output=True, text=True, timeout=BUILD_TIMEOUT,
                              check=False)
        assert done.returncode == 0, f"{TOKEN_SERVER_BUILD} failed: {done.stderr[-2000:]}"
    return str(program)


def signing_key(folder: Path) -> tuple[Path, Path]:
    """A fresh EC P-256 key for the token server and a self-signed certificate of it for the registry."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ISSUER)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    key_path, cert_path = folder / "token-key.pem", folder / "token-cert.pem"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                           serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path


@contextlib.contextmanager
def running_token_service(folder: Path, htpasswd: Path) -> Iterator[TokenService]:
    """Distribution's token server on 127.0.0.1, checking users against `htpasswd`."""
    program = token_server()
    key, cert = signing_key(folder)
    address = f"127.0.0.1:{free_port()}"
    realm = f"http://{address}/token/"
    command = [program, "-addr", address, "-issuer", ISSUER, "-key", str(key), "-passwd", str(htpasswd),
               "-realm", SERVICE]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_answering(process, realm)
        yield TokenService(realm, cert)
    finally:
        stop(process)


def wait_answering(process: subprocess.Popen[bytes], url: str) -> None:
    """Wait until `url` answers at all (the token server logs nothing when it starts listening)."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        assert process.poll() is None, f"the token server exited with {process.returncode}"
        try:
            requests.get(url, timeout=5)
            return
        except requests.ConnectionError:
            assert time.monotonic() < deadline, f"the token server did not answer at {url} within {START_TIMEOUT}s"
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(0.05)  # exits early if the server dies


def refresh_token(service: TokenService, user: str, password: str) -> str:
    """An identity token, asked for the way `docker login` does (`offline_token=true`)."""
    answer = requests.get(service.realm, params={"service": SERVICE, "offline_token": "true", "client_id": "docker"},
                          auth=(user, password), timeout=30)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["refresh_token"])


@contextlib.contextmanager
def running_registry(folder: Path, htpasswd: Path | None = None, token: TokenService | None = None) -> Iterator[str]:
    """A registry on 127.0.0.1 storing in `folder` (basic auth from `htpasswd`, or bearer tokens from `token`,
    when given); its HOST:PORT."""
    program = ensure_installed()
    address = f"127.0.0.1:{free_port()}"
    config = {
        "version": 0.1,
        "log": {"level": "info", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(folder / "storage")}, "delete": {"enabled": True}},
        "http": {"addr": address},
    }
    if htpasswd is not None:
        config["auth"] = {"htpasswd": {"realm": "kplan-tests", "path": str(htpasswd)}}
    if token is not None:
        config["auth"] = {"token": {"realm": token.realm, "service": SERVICE, "issuer": ISSUER,
                                    "rootcertbundle": str(token.certificate)}}
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(config))
    process = subprocess.Popen([program, "serve", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    try:
        wait_listening(process, address)
        yield address
    finally:
        stop(process)


def stop(process: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(30)


def wait_listening(process: subprocess.Popen[str], address: str) -> None:
    """Read the registry's log until it says it listens on `address` (it keeps being drained afterwards)."""
    lines: queue.Queue[str | None] = queue.Queue()
    assert process.stderr is not None
    stderr = process.stderr

    def drain() -> None:
        for line in stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, name="registry-log", daemon=True).start()
    seen: list[str] = []
    while True:
        try:
            line = lines.get(timeout=START_TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"{PROGRAM} did not start within {START_TIMEOUT}s: {''.join(seen)[-2000:]}") from None
        if line is None:
            raise AssertionError(f"{PROGRAM} exited: {''.join(seen)[-2000:]}")
        seen.append(line)
        if "listening on" in line and address in line:
            return

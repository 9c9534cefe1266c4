"""A real OCI registry for the e2e tests: Debian's `docker-registry` (the CNCF Distribution registry).

`running_registry(folder)` starts it on 127.0.0.1 with a configuration and storage in `folder`, and waits
until its log says it listens. When the program is missing, it is installed first with apt-get (CI runs
as root on a clean machine): this fixture is the test setup's only prerequisite for OCI tests.
"""

from __future__ import annotations

import contextlib
import queue
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import yaml

PROGRAM = "docker-registry"
START_TIMEOUT = 60.0
INSTALL_TIMEOUT = 600.0


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


@contextlib.contextmanager
def running_registry(folder: Path, htpasswd: Path | None = None) -> Iterator[str]:
    """A registry on 127.0.0.1 storing in `folder` (basic auth from `htpasswd` when given); its HOST:PORT."""
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
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(config))
    process = subprocess.Popen([program, "serve", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    try:
        wait_listening(process, address)
        yield address
    finally:
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
